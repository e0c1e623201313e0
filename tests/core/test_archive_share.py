"""The size cap's fair share (issue 46): which agents ``maintain`` may archive for the cap."""

from __future__ import annotations

from hippo.core.curation.archive import quiet_agents
from hippo.core.ports import PruneCandidate


def memories(agent: str, count: int, size: int = 1_000) -> list[PruneCandidate]:
    return [PruneCandidate(agent, f"{agent}-{i}", 0, 0.0, size) for i in range(count)]


def test_one_agent_or_agents_of_one_size_are_all_over_their_share_when_the_database_is_over_the_cap():
    assert quiet_agents(memories("alice", 50), {}, used=80_000, cap=60_000) == set()
    both = memories("alice", 50) + memories("bob", 50)
    assert quiet_agents(both, {}, used=160_000, cap=150_000) == set()


def test_an_agent_beside_a_flood_is_within_its_share_and_the_flood_is_not():
    few = memories("quiet", 15) + memories("noisy", 400)
    assert quiet_agents(few, {}, used=600_000, cap=200_000) == {"quiet"}


def test_the_archive_counts_toward_its_agents_share():
    """Once the flood is archived its bytes are still the flooding agent's: the next run spares
    the quiet agent as the first did, though the flood has no live memory left."""
    assert quiet_agents(memories("quiet", 15), {"noisy": 150_000}, used=300_000, cap=200_000) == {"quiet"}
    # An agent with nothing archived and nothing live holds no share of the cap.
    assert quiet_agents(memories("quiet", 15), {}, used=300_000, cap=200_000) == set()


def test_at_its_share_an_agent_is_quiet_and_one_byte_more_is_not():
    # used equal to the rows: alice's 40,000 of 100,000 against a share of 80,000 / 2.
    rows = memories("alice", 40) + memories("bob", 60)
    assert quiet_agents(rows, {}, used=100_000, cap=80_000) == {"alice"}
    assert quiet_agents(rows, {}, used=100_000, cap=79_999) == set()
