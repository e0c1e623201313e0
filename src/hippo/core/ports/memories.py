"""One agent's memories and facts (chunks), its named blocks, and the whole-agent summaries the
dashboard shows: the parts of a store that recall, remembering and browsing use."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, Protocol, Sequence

from hippo.core.ports.database import Database
from hippo.core.ports.search import Candidates, ChunkFilter, SearchQuery, Standing
from hippo.types import UNCHANGED, Block, Chunk

if TYPE_CHECKING:
    import numpy as np

    from hippo.core.ports.retrievals import RetrievalBatch, RetrievalQueue

__all__ = ["BROWSE_ORDERS", "BlockStore", "BrowseOrder", "ChunkStore", "ChunkSummary", "StrengthUpdate",
           "SummaryStore"]


@dataclass(frozen=True, slots=True)
class StrengthUpdate:
    """New strength fields for one chunk (retrieval and reinforcement events)."""

    id: str
    running_intensity: float
    encounter_count: int
    access_count: int
    last_accessed_at: datetime


class ChunkStore(Database, Protocol):
    """One agent's chunks: facts and memories, their vectors, strength and search."""

    # The embedding model the vectors were made with, once per database.
    def embedder_record(self) -> tuple[str, int | None] | None: ...

    def set_embedder_record(self, model_id: str, dimension: int | None) -> None: ...

    # Chunks.
    def memories_by_hash(self, agent_id: str, hashes: Sequence[str]) -> dict[str, Chunk]: ...

    def insert_chunks(
        self, agent_id: str, chunks: Sequence[Chunk], vectors: Sequence["np.ndarray | None"]
    ) -> None:
        """Insert new chunks. Each vector is one row (``(dimension,)``) or a long text's windows
        (``(windows, dimension)``, ``EmbeddingService.windows``): the first row is the chunk's own
        vector (:meth:`get_vectors`), and every search and :meth:`score` read a chunk's similarity
        as the best of its rows'. ``None``: the vector is pending."""
        ...

    def update_strength(self, agent_id: str, updates: Sequence[StrengthUpdate]) -> None: ...

    def record_retrievals(self, agent_id: str, ids: Sequence[str], now: datetime, *, boost: float) -> None:
        """The retrieval event, applied relative to the stored values so that
        concurrent recalls add up: access count + 1, last access now, intensity + boost (max 1).
        In the same transaction the agent's counters of ``now``'s day add ``retrievals`` (one per
        chunk retrieved) and ``recalls`` (one per call that retrieved any) (:class:`SummaryStore`)."""
        ...

    @property
    def retrievals(self) -> "RetrievalQueue":
        """Recalls' retrieval events, queued and written behind the answer (a store's own queue)."""
        ...

    def write_retrievals(self, agent_id: str, batch: "RetrievalBatch") -> None:
        """Recalls' retrieval events of one agent, merged, inside the queue's transaction: what
        :meth:`record_retrievals` would have left event by event (counts, last access, intensity,
        the day's counters) and each co-recall pair's link strengthened by its number of recalls."""
        ...

    def supersede(self, agent_id: str, old_ids: Sequence[str], new_id: str) -> list[str]:
        """Mark live chunks as replaced by ``new_id``; returns the ids actually marked."""
        ...

    def superseded_by(self, agent_id: str, chunk_id: str) -> list[Chunk]:
        """The chunks that ``chunk_id`` replaced (its direct predecessors)."""
        ...

    def set_vectors(self, agent_id: str, vectors: dict[str, "np.ndarray"]) -> None:
        """Give chunks their vectors, one row or windows each (as :meth:`insert_chunks`); a chunk's
        earlier windows go."""
        ...

    def get_chunks(self, agent_id: str, ids: Sequence[str]) -> list[Chunk]:
        """This agent's chunks among ``ids``, in the order of ``ids``; unknown ids are left out."""
        ...

    def score(self, agent_id: str, ids: Sequence[str],
              vector: "np.ndarray | None") -> tuple[list[Standing], dict[str, float]]:
        """What ranking reads of these chunks (as :meth:`get_chunks`, the fields ranking needs
        only), and the cosine of each that has a vector of the same size to ``vector``: the best
        over a long chunk's windows."""
        ...

    def get_vectors(self, agent_id: str, ids: Sequence[str]) -> dict[str, "np.ndarray"]:
        """Each chunk's own vector (its first window's), one row."""
        ...

    def neighbours(
        self, agent_id: str, ids: Sequence[str], reach: int, where: ChunkFilter
    ) -> dict[str, list[tuple[str, int]]]:
        """For each memory among ``ids`` (facts have none), the agent's memories of the same
        session stored up to ``reach`` places before and after it that pass ``where``, as (id,
        distance): storage order is id order within the session. A memory without a session has
        none, and no memory of another session counts, however close in time."""
        ...

    def lengths(self, agent_id: str, ids: Sequence[str]) -> dict[str, int]:
        """The length in characters of each of the agent's chunks among ``ids`` (unknown ids left out)."""
        ...

    def list_chunks(
        self, agent_id: str, *, limit: int, before: str | None = None, kind: str | None = None
    ) -> list[Chunk]:
        """Newest first, superseded facts included; ``before`` is the last id of the previous page."""
        ...

    def update_metadata(self, agent_id: str, chunk_id: str, metadata: dict[str, Any], *,
                        adds_only: bool = False) -> bool:
        """Replace a chunk's metadata; the old metadata leaves the files as a hard delete's text does
        (``pending_scrub``), unless ``adds_only`` says the new one holds all of it (nothing to remove).
        False: no such chunk."""
        ...

    def agent_ids(self, prefix: str) -> list[str]:
        """Every agent that holds a chunk, sorted, whose id starts with ``prefix`` ("" for all)."""
        ...

    def agent_of(self, chunk_id: str) -> str | None:
        """The agent that holds chunk ``chunk_id`` (ids are unique across the database), or None."""
        ...

    def known_ids(self, agent_id: str, ids: Sequence[str]) -> dict[str, bool]:
        """Which of ``ids`` exist: ``True`` for this agent's, ``False`` for another agent's
        (ids are unique across the database); free ids are absent. Reveals nothing else."""
        ...

    def size_bytes(self) -> int:
        """How much disk the database takes."""
        ...

    def holds_nothing(self) -> bool:
        """No chunk, block or API key of any agent: a database nobody has written to."""
        ...

    def counts(self, agent_id: str) -> dict[str, int]:
        """``facts`` (live), ``superseded_facts``, ``memories``, ``pending_vectors``, ``blocks``,
        ``experiences`` (long-term, among the memories)."""
        ...

    def kind_counts(self) -> dict[str, int]:
        """Chunks of every agent by kind (``fact``, ``memory``; superseded facts among the facts),
        read from an index, never the rows (a server's metrics)."""
        ...

    def search(self, agent_id: str, query: SearchQuery) -> Candidates:
        """The candidates of one search (see :class:`SearchQuery`), best of each side first."""
        ...

    def delete_chunks(self, agent_id: str, ids: Sequence[str]) -> int:
        """Hard delete, leaving no trace of the text in the database files. Returns at once: the
        rows are gone, but scrubbing old copies of the text may wait on readers (``pending_scrub``)."""
        ...

    def add_feedback(self, agent_id: str, chunk_id: str, delta: int, reinforced_at: datetime | None) -> bool:
        """Add ``delta`` to a chunk's feedback count; with ``reinforced_at``, recency counts from
        then. False when the agent has no such chunk."""
        ...

    def update_content(self, agent_id: str, chunk_id: str, content: str, content_hash: str,
                       vector: "np.ndarray | None", now: datetime) -> bool:
        """Replace a chunk's text in place (same id, strength and metadata): its hash, vector
        (``None``: pending; one row or windows, as :meth:`insert_chunks`) and keyword index change
        with it, its access time becomes ``now``, the wordings merged into it (``MergeStore``) go with
        the old text when the text differs, and
        the old text leaves the files as after a hard delete (``pending_scrub``). False: no such chunk."""
        ...

    def delete_agent(self, agent_id: str) -> dict[str, int]:
        """Hard-delete everything of one agent (chunks, blocks, counters; its API keys stay), as
        ``delete_chunks`` does; counts of ``memories``, ``facts`` and ``blocks`` deleted."""
        ...

    def pending_scrub(self) -> str | None:
        """None when the text of every hard delete has left every file; otherwise why not yet
        (a reader holding an older snapshot). The store finishes the scrub by itself."""
        ...

    def scrub(self) -> None:
        """Finish removing deleted text from the database files now, as far as the backend can
        (SQLite: the WAL checkpoint, which otherwise retries by itself; PostgreSQL: ``VACUUM FULL``)."""
        ...

    def pending_vectors(self, agent_id: str | None, limit: int) -> list[tuple[str, str, str]]:
        """``(agent_id, id, content)`` of chunks without a vector (all agents if ``None``)."""
        ...

    def count_pending(self, agent_id: str | None) -> int: ...

    def clear_vectors(self) -> None:
        """Drop every vector of every agent (before switching models)."""
        ...


class BlockStore(Database, Protocol):
    """One agent's named memory blocks."""

    def get_block(self, agent_id: str, key: str) -> Block | None: ...

    def put_block(
        self, agent_id: str, key: str, value: str, now: datetime, *, char_limit: Any = UNCHANGED
    ) -> Block:
        """Write the block (created when missing). When a text that the new one does not begin with
        is replaced, the old text leaves the files as a hard delete's does (``pending_scrub``); an
        append, or the same text again, removes nothing and scrubs nothing."""
        ...

    def list_blocks(self, agent_id: str) -> list[Block]:
        """Every block of the agent, by key."""
        ...


@dataclass(frozen=True, slots=True)
class ChunkSummary:
    """One agent's chunks counted whole, not sampled (the dashboard's stats at any size): its live
    facts and memories by effective strength at a given time, in equal steps of [0, 1]
    (1.0 in the last); how many chunks were stored on each UTC day (superseded facts included) and
    how many live ones were last retrieved on each (those retrieved at least once), both from a
    given day on, as ``YYYY-MM-DD``; and its live long-term experiences by type."""

    strength: tuple[int, ...]
    stored: dict[str, int]
    last_accessed: dict[str, int]
    types: dict[str, int]


BROWSE_ORDERS = ("newest", "strength", "last_access", "feedback")


@dataclass(frozen=True, slots=True)
class BrowseOrder:
    """How :meth:`SummaryStore.browse_chunks` orders an agent's chunks, each descending, ties broken by
    creation time, then id: ``newest`` (creation), ``strength`` (effective strength at ``now``, as
    :meth:`SummaryStore.chunk_summary` computes it), ``last_access``, ``feedback`` (then strength)."""

    by: str
    now: datetime
    decay_lambda: float

    @property
    def keys(self) -> tuple[str, ...]:
        """The keys of the order before creation time and id: ``strength``, ``last_access``, ``feedback``."""
        if self.by not in BROWSE_ORDERS:
            raise ValueError(f"unknown browse order {self.by!r}")
        return {"newest": (), "feedback": ("feedback", "strength")}.get(self.by, (self.by,))


class SummaryStore(Database, Protocol):
    """Whole-agent aggregates, each answered by the database in a statement or two, and the
    agent's counters per day (retrievals, consolidation, pruning): hippo keeps no log of events,
    so each event adds to its day's counter in the transaction that makes it."""

    def chunk_summary(self, agent_id: str, now: datetime, *, since: date, decay_lambda: float,
                      bins: int) -> ChunkSummary:
        """See :class:`ChunkSummary`. Effective strength is ``running_intensity ×
        e^(−decay_lambda / (1 + ln(1 + access_count) × 0.3) × hours since the last access)``,
        as ``core/strength.py`` computes it; per-day counts start at ``since``."""
        ...

    def browse_chunks(self, agent_id: str, where: ChunkFilter, order: BrowseOrder, *, offset: int,
                      limit: int) -> tuple[list[Chunk], int]:
        """A page of the agent's chunks that pass ``where`` (superseded ones when it includes them),
        sorted over all of them by ``order``, from ``offset``; and how many pass in all."""
        ...

    def add_daily(self, agent_id: str, day: date, counts: dict[str, int]) -> None:
        """Add to the agent's counters of ``day`` (UTC); zero counts are skipped."""
        ...

    def read_daily(self, agent_id: str, since: date) -> dict[str, dict[str, int]]:
        """The agent's counters from ``since`` on: ``YYYY-MM-DD`` -> name -> count."""
        ...
