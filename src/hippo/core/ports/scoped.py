"""One agent's view of a store: every per-agent operation with the agent's id bound once.

A backend implements the :class:`~hippo.core.ports.Store` protocol, whose per-agent methods
take the agent's id first (``store.get_chunks(agent_id, ids)``): one connection pool and one
schema serve every agent of the database. The core works through an :class:`AgentStore`
instead (``scope.get_chunks(ids)``), made once per agent, so no operation of one agent can name
another's rows by passing the wrong id. It is assembled from one scope per part of the protocol
(chunks, blocks, archive, links, experiences, capture, sessions, summaries, merges, conversation); a
capability that needs only one part can say so in its types. What is database-wide (the
transaction, keys, scrubbing, the embedder's record, every agent's pending work) stays on
``scope.database``.

Each line ``get_chunks = Bound(ChunkStore.get_chunks)`` names the protocol's method once; type
checkers see its parameters without the agent's id (:class:`Bound` is generic over them).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Callable, Concatenate, ContextManager, Generic, ParamSpec, TypeVar, overload

from hippo.core.ports import (
    ArchiveStore,
    AuditStore,
    BlockStore,
    CaptureStore,
    ChunkStore,
    ConversationStore,
    ExperienceStore,
    LinkStore,
    MergeStore,
    RemnantStore,
    SessionStore,
    SummaryStore,
)

if TYPE_CHECKING:
    from hippo.core.ports import RetrievalQueue, Store

__all__ = ["AgentStore", "Bound"]

P = ParamSpec("P")
R = TypeVar("R")


class Bound(Generic[P, R]):
    """A per-agent method of the store, with the scope's agent id as its first argument."""

    def __init__(self, method: Callable[Concatenate[Any, str, P], R]) -> None:
        self.name = method.__name__
        self.__doc__ = method.__doc__

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> "Bound[P, R]": ...
    @overload
    def __get__(self, obj: "Scope", owner: type | None = None) -> Callable[P, R]: ...

    def __get__(self, obj: "Scope | None", owner: type | None = None) -> Any:
        if obj is None:
            return self
        return functools.partial(getattr(obj.database, self.name), obj.agent_id)


class Scope:
    """The database and the agent every part below is bound to."""

    def __init__(self, database: "Store", agent_id: str) -> None:
        self.database = database
        self.agent_id = agent_id

    def transaction(self) -> ContextManager[None]:
        """The database's transaction (every agent's writes share it)."""
        return self.database.transaction()


class ChunkScope(Scope):
    memories_by_hash = Bound(ChunkStore.memories_by_hash)
    insert_chunks = Bound(ChunkStore.insert_chunks)
    update_strength = Bound(ChunkStore.update_strength)
    record_retrievals = Bound(ChunkStore.record_retrievals)
    write_retrievals = Bound(ChunkStore.write_retrievals)
    supersede = Bound(ChunkStore.supersede)
    superseded_by = Bound(ChunkStore.superseded_by)
    set_vectors = Bound(ChunkStore.set_vectors)
    get_chunks = Bound(ChunkStore.get_chunks)
    score = Bound(ChunkStore.score)
    get_vectors = Bound(ChunkStore.get_vectors)
    neighbours = Bound(ChunkStore.neighbours)
    lengths = Bound(ChunkStore.lengths)
    list_chunks = Bound(ChunkStore.list_chunks)
    update_metadata = Bound(ChunkStore.update_metadata)
    known_ids = Bound(ChunkStore.known_ids)
    counts = Bound(ChunkStore.counts)
    search = Bound(ChunkStore.search)
    delete_chunks = Bound(ChunkStore.delete_chunks)
    add_feedback = Bound(ChunkStore.add_feedback)
    update_content = Bound(ChunkStore.update_content)
    delete_agent = Bound(ChunkStore.delete_agent)
    pending_vectors = Bound(ChunkStore.pending_vectors)
    count_pending = Bound(ChunkStore.count_pending)

    @property
    def retrievals(self) -> "RetrievalQueue":
        """The database's queue of recalls' retrieval events (every agent's events share it)."""
        return self.database.retrievals


class BlockScope(Scope):
    get_block = Bound(BlockStore.get_block)
    put_block = Bound(BlockStore.put_block)
    list_blocks = Bound(BlockStore.list_blocks)


class ConversationScope(Scope):
    search_messages = Bound(ConversationStore.search_messages)


class ArchiveScope(Scope):
    prune_candidates = Bound(ArchiveStore.prune_candidates)
    archive_chunks = Bound(ArchiveStore.archive_chunks)
    archived_vectors = Bound(ArchiveStore.archived_vectors)
    set_archived_vectors = Bound(ArchiveStore.set_archived_vectors)
    archived_chunks = Bound(ArchiveStore.archived_chunks)
    list_archived = Bound(ArchiveStore.list_archived)
    search_archive = Bound(ArchiveStore.search_archive)
    restore_chunks = Bound(ArchiveStore.restore_chunks)
    delete_archived = Bound(ArchiveStore.delete_archived)
    count_archived = Bound(ArchiveStore.count_archived)


class LinkScope(Scope):
    strengthen_links = Bound(LinkStore.strengthen_links)
    prune_links = Bound(LinkStore.prune_links)
    links = Bound(LinkStore.links)


class ExperienceScope(Scope):
    put_experiences = Bound(ExperienceStore.put_experiences)
    experience_records = Bound(ExperienceStore.experience_records)
    list_experiences = Bound(ExperienceStore.list_experiences)
    related_experiences = Bound(ExperienceStore.related_experiences)
    short_term_append = Bound(ExperienceStore.short_term_append)
    short_term_entries = Bound(ExperienceStore.short_term_entries)
    short_term_vectors = Bound(ExperienceStore.short_term_vectors)
    set_short_term_vectors = Bound(ExperienceStore.set_short_term_vectors)
    short_term_remove = Bound(ExperienceStore.short_term_remove)
    add_stats = Bound(ExperienceStore.add_stats)
    read_stats = Bound(ExperienceStore.read_stats)


class CaptureScope(Scope):
    observe_messages = Bound(CaptureStore.observe_messages)
    pending_sessions = Bound(CaptureStore.pending_sessions)
    pending_messages = Bound(CaptureStore.pending_messages)
    capture_cursor = Bound(CaptureStore.capture_cursor)
    observed = Bound(CaptureStore.observed)
    observed_tail = Bound(CaptureStore.observed_tail)
    advance_cursor = Bound(CaptureStore.advance_cursor)
    observed_matching = Bound(CaptureStore.observed_matching)
    clear_observed = Bound(CaptureStore.clear_observed)
    surfaced_ids = Bound(CaptureStore.surfaced_ids)
    mark_surfaced = Bound(CaptureStore.mark_surfaced)


class SessionScope(Scope):
    add_session_items = Bound(SessionStore.add_session_items)
    session_items = Bound(SessionStore.session_items)
    pop_session_item = Bound(SessionStore.pop_session_item)
    clear_session_items = Bound(SessionStore.clear_session_items)


class SummaryScope(Scope):
    chunk_summary = Bound(SummaryStore.chunk_summary)
    browse_chunks = Bound(SummaryStore.browse_chunks)
    add_daily = Bound(SummaryStore.add_daily)
    read_daily = Bound(SummaryStore.read_daily)


class MergeScope(Scope):
    add_merged = Bound(MergeStore.add_merged)
    merged_wordings = Bound(MergeStore.merged_wordings)
    remove_merged = Bound(MergeStore.remove_merged)
    known_merge_ids = Bound(MergeStore.known_merge_ids)


class AuditScope(Scope):
    audit_records = Bound(AuditStore.audit_records)
    audit_chain = Bound(AuditStore.audit_chain)
    audit_head = Bound(AuditStore.audit_head)
    trim_audit = Bound(AuditStore.trim_audit)


class RemnantScope(Scope):
    remaining_ids = Bound(RemnantStore.remaining_ids)
    stored_texts = Bound(RemnantStore.stored_texts)
    index_states = Bound(RemnantStore.index_states)


class AgentStore(ChunkScope, BlockScope, ConversationScope, ArchiveScope, LinkScope, ExperienceScope, CaptureScope,
                 SessionScope, SummaryScope, MergeScope, AuditScope, RemnantScope):
    """Everything of one agent in the database (see the module's docstring)."""
