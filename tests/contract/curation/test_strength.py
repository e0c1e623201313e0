"""Seed 000's strength model: the formulas, and the events that change strength through the Memory API."""

from __future__ import annotations

import math
from datetime import datetime, timedelta

import pytest
from support import START, sql

from hippo import MemoryInput
from hippo.clock import to_iso
from hippo.core.ports import ChunkFilter, SearchQuery
from hippo.core.strength import (
    HIDDEN_BELOW,
    ScoreWeights,
    decay_resistance,
    effective_strength,
    final_score,
    half_life_hours,
    recency_score,
    reinforced_intensity,
    retrieval_boost,
)

# Seed 000's table: access count -> (decay resistance, half-life in days).
HALF_LIFE_TABLE = [(0, 1.0, 29), (5, 1.54, 44), (20, 1.91, 55), (100, 2.38, 69)]


def row(path, chunk_id):
    """The strength columns of one chunk, read on a separate connection."""
    rows = sql(
        path,
        "SELECT running_intensity, encounter_count, access_count, last_accessed_at, created_at "
        "FROM chunks WHERE id = ?",
        (chunk_id,),
    )
    assert len(rows) == 1
    return tuple(to_iso(v) if isinstance(v, datetime) else v for v in rows[0])  # PostgreSQL: timestamptz


# -- the formulas ------------------------------------------------------------


@pytest.mark.parametrize(("access_count", "resistance", "days"), HALF_LIFE_TABLE)
def test_half_life_table(access_count, resistance, days):
    assert decay_resistance(access_count) == pytest.approx(resistance, abs=0.005)
    assert half_life_hours(access_count) / 24 == pytest.approx(days, abs=0.5)


@pytest.mark.parametrize(("access_count", "resistance", "days"), HALF_LIFE_TABLE)
def test_strength_halves_after_one_half_life_of_clock_time(clock, access_count, resistance, days):
    last_access = clock()
    assert effective_strength(0.8, access_count, last_access, clock()) == pytest.approx(0.8)
    clock.advance(hours=half_life_hours(access_count))
    assert effective_strength(0.8, access_count, last_access, clock()) == pytest.approx(0.4, rel=1e-9)
    clock.advance(hours=half_life_hours(access_count))
    assert effective_strength(0.8, access_count, last_access, clock()) == pytest.approx(0.2, rel=1e-9)


@pytest.mark.parametrize(("access_count", "resistance", "days"), HALF_LIFE_TABLE)
def test_recalled_strength_halves_after_the_table_half_life(mem, db, clock, access_count, resistance, days):
    stored = mem.store_memory("The staging cluster runs on three small nodes", intensity=0.8)
    sql(db, "UPDATE chunks SET access_count = ? WHERE id = ?", (access_count, stored.id))
    [hit] = mem.recall_memories("staging cluster nodes", touch=False)
    assert hit.effective_strength == pytest.approx(0.8)

    clock.advance(days=days)  # the table's rounded half-life
    [hit] = mem.recall_memories("staging cluster nodes", touch=False)
    assert hit.effective_strength == pytest.approx(0.4, abs=0.01)


def test_decay_is_the_seed_formula_and_never_negative_time(clock):
    t0 = clock()
    hours = 500.0
    expected = 0.6 * math.exp(-0.001 / decay_resistance(3) * hours)
    assert effective_strength(0.6, 3, t0, t0 + timedelta(hours=hours)) == pytest.approx(expected)
    # A last access "in the future" (clock skew) does not make a memory stronger than its intensity.
    assert effective_strength(0.6, 3, t0 + timedelta(days=1), t0) == pytest.approx(0.6)


def test_more_accesses_decay_slower(clock):
    t0 = clock()
    later = t0 + timedelta(days=60)
    strengths = [effective_strength(0.5, n, t0, later) for n in (0, 1, 5, 20, 100)]
    assert strengths == sorted(strengths)
    assert len(set(strengths)) == len(strengths)


def test_moving_average():
    assert reinforced_intensity(0.5, 1, 0.9) == pytest.approx(0.7)
    assert reinforced_intensity(0.7, 2, 0.1) == pytest.approx(0.5)
    # Later readings matter less: the same reading moves a long history very little.
    assert reinforced_intensity(0.2, 19, 1.0) == pytest.approx(0.24)


def test_retrieval_boost_adds_002_and_clamps_at_one():
    assert retrieval_boost(0.5) == pytest.approx(0.52)
    assert retrieval_boost(0.99) == 1.0
    assert retrieval_boost(1.0) == 1.0


@pytest.mark.parametrize(("days", "score"), [(0, 1.0), (3, 0.97), (30, 0.74), (365, 0.03)])
def test_recency_score(days, score):
    created = START
    assert recency_score(created, created + timedelta(days=days)) == pytest.approx(score, abs=0.005)


def test_recency_decreases_monotonically():
    scores = [recency_score(START, START + timedelta(days=d)) for d in range(0, 400, 7)]
    assert all(a > b for a, b in zip(scores, scores[1:]))
    assert all(0.0 <= s <= 1.0 for s in scores)


def test_final_score_weights():
    assert ScoreWeights() == ScoreWeights(0.6, 0.3, 0.1)
    assert final_score(1.0, 0.0, 0.0) == pytest.approx(0.6)
    assert final_score(1.0, 1.0, 0.0) == pytest.approx(0.9)
    assert final_score(1.0, 1.0, 1.0) == pytest.approx(1.0)
    assert final_score(0.5, 0.4, 0.9) == pytest.approx(0.5 * (0.6 + 0.3 * 0.4 + 0.1 * 0.9))


def test_strength_and_recency_never_lift_a_non_match():
    assert final_score(0.0, 1.0, 1.0) == 0.0
    # A fresh, strong memory matching 0.4 loses to a faded one matching 0.7, and wins a near tie.
    assert final_score(0.4, 1.0, 1.0) < final_score(0.7, HIDDEN_BELOW, 0.0)
    assert final_score(0.55, 1.0, 1.0) > final_score(0.6, 0.2, 0.5)


# -- events through the Memory API --------------------------------------------


def test_creation_event(mem, db, clock):
    clock.advance(days=2)
    result = mem.store_memory("We picked SQLite over PostgreSQL for the prototype", intensity=0.7)
    assert result.action == "inserted"
    chunk = result.chunk
    assert (chunk.running_intensity, chunk.encounter_count, chunk.access_count) == (0.7, 1, 0)
    assert chunk.created_at == chunk.last_accessed_at == clock()
    assert chunk.kind == "memory"
    assert row(db, result.id) == (0.7, 1, 0, to_iso(clock()), to_iso(clock()))


def test_default_intensity_is_one_half(mem):
    assert mem.store_memory("A plain observation").chunk.running_intensity == 0.5


def test_retrieval_event_updates_every_hit(make_mem, db, clock):
    mem = make_mem("alice", retrieval_delay=0)  # the rows are read from the file right after each recall
    a = mem.store_memory("The deploy pipeline uses GitHub Actions", intensity=0.5)
    b = mem.store_memory("The deploy pipeline needs a manual approval step", intensity=0.99)
    unrelated = mem.store_memory("Bob prefers window seats on flights", intensity=0.5)
    created = to_iso(clock())
    clock.advance(days=5)

    recall = mem.recall_memories("deploy pipeline", limit=2)
    assert {h.id for h in recall} == {a.id, b.id}  # the unrelated memory is not a hit, so not retrieved
    now = to_iso(clock())
    assert row(db, a.id) == (pytest.approx(0.52), 1, 1, now, created)
    assert row(db, b.id) == (1.0, 1, 1, now, created)  # clamped at 1.0
    assert row(db, unrelated.id) == (0.5, 1, 0, created, created)
    # The hits carry the state after the retrieval event.
    by_id = {h.id: h.chunk for h in recall}
    assert by_id[a.id].access_count == 1
    assert by_id[a.id].last_accessed_at == clock()
    assert by_id[a.id].running_intensity == pytest.approx(0.52)

    clock.advance(hours=1)
    mem.recall_memories("deploy pipeline", limit=2)
    assert row(db, a.id) == (pytest.approx(0.54), 1, 2, to_iso(clock()), created)


def test_recall_without_touch_changes_nothing(mem, db, clock):
    stored = mem.store_memory("The deploy pipeline uses GitHub Actions", intensity=0.5)
    before = sql(db, "SELECT * FROM chunks")
    clock.advance(days=3)
    recall = mem.recall_memories("deploy pipeline", touch=False)
    assert [h.id for h in recall] == [stored.id]
    assert recall[0].chunk.access_count == 0
    assert sql(db, "SELECT * FROM chunks") == before


def test_reinforcement_event_via_verbatim_duplicate(mem, db, clock):
    text = "I never want to use Redux again"
    first = mem.store_memory(text, intensity=0.5)
    created = to_iso(clock())
    clock.advance(days=1)

    second = mem.store_memory(text, intensity=0.9)
    assert second.action == "strengthened"
    assert second.id == first.id
    assert (second.chunk.encounter_count, second.chunk.access_count) == (2, 1)
    assert second.chunk.running_intensity == pytest.approx(0.7)
    assert second.chunk.last_accessed_at == clock()
    assert row(db, first.id) == (pytest.approx(0.7), 2, 1, to_iso(clock()), created)

    clock.advance(days=1)
    third = mem.store_memory(text, intensity=0.1)
    assert third.chunk.running_intensity == pytest.approx(0.5)  # (0.7 × 2 + 0.1) / 3
    assert row(db, first.id) == (pytest.approx(0.5), 3, 2, to_iso(clock()), created)
    assert sql(db, "SELECT count(*) FROM chunks")[0][0] == 1


def test_decayed_memory_is_hidden_but_a_fresh_one_is_returned(mem, clock):
    old = mem.store_memory("The office coffee machine is broken again", intensity=0.1)
    clock.advance(days=100)
    fresh = mem.store_memory("The office coffee machine was replaced", intensity=0.5)

    recall = mem.recall_memories("office coffee machine")
    assert [h.id for h in recall] == [fresh.id]
    # Hidden by decay, not deleted: the chunk is still there.
    chunk = mem.get_memory(old.id)
    assert effective_strength(chunk.running_intensity, chunk.access_count, chunk.last_accessed_at, clock()) < HIDDEN_BELOW
    assert chunk.access_count == 0  # not returned, so not retrieved


def test_hidden_threshold_is_strength_005(mem, clock):
    """Just above 0.05 is returned, just below is not."""
    stored = mem.store_memory("Ferns need water every Tuesday", intensity=0.1)
    # 0.1 × e^(−0.001 h) = 0.05 at h = 1000 ln 2.
    clock.advance(hours=1000 * math.log(2) - 1)
    assert [h.id for h in mem.recall_memories("ferns water", touch=False)] == [stored.id]
    clock.advance(hours=2)
    assert len(mem.recall_memories("ferns water", touch=False)) == 0


@pytest.mark.embedded_only('reads the store behind the memory')
def test_superseded_chunk_never_recalled(mem, db):
    old = mem.store_memory("The user lives in Berlin")
    new = mem.store_memory("The user lives in Munich")
    # Load this Memory's in-memory vector matrix before the other connection writes.
    assert {h.id for h in mem.recall_memories("where does the user live", touch=False)} == {old.id, new.id}

    sql(db, "UPDATE chunks SET superseded_by = ? WHERE id = ?", (new.id, old.id))

    for query in ("where does the user live", "Berlin", "The user lives in Berlin"):
        assert old.id not in {h.id for h in mem.recall_memories(query)}, query
    for kind in ("memory", ["fact", "memory"]):
        assert old.id not in {h.id for h in mem.recall_memories("Berlin", kind=kind)}
    # The vector matrix itself was refreshed from the file, not just filtered afterwards.
    vector = mem.embedding.query("The user lives in Berlin")
    found = set(mem.store.search("alice", SearchQuery(vector, (), ChunkFilter(), 10)).similarity)
    assert old.id not in found and new.id in found
    # A recall did not count as a retrieval of the superseded chunk.
    assert sql(db, "SELECT access_count FROM chunks WHERE id = ?", (old.id,)) == [(0,)]


def test_decayed_chunks_do_not_crowd_out_a_live_memory(mem, clock):
    mem.store_memories(
        [MemoryInput(f"Deploy checklist for the staging cluster, revision {i}", intensity=0.1) for i in range(60)]
    )
    clock.advance(days=100)  # all 60 are now below 0.05
    fresh = mem.store_memory(
        "Today the whole team reviewed the long deploy process again in the big meeting room after lunch"
    )
    assert [h.id for h in mem.recall_memories("deploy", touch=False)] == [fresh.id]
    assert [h.id for h in mem.recall_memories("Deploy checklist for the staging cluster", touch=False)] == [fresh.id]


def test_the_strength_curve_decays_from_the_start_and_restarts_at_each_access():
    from datetime import datetime, timedelta, timezone

    from hippo.core.strength import strength_after, strength_curve

    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    access = start + timedelta(days=10)
    curve = strength_curve(0.8, 2, [access], start, start + timedelta(days=20), points=5)
    times = [t for t, _ in curve]
    assert times[0] == start and times[-1] == start + timedelta(days=20) and access in times
    values = dict(curve)
    assert values[start] == 0.8 and values[access] == 0.8  # decay restarts at the access
    assert values[start + timedelta(days=5)] == pytest.approx(strength_after(0.8, 2, 120.0))
    assert values[start + timedelta(days=20)] == pytest.approx(strength_after(0.8, 2, 240.0))
