"""The raw-memory operations of one agent: storing (through the one writer), reading and
changing by id, keyed items, forgetting, counting, re-embedding, export and import. Deleting is
for real: the text leaves every file hippo writes (see :meth:`Memories.forget_memory`)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping

from hippo import limits
from hippo.core import receipts, transfer
from hippo.core import validation as v
from hippo.core.context import Capability
from hippo.core.curation import archive
from hippo.core.keywords import ENGLISH_STOPWORDS, keyword_terms
from hippo.core.memories import edits, items, writer
from hippo.core.memories.reembed import Progress, fill_pending
from hippo.core.memories.writer import MemoryInput
from hippo.core.ports import ChunkFilter, SearchQuery
from hippo.core.transfer import ExportRecord
from hippo.errors import InvalidInput, NotFound
from hippo.types import (
    Chunk,
    Erased,
    ForgetResult,
    Forgotten,
    ImportResult,
    ItemWrite,
    Page,
    ReembedResult,
    Stats,
    StoreResult,
)

if TYPE_CHECKING:
    from hippo.core.context import AgentContext
    from hippo.core.experiences.episodic import Episodic

__all__ = ["Memories", "fetch"]


def fetch(ctx: "AgentContext", chunk_id: str) -> Chunk:
    """One chunk of the agent by id (checked), or NotFound; browsing, so not a retrieval."""
    chunk_id = v.check_chunk_id(chunk_id)
    found = ctx.store.get_chunks([chunk_id])
    if not found:
        raise NotFound(f"no memory {chunk_id} for agent {ctx.agent_id!r}")
    return found[0]


class Memories(Capability):
    """Raw memories for one agent; ``episodic`` is the agent's short-term buffer, which
    forgetting and erasing reach too."""

    def __init__(self, ctx: "AgentContext", episodic: "Episodic") -> None:
        super().__init__(ctx)
        self.episodic = episodic

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
        inputs = [writer.check(item, max_chars=self.ctx.settings.max_content_chars) for item in items]
        return writer.write(self.ctx.store, self.ctx.embedding, inputs, self.ctx.now)

    def forget_memory(
        self, description: str, *, preview: bool = False, limit: int = 10, min_similarity: float | None = None,
        receipt: bool = False,
    ) -> ForgetResult:
        """Hard-delete the chunks that match ``description``; ``preview`` deletes nothing.

        A chunk matches when its cosine similarity to the description reaches the
        embedder's forget threshold (``min_similarity`` overrides it), or when it
        contains every meaningful word of the description. At most ``limit`` go.
        ``receipt`` adds the signed proof (:class:`hippo.Receipt`: ``verify_receipt`` checks it again).
        """
        description = v.check_text(description, "description", max_chars=self.ctx.settings.max_query_chars)
        limit = v.check_limit(limit)
        preview = v.check_flag(preview, "preview")
        receipt = v.check_flag(receipt, "receipt")
        threshold = self.ctx.embedding.thresholds.forget
        if min_similarity is not None:
            threshold = v.check_intensity(min_similarity, "min_similarity")
        where = ChunkFilter(include_superseded=True)  # forgetting reaches a fact's history too
        words = tuple(keyword_terms(description, stopwords=ENGLISH_STOPWORDS))
        vector = self.ctx.embedding.query(description)
        found = self.ctx.store.search(SearchQuery(vector, words, where, limit, every_term=True,
                                                              score_all=False))
        matches: dict[str, float | None] = {}
        for chunk_id, sim in sorted(found.similarity.items(), key=lambda item: -item[1]):
            if sim >= threshold:
                matches[chunk_id] = sim
        for chunk_id, _ in sorted(found.bm25.items(), key=lambda item: -item[1]):
            if len(matches) < limit:
                matches.setdefault(chunk_id, None)
        chunks = self.ctx.store.get_chunks(list(matches))
        forgotten = [Forgotten(c.id, c.content, c.kind, matches[c.id]) for c in chunks]
        # The archive too, by the same rule (see archive.forget_archived).
        archived = archive.forget_archived(self.ctx.store, self.ctx.embedding, vector, words,
                                           threshold, limit - len(forgotten))
        forgotten += [Forgotten(c.id, c.content, c.kind, sim) for c, sim in archived]
        # And the short-term buffer, by the same rule as long-term memory; and the capture inbox.
        recent = self.episodic.matching(vector, words, threshold, limit - len(forgotten))
        forgotten += [Forgotten(e.id, e.content, "memory", sim) for e, sim in recent]
        said = self.ctx.store.observed_matching(words, limits.RESULT_LIMIT)
        if preview or not (forgotten or said):
            nothing = receipts.issue(self.ctx, [], {}) if receipt and not preview else None
            return ForgetResult(forgotten, preview=preview, messages=len(said), receipt=nothing)
        gone = [*receipts.gone_of(forgotten), *receipts.wordings(self.ctx.store, [c.id for c in chunks]),
                *(receipts.Gone(f"message {m.seq}", "message", m.content) for m in said)] if receipt else []
        with self.ctx.store.transaction():
            self.ctx.store.delete_chunks([c.id for c in chunks])
            self.ctx.store.delete_archived([c.id for c, _ in archived])
            self.episodic.drop([e.id for e, _ in recent])
            self.ctx.store.clear_observed([m.seq for m in said])
        note = self.ctx.store.database.pending_scrub()
        forgotten = [replace(f, scrubbed=note is None, note=note) for f in forgotten]
        proof = receipts.issue(self.ctx, gone, {"chunks": len(forgotten), "messages": len(said)}) if receipt else None
        return ForgetResult(forgotten, scrubbed=note is None, note=note, messages=len(said), receipt=proof)

    def get_memory(self, chunk_id: str) -> Chunk:
        """One chunk by id; browsing, so it does not count as a retrieval."""
        return fetch(self.ctx, chunk_id)

    def list_memories(self, *, limit: int = 20, cursor: str | None = None, kind: str | None = None) -> Page:
        """Every fact and memory, newest first, superseded facts included; a page at a time.

        Browsing: nothing counts as retrieved. ``cursor`` is a previous page's ``next_cursor``.
        """
        limit = v.check_limit(limit)
        if cursor is not None:
            cursor = v.check_chunk_id(cursor)
        if kind is not None and kind not in ("fact", "memory"):
            raise InvalidInput(f"kind must be 'fact' or 'memory', got {v.shown(kind)}")
        rows = self.ctx.store.list_chunks(limit=limit + 1, before=cursor, kind=kind)
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
        ctx = self.ctx
        edits.update_memory(ctx.store, ctx.embedding, self.get_memory(chunk_id), ctx.now(),
                            content=content, metadata=metadata, max_chars=ctx.settings.max_content_chars)
        return self.get_memory(chunk_id)

    def delete_all(self, *, receipt: bool = False) -> Erased:
        """Hard-delete every memory, fact, block and short-term experience of this agent, and
        nothing of any other; ``receipt`` adds the signed proof (:class:`hippo.Receipt`)."""
        receipt = v.check_flag(receipt, "receipt")
        buffer = self.episodic.buffer
        held = [] if buffer.durable else buffer.entries()
        gone = [*receipts.everything(self.ctx.store), *(receipts.Gone(e.id, "experience", e.content) for e in held)] \
            if receipt else []
        in_process = buffer.take([e.id for e in held])
        erased = edits.erase_agent(self.ctx.store)  # a durable buffer goes with the rest
        erased = replace(erased, short_term=erased.short_term + len(in_process))
        if not receipt:
            return erased
        counts = {"memories": erased.memories, "facts": erased.facts, "blocks": erased.blocks,
                  "short_term": erased.short_term}
        return replace(erased, receipt=receipts.issue(self.ctx, gone, counts))

    def stats(self) -> Stats:
        """How many facts, memories, blocks and pending vectors this agent has."""
        record = self.ctx.store.database.embedder_record()
        return Stats(agent_id=self.ctx.agent_id, **self.ctx.store.counts(),
                     embedder=record[0] if record else None, dimension=record[1] if record else None,
                     database=self.ctx.store.database.location, database_bytes=self.ctx.store.database.size_bytes(),
                     archived=self.ctx.store.count_archived(),
                     short_term=len(self.episodic.short_term()), consolidation=self.episodic.stats())

    def delete_memory(self, chunk_id: str, *, receipt: bool = False) -> Forgotten:
        """Hard-delete one chunk by id, leaving no trace of its text; an archived one too.
        ``receipt`` adds the signed proof (:class:`hippo.Receipt`)."""
        chunk_id = v.check_chunk_id(chunk_id)
        receipt = v.check_flag(receipt, "receipt")
        recent, merged = [e for e in self.episodic.short_term() if e.id == chunk_id], list[receipts.Gone]()
        if recent and self.episodic.drop([chunk_id]):
            note = self.ctx.store.database.pending_scrub() if self.episodic.buffer.durable else None
            gone = Forgotten(chunk_id, recent[0].content, "memory", None, scrubbed=note is None, note=note)
        else:
            archived = self.ctx.store.archived_chunks([chunk_id])
            chunk = archived[0] if archived else self.get_memory(chunk_id)
            merged = receipts.wordings(self.ctx.store, [chunk.id]) if receipt else []
            deleted = self.ctx.store.delete_archived([chunk_id]) if archived \
                else self.ctx.store.delete_chunks([chunk.id])
            if not deleted:
                raise NotFound(f"no memory {chunk_id} for agent {self.ctx.agent_id!r}")
            note = self.ctx.store.database.pending_scrub()
            gone = Forgotten(chunk.id, chunk.content, chunk.kind, None, scrubbed=note is None, note=note)
        if not receipt:
            return gone
        proof = receipts.issue(self.ctx, [*receipts.gone_of([gone]), *merged], {"chunks": 1})
        return replace(gone, receipt=proof)

    def put_item(self, key: str, content: str, metadata: Mapping[str, Any] | None = None, *,
                 intensity: float = 0.5) -> ItemWrite:
        """Make ``key`` hold this memory: a new one, or the key's memory changed in place (same
        id and strength; the old text leaves every file). Unlike :meth:`store_memory`, two keys
        may hold the same text (see :mod:`hippo.core.memories.items`)."""
        return items.put_item(self.ctx.store, self.ctx.embedding, key, content, metadata=metadata,
                              now=self.ctx.now(), intensity=intensity, max_chars=self.ctx.settings.max_content_chars)

    def get_item(self, key: str) -> Chunk | None:
        """The memory that ``key`` holds, or ``None``; browsing, so not a retrieval."""
        return items.get_item(self.ctx.store, key)

    def delete_item(self, key: str) -> Forgotten | None:
        """Hard-delete the memory ``key`` holds (the forget guarantee); ``None`` when it holds none."""
        chunk = items.delete_item(self.ctx.store, key)
        if chunk is None:
            return None
        note = self.ctx.store.database.pending_scrub()
        return Forgotten(chunk.id, chunk.content, chunk.kind, None, scrubbed=note is None, note=note)

    def list_items(self, *, limit: int = 20, cursor: str | None = None) -> Page:
        """Every keyed memory of the agent, newest first, a page at a time (browsing)."""
        limit = v.check_limit(limit)
        found, next_cursor = items.list_items(self.ctx.store, limit=limit,
                                              cursor=None if cursor is None else v.check_chunk_id(cursor))
        return Page(found, next_cursor)

    def reembed(self, *, progress: Progress | None = None, batch_size: int = 64) -> ReembedResult:
        """Fill this agent's pending vectors with the current embedder."""
        ctx = self.ctx
        return fill_pending(ctx.store.database, ctx.embedding, ctx.agent_id, batch_size=batch_size, progress=progress)

    def export_records(self, *, vectors: bool = False) -> Iterator[ExportRecord]:
        """This agent's memory as records: a header, every chunk (superseded facts
        included, strength fields and all), then every block. ``vectors`` adds each
        chunk's vector. Browsing: nothing counts as retrieved."""
        return transfer.export_records(self.ctx.store, vectors=v.check_flag(vectors, "vectors"), now=self.ctx.now())

    def import_records(
        self, records: Iterable[Mapping[str, Any]], *, progress: Progress | None = None
    ) -> ImportResult:
        """Import an export into this agent, keeping ids and strength fields.

        Every record is validated before anything is written. Chunks the agent
        already has (same id, or a memory with the same text) are skipped, blocks
        are written when the file's is newer, so importing twice changes nothing.
        Vectors from another model, or none, are replaced by this database's.
        """
        progress = v.check_progress(progress)
        plan = transfer.parse_records(records, self.ctx.agent_id, max_chars=self.ctx.settings.max_content_chars)
        return transfer.run_import(self.ctx.store, self.ctx.embedding, plan, progress=progress)

    def scrub(self) -> str | None:
        """Remove the text of deleted memories from the database files now, for the whole database;
        None when nothing is left to remove, else why not yet. SQLite does this by itself after
        every forget; PostgreSQL keeps deleted rows' bytes until this runs ``VACUUM FULL`` (which
        locks the tables while it rewrites them: an operator's step, ``hippo scrub``)."""
        self.ctx.store.database.scrub()
        return self.ctx.store.database.pending_scrub()

    def holds_nothing(self) -> bool:
        """Whether nobody has written to this database yet: no chunk, block or key of any agent."""
        return self.ctx.store.database.holds_nothing()

    def agent_ids(self, prefix: str = "") -> list[str]:
        """The agents of this database that hold a fact or memory, sorted; only those whose id
        starts with ``prefix``. Database-wide, like :meth:`for_agent`."""
        prefix = v.check_text(prefix, "prefix", max_chars=128, allow_empty=True)  # an agent id's length
        return self.ctx.store.database.agent_ids(prefix)

    def agent_of(self, chunk_id: str) -> str | None:
        """The agent of this database that holds fact or memory ``chunk_id`` (ids are unique across
        the database), or None: no agent does. Database-wide, like :meth:`agent_ids`: for a caller
        that answers for several agents by id alone (``hippo.compat.mem0``'s ``get``)."""
        return self.ctx.store.database.agent_of(v.check_chunk_id(chunk_id))
