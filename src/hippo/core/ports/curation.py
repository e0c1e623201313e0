"""Curation's parts of a store: the archive pruning fills, the links between chunks, and the
wordings recognition merged into facts."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import ContextManager, Protocol, Sequence

from hippo.core.ports.database import Database
from hippo.types import ArchivedMemory, Chunk, MergedWording

__all__ = ["ArchiveStore", "LinkStore", "MergeStore", "PruneCandidate"]


@dataclass(frozen=True, slots=True)
class PruneCandidate:
    """A memory pruning may archive, with what pruning ranks it by."""

    agent_id: str
    id: str
    feedback: int
    since: float  # seconds since the epoch: the last reinforcement, else the creation
    size: int = 0  # the bytes its row takes (text, metadata, vector), for each agent's share of the cap


class ArchiveStore(Database, Protocol):
    """The archive: memories pruning moved out of ``chunks`` (their vectors kept only as an
    8-bit copy, for a forget), with their own full-text index; never deleted by pruning, only by an
    explicit forget."""

    def used_bytes(self) -> int:
        """The bytes the database's data takes (what the size cap is measured on)."""
        ...

    def compact(self) -> None:
        """Give space freed by archiving back, as far as the backend does without blocking readers."""
        ...

    def exclusive(self, name: str) -> ContextManager[bool]:
        """A database-wide lock named ``name`` for a long operation of many transactions (``maintain``),
        across processes; yields whether this process holds it (False: another one does, do not wait)."""
        ...

    def prune_candidates(self, agent_id: str | None = None) -> list[PruneCandidate]:
        """Every memory that may be archived (raw memories, not facts or keyed items): the
        database's, or only ``agent_id``'s."""
        ...

    def archived_bytes(self) -> dict[str, int]:
        """Each agent's bytes in the archive, measured as :attr:`PruneCandidate.size` measures a live
        row (an agent with nothing archived is absent): with its live memories, its share of the cap."""
        ...

    def archive_chunks(self, agent_id: str, ids: Sequence[str], now: datetime) -> int:
        """Move chunks to the archive in one transaction, each vector kept as
        :func:`~hippo.core.ports.vectors.encode_int8` bytes; how many moved."""
        ...

    def archived_vectors(self, agent_id: str) -> dict[str, bytes | None]:
        """Every archived chunk of the agent with its 8-bit vector (None: archived without one)."""
        ...

    def set_archived_vectors(self, agent_id: str, codes: dict[str, bytes]) -> None:
        """Keep these 8-bit vectors with the agent's archived chunks."""
        ...

    def clear_archived_vectors(self) -> None:
        """Drop every archived chunk's 8-bit vector, of every agent (before switching models)."""
        ...

    def archived_chunks(self, agent_id: str, ids: Sequence[str]) -> list[Chunk]: ...

    def list_archived(self, agent_id: str, *, limit: int, before: tuple[datetime, str] | None = None,
                      ids: Sequence[str] | None = None) -> list[ArchivedMemory]:
        """The agent's archived chunks with when each was archived, the latest archived first (ties:
        the greater id first), through an index on (agent, archived_at, id); ``before`` is the
        ``(archived_at, id)`` of the previous page's last, ``ids`` (when given) the only ones wanted."""
        ...

    def search_archive(self, agent_id: str, terms: Sequence[str], limit: int, *,
                       every_term: bool = False) -> list[tuple[Chunk, float]]:
        """The agent's archived chunks by words (BM25, best first); any word, or every one."""
        ...

    def restore_chunks(self, agent_id: str, ids: Sequence[str]) -> int:
        """Move archived chunks back, their vectors pending; how many moved."""
        ...

    def delete_archived(self, agent_id: str, ids: Sequence[str]) -> int:
        """Hard-delete archived chunks (a forget): their text leaves the files as a chunk's does."""
        ...

    def count_archived(self, agent_id: str) -> int: ...


class LinkStore(Database, Protocol):
    """Links between one agent's chunks (curation's relations): ``co_recall`` links are undirected
    (stored with ``a < b``), ``supersedes`` links go from the newer fact (``a``) to the older."""

    def strengthen_links(self, agent_id: str, pairs: Sequence[tuple[str, str]], kind: str, now: datetime) -> None:
        """Add 1 to each pair's link, creating it at 1; pairs of chunks that are gone are skipped."""
        ...

    def prune_links(self, agent_id: str, *, before: datetime, keep: int | None) -> int:
        """Delete the agent's weak ``co_recall`` links (strength under
        :data:`~hippo.core.curation.rules.STRONG_LINK`) that no recall strengthened since ``before``;
        with ``keep``, then all but the ``keep`` weak ones strengthened last. Returns how many went."""
        ...

    def links(self, agent_id: str, ids: Sequence[str],
              min_strength: float = 0.0) -> list[tuple[str, str, str, float, bool]]:
        """(chunk, other, kind, strength, outgoing) for every link of ``ids``, strongest first;
        ``outgoing``: the chunk is the link's ``a`` (for ``supersedes``: the newer fact)."""
        ...


class MergeStore(Database, Protocol):
    """The wordings recognition merged into facts as duplicates (``MergedWording``). A wording stays
    while its fact is archived and goes with it when the fact is deleted, by any path, or when the
    fact's text is replaced (it was a wording of the old text): in the same transaction, its text
    leaving the files as a deleted chunk's does."""

    def add_merged(self, agent_id: str, wordings: Sequence[MergedWording]) -> None:
        """Keep these wordings; call inside the transaction that strengthened their facts."""
        ...

    def merged_wordings(self, agent_id: str, fact_ids: Sequence[str]) -> list[MergedWording]:
        """The wordings merged into these facts, oldest first."""
        ...

    def remove_merged(self, agent_id: str, ids: Sequence[str]) -> int:
        """Hard-delete wordings by id; their text leaves the files as after a forget
        (``pending_scrub`` says when a backend needs ``scrub``). Returns how many went."""
        ...

    def known_merge_ids(self, agent_id: str, ids: Sequence[str]) -> dict[str, bool]:
        """Which of these wording ids exist: ``True`` for this agent's, ``False`` for another
        agent's (ids are unique across the database); free ids are absent. Reveals nothing else."""
        ...
