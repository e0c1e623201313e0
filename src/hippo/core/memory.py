"""Memory: the operations of one agent over a store and an embedder. Orchestration only."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any, Iterable, Iterator, Literal, Mapping, Self, Sequence

from hippo import limits
from hippo.clock import Clock, system_clock
from hippo.config import Settings
from hippo.core import archive, edits, items, links, pairs, transfer, writer
from hippo.core import validation as v
from hippo.core.block_facet import BlockFacet
from hippo.core.blocks import BlockEditor
from hippo.core.browsing import BrowseFacet
from hippo.core.capture_facet import CaptureFacet
from hippo.core.compaction_facet import CompactionFacet
from hippo.core.curation_facet import CurationFacet
from hippo.core.embedding import EmbeddingService
from hippo.core.episodic import Episodic
from hippo.core.experience_facet import ExperienceFacet
from hippo.core.filters import passes, recall_filter
from hippo.core.fusion import Fusion
from hippo.core.keys import KeyRing
from hippo.core.keywords import ENGLISH_STOPWORDS, keyword_terms
from hippo.core.messages import user_text
from hippo.core.recall import as_hits, ranked_pool, touched
from hippo.core.reembed import Progress, fill_pending
from hippo.core.remember import remember
from hippo.core.short_term import local_agents
from hippo.core.strength import RETRIEVAL_BOOST, ScoreWeights
from hippo.core.summary import SummaryFacet
from hippo.core.transfer import ExportRecord
from hippo.core.writer import MemoryInput
from hippo.errors import ConfigError, InvalidInput, NotFound
from hippo.providers.base import LLM, Embedder
from hippo.stores.base import ChunkFilter, SearchQuery, Store
from hippo.stores.registry import for_agent, open_store, per_agent
from hippo.stores.retrievals import RetrievalEvent
from hippo.types import (
    Chunk,
    ConversationHit,
    Erased,
    FactHistory,
    ForgetResult,
    Forgotten,
    Hit,
    ImportResult,
    Page,
    Recall,
    ReembedResult,
    RememberResult,
    Stats,
    StoreResult,
)

__all__ = ["Memory", "MemoryInput"]



class Memory(BlockFacet, BrowseFacet, CaptureFacet, CompactionFacet, CurationFacet, ExperienceFacet, SummaryFacet):
    """The long-term memory of one agent. Build it with :func:`hippo.open`."""

    def __init__(
        self,
        store: Store,
        *,
        agent_id: str,
        embedder: Embedder | None,
        settings: Settings,
        llm: LLM | None = None,
        clock: Clock = system_clock,
    ) -> None:
        self.agent_id = v.check_agent_id(agent_id)
        self.settings = settings
        self.store = store
        self.llm = llm
        self._clock = clock
        self.embedding = EmbeddingService(embedder, store)
        self._blocks = BlockEditor(store, self.agent_id, settings.block_char_limit)
        self._fusion = Fusion(settings.vector_weight, self.embedding.thresholds.unrelated)
        self._weights = ScoreWeights(settings.weight_relevance, settings.weight_strength, settings.weight_recency)
        self._owns_store = True
        self._episodic = Episodic(store, self.embedding, self.agent_id, settings, self.now, fusion=self._fusion,
                                  weights=self._weights)
        kind = pairs.offline_kind(settings.offline_pairs, None if embedder is None else embedder.model_id)
        self._offline_rule = pairs.offline_rule(kind, self.embedding.words, self.embedding.word_states)
        if kind == "model" and (embedder is None or embedder.model_id != pairs.TRAINED_ON):
            raise ConfigError(f"offline_pairs='model' needs the embedder it was trained with ({pairs.TRAINED_ON}); "
                              "use offline_pairs='rules' with another embedder")

    def close(self) -> None:
        """Close the database (when this memory opened it), first consolidating what the agents'
        in-process short-term buffers hold that is worth keeping. Closing again does nothing (a
        server's shutdown may close a memory its owner has closed already)."""
        if self._owns_store:
            self._owns_store = False
            try:
                for agent in local_agents(self.store):
                    self.for_agent(agent).consolidate()
            finally:
                self.store.close()

    def for_agent(self, agent_id: str) -> Self:
        """The same database, embedder and LLM, scoped to another agent.

        The new memory shares this one's store; closing it leaves the store open
        (close the memory it came from to close the database). With a database per agent
        (``memories/{agent_id}.db``) it opens the other agent's file, and closing it closes that.
        """
        agent_id = v.check_agent_id(agent_id)
        own = per_agent(self.settings.db) and agent_id != self.agent_id
        store = open_store(for_agent(self.settings.db, agent_id, make_folder=True),
                           ann_threshold=self.settings.ann_threshold, retrieval_delay=self.settings.retrieval_delay) \
            if own else self.store
        try:
            other = type(self)(store, agent_id=agent_id, embedder=self.embedding.embedder,
                               settings=replace(self.settings, agent_id=agent_id), llm=self.llm, clock=self._clock)
        except BaseException:
            if own:
                store.close()
            raise
        other._owns_store = own
        return other

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def now(self) -> datetime:
        return self._clock()

    # -- store ----------------------------------------------------------------

    def store_memory(
        self,
        content: str,
        metadata: Mapping[str, Any] | None = None,
        intensity: float = 0.5,
        *,
        observed_at: datetime | str | None = None,
        source: str | None = None,
        session_id: str | None = None,
    ) -> StoreResult:
        """Store raw content; a verbatim duplicate strengthens the existing memory. ``source`` is
        its provenance (default ``agent``), ``session_id`` the session it came from."""
        return self.store_memories([MemoryInput(content, metadata, intensity, observed_at, source, session_id)])[0]

    def store_memories(self, items: Iterable[MemoryInput | str]) -> list[StoreResult]:
        """Store many memories with one embedding call and one transaction."""
        if isinstance(items, (str, bytes)) or not isinstance(items, Iterable):
            raise InvalidInput(f"store_memories takes a list of texts or MemoryInput, got {type(items).__name__}")
        inputs = [writer.check(item, max_chars=self.settings.max_content_chars) for item in items]
        return writer.write(self.store, self.embedding, self.agent_id, inputs, self.now)

    # -- facts ----------------------------------------------------------------

    def remember_facts(
        self,
        text: str | Sequence[Mapping[str, Any]],
        *,
        observed_at: datetime | str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> RememberResult:
        """Learn the facts in what the user said, reconciled with what is known.

        ``text`` is what the user said, or a list of chat messages (OpenAI or Anthropic shape),
        of which the user's turns are read. Extraction uses the configured LLM, or offline rules
        when there is none; each fact is then new, a duplicate (strengthened), a replacement
        (supersedes the old fact) or distinct. All actions commit together.
        """
        if not isinstance(text, str):
            text = user_text(text)
            if not text:
                raise InvalidInput("the messages hold no user turn with text to learn from")
        text = v.check_text(text, "text", max_chars=self.settings.max_content_chars)
        return remember(
            store=self.store, embedding=self.embedding, llm=self.llm, agent_id=self.agent_id, text=text,
            now=self.now(), observed_at=v.check_datetime(observed_at, "observed_at"),
            metadata=v.check_metadata(metadata), offline_rule=self._offline_rule,
        )

    def fact_history(self, chunk_id: str) -> FactHistory:
        """Every version of a fact, oldest first: what it superseded, what superseded it; and the
        wordings merged into them as duplicates (``merged``), which :meth:`split_fact` can split back."""
        chunk = self.get_memory(chunk_id)
        older: list[Chunk] = []
        frontier = [chunk]
        while frontier:  # walk back; a fact may have replaced several
            frontier = [p for c in frontier for p in self.store.superseded_by(self.agent_id, c.id)]
            older.extend(frontier)
        newer: list[Chunk] = []
        current: Chunk | None = chunk
        while current is not None and current.superseded_by is not None:
            found = self.store.get_chunks(self.agent_id, [current.superseded_by])
            current = found[0] if found else None
            if current is not None:
                newer.append(current)
        versions = sorted([*older, chunk, *newer], key=lambda c: (c.created_at, c.id))
        return FactHistory(versions, current, self.store.merged_wordings(self.agent_id, [c.id for c in versions]))

    def split_fact(self, fact_id: str, wording: str) -> Chunk:
        """Undo a wrong merge: the wording that ``remember_facts`` merged into fact ``fact_id`` as a
        duplicate (``fact_history(fact_id).merged``) becomes a fact of its own again, embedded, with
        the intensity it was said with; the fact gives back the strength the merge added. Returns the
        new fact. An unknown id is ``NotFound``; a wording never merged into that fact, ``InvalidInput``."""
        fact = self.get_memory(fact_id)
        return edits.split_fact(self.store, self.embedding, self.agent_id, fact, wording,
                                max_chars=self.settings.max_content_chars)

    # -- recall ---------------------------------------------------------------

    def recall_memories(
        self,
        query: str,
        limit: int = 10,
        *,
        kind: str | Sequence[str] | None = None,
        tags: Sequence[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        source: str | Sequence[str] | None = None,
        session_id: str | None = None,
        include_archived: bool = False,
        expand: bool = False,
        touch: bool = True,
    ) -> Recall:
        """Facts and memories ranked by relevance, strength and recency, times the agent's
        feedback (see :mod:`hippo.core.feedback`); filtered by kind, tags, metadata, time, and
        provenance (``source``: one or any of several; ``session_id``).

        Returned hits count as retrieved (access count, last access, +0.02
        intensity) unless ``touch=False``. With ``include_archived``, archived memories that match
        the query's words compete too, marked ``archived`` (see :mod:`hippo.core.archive`). With
        ``expand``, memories often recalled with the best hits follow them, marked ``linked_from``
        (see :mod:`hippo.core.links`); a touching recall strengthens the links among its hits.
        """
        query = v.check_text(query, "query", max_chars=self.settings.max_query_chars)
        limit = v.check_limit(limit)
        where = recall_filter(kind=kind, tags=tags, metadata=metadata, since=since, until=until, source=source,
                              session_id=session_id)
        query_vector = self.embedding.query(query)
        now = self.now()
        # ranks what is written: the last moment's boosts follow
        with self.store.retrievals.recall_reads(self.agent_id, now):
            ranked, found = ranked_pool(self.store, self.agent_id, query, query_vector, where, limit, now,
                                        settings=self.settings, fusion=self._fusion, weights=self._weights)
            hits = as_hits(self.store, self.agent_id, ranked)
        if touch and hits:  # written behind the answer (hippo.stores.retrievals)
            hits = touched(hits, now)
            self.store.retrievals.add(RetrievalEvent(self.agent_id, tuple(h.id for h in hits),
                                                     links.co_recall_pairs(hits), now, RETRIEVAL_BOOST))
        if include_archived:
            hits = self._with_archived(hits, query, limit, now, where)
        if expand:
            hits = hits + links.expand(self.store, self.agent_id, hits, query_vector, now, fusion=self._fusion,
                                       weights=self._weights, decay_lambda=self.settings.decay_lambda)
        if query_vector is None:
            mode: Literal["hybrid", "keyword", "vector"] = "keyword"
        else:
            mode = "hybrid" if found.bm25 or keyword_terms(query) else "vector"
        return Recall(hits, mode, warning=self.embedding.last_error if query_vector is None else None)

    def _with_archived(self, hits: list[Hit], query: str, limit: int, now: datetime, where: ChunkFilter) -> list[Hit]:
        if where.metadata:
            raise InvalidInput("metadata filters do not reach the archive: leave out include_archived or metadata")
        found = [h for h in archive.search(self.store, self.agent_id, query, limit) if passes(h.chunk, where)]
        extra = archive.archived_hits(found, now, fusion=self._fusion, weights=self._weights,
                                      decay_lambda=self.settings.decay_lambda,
                                      min_relevance=self.settings.min_relevance)
        return sorted([*hits, *extra], key=lambda h: (-h.score, h.id))[:limit]

    # -- forget ---------------------------------------------------------------

    def forget_memory(
        self, description: str, *, preview: bool = False, limit: int = 10, min_similarity: float | None = None
    ) -> ForgetResult:
        """Hard-delete the chunks that match ``description``; ``preview`` deletes nothing.

        A chunk matches when its cosine similarity to the description reaches the
        embedder's forget threshold (``min_similarity`` overrides it), or when it
        contains every meaningful word of the description. At most ``limit`` go.
        """
        description = v.check_text(description, "description", max_chars=self.settings.max_query_chars)
        limit = v.check_limit(limit)
        threshold = self.embedding.thresholds.forget
        if min_similarity is not None:
            threshold = v.check_intensity(min_similarity, "min_similarity")
        where = ChunkFilter(include_superseded=True)  # forgetting reaches a fact's history too
        words = tuple(keyword_terms(description, stopwords=ENGLISH_STOPWORDS))
        vector = self.embedding.query(description)
        found = self.store.search(self.agent_id, SearchQuery(vector, words, where, limit, every_term=True,
                                                              score_all=False))
        matches: dict[str, float | None] = {}
        for chunk_id, sim in sorted(found.similarity.items(), key=lambda item: -item[1]):
            if sim >= threshold:
                matches[chunk_id] = sim
        for chunk_id, _ in sorted(found.bm25.items(), key=lambda item: -item[1]):
            if len(matches) < limit:
                matches.setdefault(chunk_id, None)
        chunks = self.store.get_chunks(self.agent_id, list(matches))
        forgotten = [Forgotten(c.id, c.content, c.kind, matches[c.id]) for c in chunks]
        # The archive too, by the same rule (see archive.forget_archived).
        archived = archive.forget_archived(self.store, self.embedding, self.agent_id, vector, words, threshold,
                                           limit - len(forgotten))
        forgotten += [Forgotten(c.id, c.content, c.kind, sim) for c, sim in archived]
        # And the short-term buffer, by the same rule as long-term memory; and the capture inbox.
        recent = self._episodic.matching(vector, words, threshold, limit - len(forgotten))
        forgotten += [Forgotten(e.id, e.content, "memory", sim) for e, sim in recent]
        said = self.store.observed_matching(self.agent_id, words, limits.RESULT_LIMIT)
        if preview or not (forgotten or said):
            return ForgetResult(forgotten, preview=preview, messages=len(said))
        with self.store.transaction():
            self.store.delete_chunks(self.agent_id, [c.id for c in chunks])
            self.store.delete_archived(self.agent_id, [c.id for c, _ in archived])
            self._episodic.drop([e.id for e, _ in recent])
            self.store.clear_observed(self.agent_id, [m.seq for m in said])
        note = self.store.pending_scrub()
        forgotten = [replace(f, scrubbed=note is None, note=note) for f in forgotten]
        return ForgetResult(forgotten, scrubbed=note is None, note=note, messages=len(said))

    # -- by id ----------------------------------------------------------------

    def get_memory(self, chunk_id: str) -> Chunk:
        """One chunk by id; browsing, so it does not count as a retrieval."""
        chunk_id = v.check_chunk_id(chunk_id)
        found = self.store.get_chunks(self.agent_id, [chunk_id])
        if not found:
            raise NotFound(f"no memory {chunk_id} for agent {self.agent_id!r}")
        return found[0]

    def list_memories(self, *, limit: int = 20, cursor: str | None = None, kind: str | None = None) -> Page:
        """Every fact and memory, newest first, superseded facts included; a page at a time.

        Browsing: nothing counts as retrieved. ``cursor`` is a previous page's ``next_cursor``.
        """
        limit = v.check_limit(limit)
        if cursor is not None:
            cursor = v.check_chunk_id(cursor)
        if kind is not None and kind not in ("fact", "memory"):
            raise InvalidInput(f"kind must be 'fact' or 'memory', got {v.shown(kind)}")
        rows = self.store.list_chunks(self.agent_id, limit=limit + 1, before=cursor, kind=kind)
        more = len(rows) > limit
        return Page(rows[:limit], rows[limit - 1].id if more else None)

    def update_metadata(self, chunk_id: str, metadata: Mapping[str, Any]) -> Chunk:
        """Replace a chunk's metadata (tags included); content and strength stay as they are."""
        return self.update_memory(chunk_id, metadata=metadata)

    def update_memory(self, chunk_id: str, content: str | None = None,
                      metadata: Mapping[str, Any] | None = None) -> Chunk:
        """Change a memory's text and/or metadata in place: same id and strength; new text is
        embedded and indexed again, and the old text leaves every file (as after a forget). A fact's
        new text also removes the wordings merged into it as duplicates of the old one
        (``fact_history(id).merged``)."""
        edits.update_memory(self.store, self.embedding, self.agent_id, self.get_memory(chunk_id), self.now(),
                            content=content, metadata=metadata, max_chars=self.settings.max_content_chars)
        return self.get_memory(chunk_id)

    def delete_all(self) -> Erased:
        """Hard-delete every memory, fact, block and short-term experience of this agent, and
        nothing of any other."""
        buffer = self._episodic.buffer
        in_process = [] if buffer.durable else buffer.take([e.id for e in buffer.entries()])
        erased = edits.erase_agent(self.store, self.agent_id)  # a durable buffer goes with the rest
        return replace(erased, short_term=erased.short_term + len(in_process))

    @property
    def database(self) -> str:
        """Where this memory's database is, as it may be shown (a URL's password masked)."""
        return self.store.location

    @property
    def keys(self) -> KeyRing:
        """The database's API keys (database-wide, like :meth:`for_agent`)."""
        return KeyRing(self.store, clock=self._clock)

    def scrub(self) -> str | None:
        """Remove the text of deleted memories from the database files now, for the whole database;
        None when nothing is left to remove, else why not yet. SQLite does this by itself after
        every forget; PostgreSQL keeps deleted rows' bytes until this runs ``VACUUM FULL`` (which
        locks the tables while it rewrites them: an operator's step, ``hippo scrub``)."""
        self.store.scrub()
        return self.store.pending_scrub()

    def holds_nothing(self) -> bool:
        """Whether nobody has written to this database yet: no chunk, block or key of any agent."""
        return self.store.holds_nothing()

    def stats(self) -> Stats:
        """How many facts, memories, blocks and pending vectors this agent has."""
        record = self.store.embedder_record()
        return Stats(agent_id=self.agent_id, **self.store.counts(self.agent_id),
                     embedder=record[0] if record else None, dimension=record[1] if record else None,
                     database=self.store.location, database_bytes=self.store.size_bytes(),
                     archived=self.store.count_archived(self.agent_id),
                     short_term=len(self._episodic.short_term()), consolidation=self._episodic.stats())

    def delete_memory(self, chunk_id: str) -> Forgotten:
        """Hard-delete one chunk by id, leaving no trace of its text; an archived one too."""
        chunk_id = v.check_chunk_id(chunk_id)
        recent = [e for e in self._episodic.short_term() if e.id == chunk_id]
        if recent and self._episodic.drop([chunk_id]):
            note = self.store.pending_scrub() if self._episodic.buffer.durable else None
            return Forgotten(chunk_id, recent[0].content, "memory", None, scrubbed=note is None, note=note)
        archived = self.store.archived_chunks(self.agent_id, [chunk_id])
        chunk = archived[0] if archived else self.get_memory(chunk_id)
        deleted = self.store.delete_archived(self.agent_id, [chunk_id]) if archived \
            else self.store.delete_chunks(self.agent_id, [chunk.id])
        if not deleted:
            raise NotFound(f"no memory {chunk_id} for agent {self.agent_id!r}")
        note = self.store.pending_scrub()
        return Forgotten(chunk.id, chunk.content, chunk.kind, None, scrubbed=note is None, note=note)

    # -- keyed items ----------------------------------------------------------

    def put_item(self, key: str, content: str, metadata: Mapping[str, Any] | None = None, *,
                 intensity: float = 0.5) -> items.ItemWrite:
        """Make ``key`` hold this memory: a new one, or the key's memory changed in place (same
        id and strength; the old text leaves every file). Unlike :meth:`store_memory`, two keys
        may hold the same text (see :mod:`hippo.core.items`)."""
        return items.put_item(self.store, self.embedding, self.agent_id, key, content, metadata=metadata,
                              now=self.now(), intensity=intensity, max_chars=self.settings.max_content_chars)

    def get_item(self, key: str) -> Chunk | None:
        """The memory that ``key`` holds, or ``None``; browsing, so not a retrieval."""
        return items.get_item(self.store, self.agent_id, key)

    def delete_item(self, key: str) -> Forgotten | None:
        """Hard-delete the memory ``key`` holds (the forget guarantee); ``None`` when it holds none."""
        chunk = items.delete_item(self.store, self.agent_id, key)
        if chunk is None:
            return None
        note = self.store.pending_scrub()
        return Forgotten(chunk.id, chunk.content, chunk.kind, None, scrubbed=note is None, note=note)

    def list_items(self, *, limit: int = 20, cursor: str | None = None) -> Page:
        """Every keyed memory of the agent, newest first, a page at a time (browsing)."""
        limit = v.check_limit(limit)
        found, next_cursor = items.list_items(self.store, self.agent_id, limit=limit,
                                              cursor=None if cursor is None else v.check_chunk_id(cursor))
        return Page(found, next_cursor)

    def agent_ids(self, prefix: str = "") -> list[str]:
        """The agents of this database that hold a fact or memory, sorted; only those whose id
        starts with ``prefix``. Database-wide, like :meth:`for_agent`."""
        if not isinstance(prefix, str):
            raise InvalidInput(f"prefix must be a string, got {type(prefix).__name__}")
        return self.store.agent_ids(prefix)

    # -- conversation ---------------------------------------------------------

    def recall_conversation(self, query: str, limit: int = 10) -> list[ConversationHit]:
        """Full-text search over the application's messages table (no embeddings)."""
        if self.settings.messages_table is None:
            raise ConfigError("no messages table is configured (messages_table=None)")
        query = v.check_text(query, "query", max_chars=self.settings.max_query_chars)
        limit = v.check_limit(limit)
        terms = keyword_terms(query)
        if not terms:
            return []
        return self.store.search_messages(self.agent_id, self.settings.messages_table, terms, limit)

    def has_conversation(self) -> bool:
        """Whether ``recall_conversation`` can search: a messages table is configured and exists."""
        table = self.settings.messages_table
        return table is not None and self.store.has_messages_table(table)

    # -- maintenance ----------------------------------------------------------

    def reembed(self, *, progress: Progress | None = None, batch_size: int = 64) -> ReembedResult:
        """Fill this agent's pending vectors with the current embedder."""
        return fill_pending(self.store, self.embedding, self.agent_id, batch_size=batch_size, progress=progress)

    # -- transfer -------------------------------------------------------------

    def export_records(self, *, vectors: bool = False) -> Iterator[ExportRecord]:
        """This agent's memory as records: a header, every chunk (superseded facts
        included, strength fields and all), then every block. ``vectors`` adds each
        chunk's vector. Browsing: nothing counts as retrieved."""
        return transfer.export_records(self.store, self.agent_id, vectors=vectors, now=self.now())

    def import_records(
        self, records: Iterable[Mapping[str, Any]], *, progress: Progress | None = None
    ) -> ImportResult:
        """Import an export into this agent, keeping ids and strength fields.

        Every record is validated before anything is written. Chunks the agent
        already has (same id, or a memory with the same text) are skipped, blocks
        are written when the file's is newer, so importing twice changes nothing.
        Vectors from another model, or none, are replaced by this database's.
        """
        plan = transfer.parse_records(records, self.agent_id, max_chars=self.settings.max_content_chars)
        return transfer.run_import(self.store, self.embedding, self.agent_id, plan, progress=progress)
