"""The public result types. Plain dataclasses; ``to_dict()`` gives JSON-ready data."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Iterator, Literal

from typing_extensions import TypedDict  # pydantic reads typing's only from Python 3.12

from hippo.dictable import Dictable as _Dictable
from hippo.trust import AuditBreak, AuditPage, AuditRecord, AuditReport, PlaceCheck, Receipt, ReceiptCheck, Removed

__all__ = [
    "UNCHANGED",
    "ArchivedHit",
    "ArchivedMemory",
    "AuditBreak",
    "AuditPage",
    "AuditRecord",
    "AuditReport",
    "PlaceCheck",
    "Receipt",
    "ReceiptCheck",
    "Removed",
    "Block",
    "BlockResult",
    "Chunk",
    "Compaction",
    "CompactionEntry",
    "CompactionStats",
    "ConversationHit",
    "Captured",
    "Consolidation",
    "ConsolidationStats",
    "Erased",
    "Experience",
    "FactHistory",
    "Validity",
    "MergedWording",
    "FactOutcome",
    "ForgetResult",
    "Forgotten",
    "Hit",
    "ImportReport",
    "ImportResult",
    "ItemWrite",
    "LLMCall",
    "Link",
    "Observation",
    "MaintainResult",
    "Listing",
    "Page",
    "Recall",
    "RememberResult",
    "Skipped",
    "ReembedResult",
    "Stats",
    "StoreResult",
    "Summary",
    "Surfaced",
]

Kind = Literal["fact", "memory"]


class _OfChunk(_Dictable):
    """A result about one chunk, whose id it answers to."""

    chunk: "Chunk"

    @property
    def id(self) -> str:
        return self.chunk.id


UNCHANGED: Any = type("Unchanged", (), {"__repr__": lambda self: "UNCHANGED"})()
"""Marks an optional argument the caller did not give (where ``None`` is a value)."""


@dataclass(frozen=True, slots=True)
class Chunk(_Dictable):
    """One stored fact or memory, as kept in the ``chunks`` table."""

    id: str
    agent_id: str
    content: str
    kind: Kind
    metadata: dict[str, Any]
    running_intensity: float
    encounter_count: int
    access_count: int
    last_accessed_at: datetime
    created_at: datetime
    observed_at: datetime | None = None
    superseded_by: str | None = None
    content_hash: str | None = None
    has_vector: bool = True
    feedback: int = 0  # the agent's signed feedback: + for reinforce, - for demote
    reinforced_at: datetime | None = None  # the last reinforcement; recency counts from it
    source: str | None = None  # provenance: agent, extraction, conversation, migration, ...
    session_id: str | None = None

    @property
    def source_ids(self) -> list[str]:
        """The ids of the conversation messages this memory was captured from, oldest
        first; empty for a memory that was not captured. Kept in ``metadata["_source_ids"]``."""
        return list(self.metadata.get("_source_ids") or ())


@dataclass(frozen=True, slots=True)
class Hit(_OfChunk):
    """A recalled chunk with the parts of its score.

    ``similarity`` is the cosine to the query (``None`` without a vector),
    ``keyword`` the BM25 score scaled to [0, 1] against the best keyword match
    (``None`` when the chunk did not match a keyword), ``relevance`` their fusion (and the
    preference for a day the query names): how well the chunk itself matches. ``context`` is
    what the memories stored around it in its conversation lent (see ``hippo.core.recall.context``), or,
    with ``rerank="learned"``, what the reranking stage added to the relevance or took from it
    (``hippo.core.recall.rerank``), or what a later memory on the same subject needed to rank above the
    one it follows (``hippo.core.recall.later``); the score reads ``relevance + context``, so context only reorders:
    ``min_relevance`` reads ``relevance`` alone, and surfacing the fusion alone. ``feedback`` is the factor the agent's
    feedback put on the score (see ``hippo.core.curation.feedback``).
    """

    chunk: Chunk
    score: float
    relevance: float
    similarity: float | None
    keyword: float | None
    effective_strength: float
    recency: float
    context: float = 0.0
    feedback: float = 1.0  # what the agent's feedback multiplied the score by (hippo.core.curation.feedback)
    archived: bool = False  # found in the archive (``include_archived=True``): keyword relevance only
    linked_from: str | None = None  # added by ``expand=True``: the hit whose co-recall link brought it

    @property
    def content(self) -> str:
        return self.chunk.content


@dataclass(frozen=True, slots=True)
class Recall(_Dictable):
    """Ranked hits of ``recall_memories``; iterates like a list of :class:`Hit`.

    ``mode`` is ``hybrid`` (vectors and keywords), ``keyword`` (no query vector:
    no embedder, or it failed) or ``vector`` (the query had no usable word).
    """

    hits: list[Hit]
    mode: Literal["hybrid", "keyword", "vector"]
    warning: str | None = None

    def __iter__(self) -> Iterator[Hit]:
        return iter(self.hits)

    def __len__(self) -> int:
        return len(self.hits)

    def __getitem__(self, index: int) -> Hit:
        return self.hits[index]


@dataclass(frozen=True, slots=True)
class StoreResult(_Dictable):
    """What ``store_memory`` did: ``inserted`` a new chunk or ``strengthened`` its twin."""

    id: str
    action: Literal["inserted", "strengthened"]
    chunk: Chunk
    vector_pending: bool = False


@dataclass(frozen=True, slots=True)
class Forgotten(_Dictable):
    """A deleted chunk. ``scrubbed`` is False while a reader holding an older snapshot keeps its
    text in the database's write-ahead log: the row is gone, and hippo finishes the scrub when the
    reader lets go (``note`` says why it waits)."""

    id: str
    content: str
    kind: Kind
    similarity: float | None
    scrubbed: bool = True
    note: str | None = None
    receipt: Receipt | None = None  # with ``receipt=True``: the proof (:class:`hippo.Receipt`)


@dataclass(frozen=True, slots=True)
class ForgetResult(_Dictable):
    """The chunks ``forget_memory`` deleted, or would delete when ``preview`` is true.

    ``scrubbed``: whether their text has already left every file (see :class:`Forgotten`)."""

    deleted: list[Forgotten]
    preview: bool = False
    scrubbed: bool = True
    note: str | None = None
    # Observed conversation messages not yet (or no longer) needed by capture whose text held
    # every word of the description: their text is removed too (the capture inbox).
    messages: int = 0
    receipt: Receipt | None = None  # with ``receipt=True``: the proof (:class:`hippo.Receipt`)

    @property
    def count(self) -> int:
        return len(self.deleted)


@dataclass(frozen=True, slots=True)
class ItemWrite(_Dictable):
    """What ``put_item`` did: ``inserted`` a new memory or ``updated`` the key's memory."""

    chunk: Chunk
    action: Literal["inserted", "updated"]


@dataclass(frozen=True, slots=True)
class Block(_Dictable):
    """A named memory block (``persona``, ``human``) with its optional character limit."""

    key: str
    value: str
    updated_at: datetime
    char_limit: int | None = None


@dataclass(frozen=True, slots=True)
class BlockResult(_Dictable):
    """Outcome of a block write: the block's text now, how many places a replace changed, whether
    an append or set created the block. A write that cannot be done raises instead
    (``hippo.errors.BlockNotFound``, ``TextNotFound``, ``LimitExceeded``)."""

    key: str
    value: str
    replaced: int = 0
    created: bool = False


@dataclass(frozen=True, slots=True)
class ConversationHit(_Dictable):
    """A message found by ``recall_conversation``; ``fields`` holds its other columns."""

    id: int
    content: str
    rank: float
    snippet: str
    fields: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ReembedResult(_Dictable):
    """What ``reembed`` did: vectors written, chunks still without one, the model now recorded."""

    embedded: int
    pending: int
    model_id: str
    dimension: int | None


@dataclass(frozen=True, slots=True)
class LLMCall(_Dictable):
    """One request to an LLM during ``remember_facts``: what for, and what it cost."""

    purpose: Literal["extract", "classify"]
    model: str
    input_tokens: int
    output_tokens: int
    attempt: int = 1  # 2 when a malformed answer was retried


@dataclass(frozen=True, slots=True)
class FactOutcome(_Dictable):
    """What ``remember_facts`` did with one extracted fact, and why.

    ``action``: ``new`` (nothing similar stored), ``distinct`` (similar facts
    exist but both are true), ``duplicate`` (strengthened ``id``, an existing
    fact) or ``supersedes`` (inserted ``id``, marking ``superseded`` as replaced).
    ``band`` is where the best similarity fell; ``decided_by`` is ``band``,
    ``llm``, ``offline`` (the offline rule) or ``text`` (same words).
    """

    fact: str
    intensity: float
    action: Literal["new", "distinct", "duplicate", "supersedes"]
    id: str
    similarity: float | None
    band: Literal["duplicate", "ambiguous", "new"]
    decided_by: Literal["band", "llm", "offline", "text"]
    reason: str
    matched_id: str | None = None
    matched_content: str | None = None
    superseded: list[str] = field(default_factory=list)
    intensity_before: float | None = None
    intensity_after: float | None = None


@dataclass(frozen=True, slots=True)
class RememberResult(_Dictable):
    """Per-fact outcomes, a summary sentence, and the LLM calls made."""

    facts: list[FactOutcome]
    summary: str
    llm_calls: list[LLMCall]
    extractor: Literal["llm", "offline"]

    @property
    def input_tokens(self) -> int:
        return sum(call.input_tokens for call in self.llm_calls)

    @property
    def output_tokens(self) -> int:
        return sum(call.output_tokens for call in self.llm_calls)


@dataclass(frozen=True, slots=True)
class MergedWording(_Dictable):
    """A wording recognised as a duplicate of a stored fact, which was strengthened instead of
    storing it: kept so a merge loses no words. ``Memory.split_fact`` makes it a fact of its own again.

    ``similarity`` is the two texts' cosine when it was known; ``intensity`` how strongly it was said.
    ``metadata``, ``source``, ``session_id`` and ``observed_at`` are those of the call that said it
    (empty for wordings merged before they were kept), which a split fact takes."""

    id: str
    fact_id: str
    content: str
    merged_at: datetime
    similarity: float | None
    intensity: float
    metadata: dict[str, Any] = field(default_factory=dict)
    source: str | None = None
    session_id: str | None = None
    observed_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Validity(_Dictable):
    """When one version of a fact was current: from ``valid_from``, when hippo stored it (its
    ``created_at``; ``observed_at`` is when it was said, and may be earlier), until ``valid_until``,
    when its successor was stored. ``valid_until`` is None while the version is ``current``, and
    also when its successor was forgotten: then it was replaced at a time hippo no longer knows."""

    id: str
    valid_from: datetime
    valid_until: datetime | None
    current: bool


@dataclass(frozen=True, slots=True)
class FactHistory(_Dictable):
    """A fact's versions, oldest first; each replaced version names its successor.

    A version was superseded at its successor's ``created_at``. ``current`` is
    the live version, or ``None`` when the newest one was forgotten. ``merged``: the
    wordings merged into any version as duplicates, oldest first (``fact_id`` names which).
    ``validity``: each version's interval, in the order of ``versions``.
    """

    versions: list[Chunk]
    current: Chunk | None
    merged: list[MergedWording] = field(default_factory=list)
    validity: list[Validity] = field(default_factory=list)

    def at(self, when: datetime) -> Chunk | None:
        """The version current at ``when`` (aware, or naive UTC), or None: none stored yet, or the
        one current then was replaced at an unknown time (its successor forgotten)."""
        when = when if when.tzinfo is not None else when.replace(tzinfo=timezone.utc)
        chunks = {c.id: c for c in self.versions}
        for span in reversed(self.validity):
            if span.valid_from <= when and (span.current or span.valid_until is not None and when < span.valid_until):
                return chunks[span.id]
        return None


@dataclass(frozen=True, slots=True)
class ApiKey(_Dictable):
    """An HTTP API key as stored: the public ``id``, the hash of its secret, and what it may reach."""

    id: str
    secret_hash: str
    agents: tuple[str, ...]
    admin: bool
    created_at: datetime
    label: str | None = None

    def allows(self, agent_id: str) -> bool:
        return self.admin or agent_id in self.agents


@dataclass(frozen=True, slots=True)
class Page(_Dictable):
    """One page of a listing; pass ``next_cursor`` back for the next (``None`` on the last page)."""

    items: list[Chunk]
    next_cursor: str | None = None


@dataclass(frozen=True, slots=True)
class Listing(_Dictable):
    """A page of a filtered, sorted browse (``Memory.browse_memories``): ``archived`` names the
    items that come from the archive, ``types`` the experience type of each shown item
    that is an experience; ``next_offset`` is the next page's offset (``None`` on the last),
    ``matched`` how many passed the filters, ``complete`` whether the archive's listing was read whole."""

    items: list[Chunk]
    archived: frozenset[str] = frozenset()
    next_offset: int | None = None
    matched: int = 0
    complete: bool = True
    types: dict[str, str] = field(default_factory=dict)  # the experience type of each shown experience


@dataclass(frozen=True, slots=True)
class Erased(_Dictable):
    """What ``delete_all`` removed from one agent. ``scrubbed``: whether the text has already
    left every file (see :class:`Forgotten`)."""

    agent_id: str
    memories: int
    facts: int
    blocks: int
    scrubbed: bool = True
    note: str | None = None
    short_term: int = 0  # short-term experiences that were in the database (see ``short_term_durable``)
    receipt: Receipt | None = None  # with ``receipt=True``: the proof (:class:`hippo.Receipt`)


class ConsolidationStats(TypedDict):
    """Consolidation's counters of one agent (``Stats.consolidation``): experiences ``recorded``,
    ``evicted`` from a full buffer, ``consolidated`` into long-term memory (``merged`` of them
    into a memory already held), ``pruned`` from the buffer and ``archived`` by the long-term
    bounds; ``runs`` and when the last one ran (None before the first); the rate (consolidated
    over recorded) and the buffer's ``capacity``."""

    recorded: int
    evicted: int
    consolidated: int
    merged: int
    pruned: int
    archived: int
    runs: int
    last_run_at: datetime | None
    consolidation_rate: float
    capacity: int


def _no_consolidation(capacity: int) -> ConsolidationStats:
    """The counters of an agent that has recorded nothing yet."""
    return ConsolidationStats(recorded=0, evicted=0, consolidated=0, merged=0, pruned=0, archived=0, runs=0,
                              last_run_at=None, consolidation_rate=0.0, capacity=capacity)


@dataclass(frozen=True, slots=True)
class Stats(_Dictable):
    """What one agent's memory holds, and what it runs on."""

    agent_id: str
    facts: int
    superseded_facts: int
    memories: int
    pending_vectors: int
    blocks: int
    embedder: str | None
    dimension: int | None
    database: str | None = None  # the file's path; the HTTP API never shows it
    database_bytes: int | None = None  # the whole file; over HTTP for admin keys only
    archived: int = 0  # memories pruning moved to the archive
    experiences: int = 0  # long-term experiences, also counted among ``memories``
    short_term: int = 0  # experiences in the short-term buffer, not yet consolidated
    consolidation: ConsolidationStats = field(default_factory=lambda: _no_consolidation(0))


@dataclass(frozen=True, slots=True)
class Summary(_Dictable):
    """One agent's memory counted whole, not sampled (``memory_summary``; the dashboard's stats):
    its live facts and memories by effective strength now, in 10 steps of 0.1 (1.0 in the last),
    its long-term experiences by type, and per UTC day (``days``, oldest first, ending
    today, from the first day with anything to show): ``stored`` (chunks stored that day and still
    held, superseded facts included), ``last_accessed`` (live chunks last retrieved that day),
    ``retrievals`` (chunks a recall returned), ``recalls`` (recalls that returned any),
    ``consolidated``, ``merged`` and ``pruned`` (short-term memory) and ``archived``
    (pruning for size and the long-term bounds). The counters per day start when this hippo
    first ran on the database; what happened before is not known."""

    agent_id: str
    strength: list[int]
    types: dict[str, int]
    days: list[str]
    daily: dict[str, list[int]]


@dataclass(frozen=True, slots=True)
class Link(_Dictable):
    """A memory's link to another (``related``): ``co_recall`` (``strength`` recalls returned both),
    ``supersedes`` (this fact replaced ``chunk``) or ``superseded_by`` (``chunk`` replaced it)."""

    chunk: Chunk
    kind: str
    strength: float


@dataclass(frozen=True, slots=True)
class Skipped(_Dictable):
    """Something an import left out: where in the input (``MEMORY.md:12``, ``results[520]``,
    ``line 3, observation 2``, ``block human``) and why. ``duplicate``: the agent holds it already
    (or the input repeats it), which is no problem; every other skip is one to look at."""

    where: str
    reason: str
    duplicate: bool = False


@dataclass(frozen=True, slots=True)
class ImportReport(_Dictable):
    """What ``import_from`` did (or, with ``dry_run``, would do): memories and blocks written,
    links made (mcp-memory relations), and everything skipped with the reason. A dry run reports
    the same skips as the import. ``facts``: how many of those imported are facts (mem0's);
    ``agents``: how many went to each agent, when a file holds several (mem0's users)."""

    format: str
    imported: int
    blocks: int
    links: int
    skipped: list[Skipped]
    dry_run: bool = False
    facts: int = 0
    agents: dict[str, int] = field(default_factory=dict)

    @property
    def problems(self) -> list[Skipped]:
        """The skipped items that were not duplicates: what could not be read or kept."""
        return [s for s in self.skipped if not s.duplicate]


@dataclass(frozen=True, slots=True)
class MaintainResult(_Dictable):
    """What ``maintain`` did: with a size cap (``max_db_bytes``) and the database over it, the
    bottom share of memories by feedback and recency moved to the archive, a share at a time, until
    the database was under the cap or nothing was left that it may archive: an agent within its
    share of the cap keeps its memories (``note`` says when the run stopped over the cap)."""

    cap: int | None
    bytes_before: int
    bytes_after: int
    archived: int
    note: str | None = None


@dataclass(frozen=True, slots=True)
class ArchivedHit(_OfChunk):
    """An archived memory found by words (``search_archive``), with its BM25 score."""

    chunk: Chunk
    score: float


@dataclass(frozen=True, slots=True)
class ArchivedMemory(_OfChunk):
    """An archived memory and when pruning moved it out of recall's way
    (``Memory.get_archived``); ``restore_memory`` brings it back."""

    chunk: Chunk
    archived_at: datetime


@dataclass(frozen=True, slots=True)
class ImportResult(_Dictable):
    """What importing an export did to ``agent_id``.

    ``skipped`` chunks were already there (same id, or a memory with the same
    text); ``renamed`` ones had ids taken by another agent of the database and
    got derived ids; ``embedded`` ones had no usable vector in the file and were
    embedded with the database's model; ``pending`` ones are left without a vector.
    ``merged``: the wordings merged into the inserted facts that came with them.
    """

    agent_id: str
    source_agent: str
    inserted: int
    skipped: int
    renamed: int
    embedded: int
    pending: int
    blocks_written: int
    blocks_skipped: int
    merged: int = 0


@dataclass(frozen=True, slots=True)
class Experience(_Dictable):
    """Something the agent lived through: a chat, observation, task, decision, tool use,
    error or insight, with its ``importance`` (0-1; the starting strength once consolidated) and
    structured ``context`` (user, room, task ids and anything else).

    ``tier`` is ``short_term`` (in the buffer, not yet consolidated) or ``long_term`` (a memory
    of the agent, ``id`` its chunk id). ``durable``: whether it is on disk now; a short-term
    experience that is not may be lost with the process (see ``short_term_durable``).
    ``relevance`` is set on ``recall`` results when a query was given.
    """

    id: str
    agent_id: str
    type: str
    content: str
    importance: float
    context: dict[str, Any]
    tags: list[str]
    observed_at: datetime
    created_at: datetime
    tier: Literal["short_term", "long_term"]
    durable: bool
    source: str | None = None
    session_id: str | None = None
    consolidated_at: datetime | None = None
    strength: float | None = None  # long-term: the memory's stored strength (running intensity)
    relevance: float | None = None


@dataclass(frozen=True, slots=True)
class Consolidation(_Dictable):
    """What one ``consolidate`` run did: experiences of at least the threshold's
    importance moved to long-term memory, most important first, in one transaction; of them,
    ``merged`` were already held (the same or nearly the same text) and strengthened it instead;
    then ``pruned`` old unimportant entries left the buffer. ``remaining`` stay short-term."""

    considered: int
    consolidated: int
    merged: int
    pruned: int
    remaining: int
    ids: list[str] = field(default_factory=list)  # the long-term ids, in the order written


@dataclass(frozen=True, slots=True)
class Observation(_Dictable):
    """What ``observe`` acknowledged: ``accepted`` messages are durable and wait for
    processing; ``duplicates`` (a message id the session already had) and ``skipped`` ones (system
    prompts, tool outputs, empty messages) were not kept."""

    session_id: str
    accepted: int
    duplicates: int
    skipped: int
    message_ids: list[str] = field(default_factory=list)  # the accepted ones, in order


@dataclass(frozen=True, slots=True)
class Captured(_Dictable):
    """What ``process_pending`` did: messages processed, windows looked at and let through by the
    gate, memories written (``merged``: strengthened one already held instead), facts settled
    through ``remember_facts`` recognition, and the LLM calls made."""

    sessions: int
    messages: int
    windows: int
    gated_in: int
    memories: int
    merged: int
    facts: int
    ids: list[str] = field(default_factory=list)
    llm_calls: list[LLMCall] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Surfaced(_Dictable):
    """What ``surface`` found worth showing now: ``text``, a compact context block with
    ids within the token budget (empty when nothing is relevant), its ``tokens``, and the ``hits``
    it holds, best first. None of them was shown to this session before."""

    text: str
    tokens: int
    hits: list[Hit]


@dataclass(frozen=True, slots=True)
class CompactionEntry(_Dictable):
    """What compaction made of one message: its ``index`` in the session, ``type``,
    ``importance`` after the modifiers, ``retention`` after decay, and ``action``: ``kept`` in full
    (a goal or a decision in force among them), ``compressed`` to one line, a ``pointer`` in the
    sparse index, ``dropped`` (a pointer the full index had no room for; ``classifier="reference"`` only)
    or ``omitted`` (an acknowledgement or trivia, left out). ``memory_ids``: where ``Memory.compact``
    stored its content (more than one when it was longer than a memory may be)."""

    index: int
    type: str
    role: str
    importance: float
    retention: float
    action: Literal["kept", "compressed", "pointer", "dropped", "omitted"]
    tokens: int
    memory_ids: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class CompactionStats(_Dictable):
    """Compaction's statistics: entries in each section, tokens before and after (the stats comment's
    count: pointer and compressed lines, kept entries whole), their ``ratio`` (None for an empty
    session), ``summary_tokens``, the summary text's own count, and ``omitted``: acknowledgements and
    trivia left out of the summary (hippo's layout)."""

    entries: int
    sparse: int
    compressed: int
    kept: int
    dropped: int
    tokens_before: int
    tokens_after: int
    ratio: float | None
    summary_tokens: int
    sparse_index_tokens: int
    omitted: int = 0


@dataclass(frozen=True, slots=True)
class Compaction(_Dictable):
    """A compacted session: the ``summary`` to put in place of the messages, what became
    of each message, and the statistics."""

    summary: str
    entries: list[CompactionEntry]
    stats: CompactionStats
