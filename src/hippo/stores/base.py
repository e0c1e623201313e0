"""The Store port: what the core needs from a database.

Every method is scoped to one ``agent_id``; a store never returns or changes
another agent's rows. Write methods called inside ``with store.transaction():``
join that one transaction; called alone, each is its own transaction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, ContextManager, Literal, Protocol, Sequence

from hippo.errors import InvalidInput
from hippo.types import UNCHANGED, ApiKey, ArchivedMemory, Block, Chunk, ConversationHit, Experience, MergedWording

if TYPE_CHECKING:
    import numpy as np

    from hippo.stores.retrievals import RetrievalBatch, RetrievalQueue

__all__ = ["BROWSE_ORDERS", "UNCHANGED", "ArchiveStore", "BlockStore", "BrowseOrder", "Candidates", "ChunkFilter",
           "ChunkStore", "ConversationStore", "CaptureStore", "ChunkSummary", "Database", "ExperienceFilter",
           "ExperienceRecord", "ExperienceStore", "Observed", "KeyStore", "MergeStore", "MetaCondition", "MetaOp",
           "PruneCandidate",
           "SearchQuery", "SessionItem", "SessionStore", "Standing", "Store", "StoreCapabilities", "StrengthUpdate",
           "SummaryStore", "validate_table_name"]



@dataclass(frozen=True, slots=True)
class StoreCapabilities:
    """Declared once per backend and checked by the core, never probed."""

    supports_ann: bool = False
    secure_delete: bool = True
    conversation: bool = True
    # Several processes share the database (servers on PostgreSQL): state they must all see, such
    # as the short-term buffer, lives in the database, never in one process.
    shared: bool = False


@dataclass(frozen=True, slots=True)
class ExperienceFilter:
    """Long-term experiences only: of any of ``types`` (every type when empty), of at
    least ``min_importance``."""

    types: tuple[str, ...] = ()
    min_importance: float | None = None


@dataclass(frozen=True, slots=True)
class ChunkFilter:
    """Recall filters. ``tags`` must all be present; every ``metadata`` condition must hold.

    ``since``/``until`` bound the time of a chunk: when it was observed if known,
    else when it was stored. Superseded chunks are excluded unless asked for.
    """

    kinds: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    metadata: tuple["MetaCondition", ...] = ()
    since: datetime | None = None
    until: datetime | None = None
    include_superseded: bool = False
    sources: tuple[str, ...] = ()  # provenance: any of these
    session_id: str | None = None
    experience: ExperienceFilter | None = None  # experiences only, and which

    @property
    def is_empty(self) -> bool:
        return not (self.kinds or self.tags or self.metadata or self.since or self.until or self.sources
                    or self.session_id or self.experience)


MetaOp = Literal["eq", "ne", "in", "gt", "gte", "lt", "lte", "exists"]


@dataclass(frozen=True, slots=True)
class MetaCondition:
    """One test of a metadata field: ``eq``/``ne`` a plain value (text, number, boolean, null;
    ``ne`` also holds when the field is missing), ``in`` a tuple of them, ``gt``..``lte`` a number
    or a text (compared with fields of the same type only), ``exists`` a boolean."""

    key: str
    op: MetaOp
    value: Any


@dataclass(frozen=True, slots=True)
class StrengthUpdate:
    """New strength fields for one chunk (retrieval and reinforcement events)."""

    id: str
    running_intensity: float
    encounter_count: int
    access_count: int
    last_accessed_at: datetime


@dataclass(frozen=True, slots=True)
class Standing:
    """What ranking reads of a candidate chunk: its strength and age, not its text or metadata
    (recall ranks a pool of candidates and reads whole chunks only for the hits it returns)."""

    id: str
    running_intensity: float
    access_count: int
    last_accessed: float  # seconds since the epoch (UTC), as ``datetime.timestamp()``
    created: float  # when recency starts: the last reinforcement, else the creation
    superseded_by: str | None
    has_vector: bool
    feedback: int = 0


@dataclass(frozen=True, slots=True)
class SearchQuery:
    """One search of an agent's chunks, answered in one call: by meaning (``vector``), by words
    (``terms``: sanitised, lower-cased words, any of which matches; every one with
    ``every_term``), or both, among the chunks that pass ``where``; at most ``depth`` candidates
    from each side. With ``score_all``, a candidate found by words only still gets its cosine."""

    vector: "np.ndarray | None"
    terms: tuple[str, ...]
    where: ChunkFilter
    depth: int
    every_term: bool = False
    score_all: bool = True
    # A dedup probe: only candidates at a near-duplicate similarity matter, so an approximate index
    # may search less widely (hnswlib: a short candidate list), missing only far neighbours.
    near_duplicates: bool = False


@dataclass(frozen=True, slots=True)
class Candidates:
    """What a search found: each candidate's :class:`Standing`, its cosine to the query vector
    and its raw keyword score (larger is better; comparable within one search only) where known."""

    chunks: list[Standing]
    similarity: dict[str, float]
    bm25: dict[str, float]
    exhausted: bool  # neither side had more than it returned
    # The best cosine and raw keyword score a chunk outside the pool can have (0: that side returned all it had).
    unseen_similarity: float = 0.0
    unseen_bm25: float = 0.0

    @classmethod
    def found(cls, chunks: list[Standing], similarity: dict[str, float], bm25: dict[str, float],
              cosines: dict[str, float], depth: int) -> "Candidates":
        """The candidates of a search that asked each side for ``depth``: ``cosines`` (of those found
        by words only) join the similarities, and a side that returned fewer than ``depth`` had no more."""
        return cls(chunks, {**cosines, **similarity}, bm25,
                   exhausted=len(similarity) < depth and len(bm25) < depth,
                   unseen_similarity=min(similarity.values()) if len(similarity) >= depth else 0.0,
                   unseen_bm25=min(bm25.values()) if len(bm25) >= depth else 0.0)

    def merged(self, other: "Candidates") -> "Candidates":
        """Both sets of candidates (scores of one query against one index, so comparable)."""
        known = {c.id for c in self.chunks}
        return Candidates(
            [*self.chunks, *(c for c in other.chunks if c.id not in known)],
            {**other.similarity, **self.similarity},
            {**other.bm25, **self.bm25},
            self.exhausted,
            self.unseen_similarity,
            self.unseen_bm25,
        )


@dataclass(frozen=True, slots=True)
class ExperienceRecord:
    """What long-term memory keeps of an experience beside its chunk (same ``id``): its type,
    importance and context, the context's user, room and task ids (indexed), and when it happened."""

    id: str
    type: str
    importance: float
    context: dict[str, Any]
    user_ref: str | None
    room_ref: str | None
    task_ref: str | None
    observed_at: datetime
    consolidated_at: datetime


@dataclass(frozen=True, slots=True)
class Observed:
    """A message ``observe`` acknowledged (capture's conversation tap): its place in the agent's
    inbox (``seq``, increasing), the caller's id (or one made up), speaker and time."""

    seq: int
    message_id: str
    role: str
    name: str | None
    content: str
    observed_at: datetime | None


@dataclass(frozen=True, slots=True)
class SessionItem:
    """One item of a session's history as the agent framework handed it: ``item`` is its JSON
    text, kept as written; ``message_id`` the id capture observed it under (its source id in the
    memories captured from it)."""

    message_id: str
    item: str


_TABLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")


def validate_table_name(name: str) -> str:
    """Table names cannot be bound as parameters, so only plain identifiers pass."""
    if not isinstance(name, str) or not _TABLE_NAME.fullmatch(name):
        raise InvalidInput(f"invalid table name {name!r}: use letters, digits and underscores")
    return name


class Database(Protocol):
    """What every part of a store shares: where it is, its transaction, closing it."""

    capabilities: StoreCapabilities
    location: str
    """Where the database is, as it may be shown: a file path, or a URL with its password masked."""

    def close(self) -> None: ...

    def transaction(self) -> ContextManager[None]:
        """One write transaction (SQLite: ``BEGIN IMMEDIATE``); re-entrant. Calls of any part
        made inside it join it."""
        ...


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

    retrievals: "RetrievalQueue"
    """Recalls' retrieval events, queued and written behind the answer (:mod:`hippo.stores.retrievals`)."""

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


class KeyStore(Database, Protocol):
    """The HTTP API keys (hashed), kept in the database they open: database-wide."""

    def put_api_key(self, key: ApiKey) -> None: ...

    def get_api_key(self, key_id: str) -> ApiKey | None: ...

    def list_api_keys(self) -> list[ApiKey]: ...

    def has_api_keys(self) -> bool:
        """Whether any key exists (asked on every request until one does: must be cheap)."""
        ...

    def delete_api_key(self, key_id: str) -> bool:
        """Delete a key and, in the same transaction, every dashboard session made with it."""
        ...

    def put_session(self, session_hash: str, key_id: str, expires_at: datetime, now: datetime) -> None:
        """Record a dashboard session of a key by the SHA-256 of its secret id (never the id, so the
        table cannot be replayed); sessions expired at ``now`` are dropped in the same transaction."""
        ...

    def session_key(self, session_hash: str, now: datetime) -> ApiKey | None:
        """The key of a recorded session unexpired at ``now`` whose key still exists, else None
        (asked on every dashboard page: one read by primary key)."""
        ...

    def delete_session(self, session_hash: str) -> bool:
        """End one dashboard session; False when it was not recorded."""
        ...


class ConversationStore(Database, Protocol):
    """The application's conversation log, read through the application's own database."""

    def has_messages_table(self, table: str) -> bool:
        """Whether the application's messages table and its FTS table exist."""
        ...

    def search_messages(
        self, agent_id: str, table: str, terms: Sequence[str], limit: int
    ) -> list[ConversationHit]:
        """Full-text search of the application's messages of this agent: any of ``terms``."""
        ...


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
        :func:`~hippo.stores.vectors.encode_int8` bytes; how many moved."""
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
        """Delete the agent's weak ``co_recall`` links (strength under ``retrievals.STRONG_LINK``)
        that no recall strengthened since ``before``; with ``keep``, then all but the ``keep`` weak
        ones strengthened last. Returns how many went."""
        ...

    def links(self, agent_id: str, ids: Sequence[str],
              min_strength: float = 0.0) -> list[tuple[str, str, str, float, bool]]:
        """(chunk, other, kind, strength, outgoing) for every link of ``ids``, strongest first;
        ``outgoing``: the chunk is the link's ``a`` (for ``supersedes``: the newer fact)."""
        ...


class ExperienceStore(Database, Protocol):
    """Experiences: what long-term memory keeps of them beside their chunks (gone with
    the chunk, kept while it is archived), the short-term buffer when it lives in the database,
    and the consolidation counters (``memory_stats``)."""

    def put_experiences(self, agent_id: str, records: Sequence[ExperienceRecord]) -> None:
        """Record experiences of existing chunks; a chunk that has a record keeps it."""
        ...

    def experience_records(self, agent_id: str, ids: Sequence[str]) -> dict[str, ExperienceRecord]: ...

    def list_experiences(self, agent_id: str, where: ChunkFilter, limit: int) -> list[str]:
        """Ids of the long-term experiences that pass ``where`` (its ``experience`` part set),
        the latest observed first; through an index on (agent, time), not a scan of the chunks."""
        ...

    def related_experiences(self, agent_id: str, refs: dict[str, str], limit: int) -> list[str]:
        """Ids of the long-term experiences whose context names every one of ``refs`` (keys
        ``user``, ``room``, ``task``), the latest observed first; through an index."""
        ...

    def short_term_append(self, agent_id: str, entry: Experience, capacity: int) -> list[str]:
        """Add to the agent's buffer in the database; the oldest beyond ``capacity`` leave it
        (their ids are returned)."""
        ...

    def short_term_entries(self, agent_id: str) -> list[Experience]:
        """The agent's buffer, oldest first."""
        ...

    def short_term_agents(self) -> list[str]:
        """The agents with entries in the database's buffer, sorted."""
        ...

    def short_term_vectors(self, agent_id: str, ids: Sequence[str]) -> dict[str, "np.ndarray"]: ...

    def set_short_term_vectors(self, agent_id: str, vectors: dict[str, "np.ndarray"]) -> None: ...

    def short_term_remove(self, agent_id: str, ids: Sequence[str]) -> list[str]:
        """Take entries out of the buffer (their text leaves the files as after a delete); the
        ids that were there. Inside a transaction, an entry another process took is not returned."""
        ...

    def add_stats(self, agent_id: str, counts: dict[str, float]) -> None:
        """Add to the agent's counters (``last_*`` names are set, not added)."""
        ...

    def read_stats(self, agent_id: str) -> dict[str, float]: ...


class CaptureStore(Database, Protocol):
    """Capture: the inbox of observed messages per session, how far each session is
    processed (a cursor moved by compare-and-set inside the transaction that writes what was
    captured: nothing processed twice), and what surfacing showed each session."""

    def observe_messages(self, agent_id: str, session_id: str, rows: Sequence[Observed]) -> list[tuple[int, str]]:
        """Append messages (their ``seq`` is assigned here) in one transaction; a message id the
        session already has is skipped. ``(seq, message_id)`` of those kept, in order."""
        ...

    def pending_sessions(self, agent_id: str | None) -> list[tuple[str, str]]:
        """``(agent_id, session_id)`` of sessions with messages past their cursor (all agents if None)."""
        ...

    def pending_messages(self, agent_id: str | None) -> int:
        """How many observed messages wait past their session's cursor (all agents if None)."""
        ...

    def capture_cursor(self, agent_id: str, session_id: str) -> int:
        """The last processed seq of the session (0: none)."""
        ...

    def observed(self, agent_id: str, session_id: str, *, after: int, limit: int) -> list[Observed]:
        """The session's messages past ``after``, oldest first."""
        ...

    def observed_tail(self, agent_id: str, session_id: str, *, upto: int, limit: int) -> list[Observed]:
        """The session's last ``limit`` messages up to ``upto`` that still have their text, oldest first."""
        ...

    def advance_cursor(self, agent_id: str, session_id: str, expected: int, new: int, keep_from: int) -> bool:
        """Move the cursor from ``expected`` to ``new`` (False, changing nothing, when it is not at
        ``expected``: another process got there first); the text of processed messages before
        ``keep_from`` leaves the files (their ids stay, so a message sent again is not processed twice)."""
        ...

    def observed_matching(self, agent_id: str, terms: Sequence[str], limit: int) -> list[Observed]:
        """Messages of any session that still have their text and hold every one of ``terms``."""
        ...

    def clear_observed(self, agent_id: str, seqs: Sequence[int]) -> int:
        """Remove these messages' text (a forget), and the session items they were observed from;
        their ids stay. How many messages lost their text."""
        ...

    def surfaced_ids(self, agent_id: str, session_id: str) -> set[str]: ...

    def mark_surfaced(self, agent_id: str, session_id: str, ids: Sequence[str], now: datetime) -> None: ...


class SessionStore(Database, Protocol):
    """A session's history (the conversation items an agent framework keeps between turns), in
    order. An item leaves it by ``pop_session_item`` or ``clear_session_items``, with the agent's
    ``delete_agent``, with a memory captured from it when that memory is deleted or its text
    replaced (``delete_chunks``, ``update_content``, the archive's delete), and with the message
    capture observed from it when a forget clears that (``clear_observed``): its text leaves the
    files as a forgotten chunk's does."""

    def add_session_items(self, agent_id: str, session_id: str, items: Sequence[SessionItem]) -> None:
        """Append the items, in order, at the session's end (inside the caller's transaction, if any)."""
        ...

    def session_items(self, agent_id: str, session_id: str, limit: int | None) -> list[SessionItem]:
        """The session's last ``limit`` items (all: None), oldest first."""
        ...

    def pop_session_item(self, agent_id: str, session_id: str) -> SessionItem | None:
        """Remove the session's last item and return it (None: the session has none)."""
        ...

    def clear_session_items(self, agent_id: str, session_id: str) -> int:
        """Remove every item of the session; how many went."""
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


class Store(ChunkStore, BlockStore, KeyStore, ConversationStore, ArchiveStore, LinkStore, ExperienceStore,
            CaptureStore, SessionStore, SummaryStore, MergeStore, Protocol):
    """What the core needs from a database: every part, from one backend (``stores/registry.py``)."""

