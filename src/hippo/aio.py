"""The async API: every operation of :class:`~hippo.core.memory.Memory` as a coroutine.

There is one implementation. ``AsyncMemory`` runs each call of the ``Memory`` it wraps in a
worker thread (``asyncio.to_thread``), so the event loop never waits on the database or the
model; the store's own lock orders the writes, as it does for the threads of ``hippo serve``.
Each coroutine below is the capability's method itself, named once
(:class:`~hippo.core.operation.AsyncOperation`): type checkers and editors see its parameters, and
its return type wrapped in ``Awaitable``. A test checks that every operation of ``Memory`` is here.

    mem = hippo.open_async("memory.db", agent_id="alice")
    await mem.store_memory("We chose SQLite")
    hits = await mem.recall_memories("which database?")
    await mem.close()
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Callable

from hippo.core.audit.operations import Auditor
from hippo.core.blocks.operations import Blocks
from hippo.core.capture.operations import Capture
from hippo.core.compaction.operations import Compactor
from hippo.core.curation.operations import Curation
from hippo.core.experiences.operations import Experiences
from hippo.core.facts.operations import Facts
from hippo.core.memories.browsing import Browser
from hippo.core.memories.operations import Memories
from hippo.core.memories.summary import Summaries
from hippo.core.memory import AgentTools, Memory
from hippo.core.operation import AsyncOperation
from hippo.core.recall.operations import Recaller
from hippo.core.receipts import Receipts

if TYPE_CHECKING:
    from hippo.core.ports.database import BackupResult, CheckReport, Progress

__all__ = ["ASYNC_OPERATIONS", "AsyncMemory"]


class AsyncMemory:
    """One agent's memory, every operation awaitable; ``async with`` closes it."""

    def __init__(self, memory: Memory) -> None:
        self.sync = memory  # the one implementation, also usable as it is
        self.agent_id, self.settings = memory.agent_id, memory.settings

    def capability(self, method: Callable[..., Any]) -> object:
        return self.sync.capability(method)

    def for_agent(self, agent_id: str) -> "AsyncMemory":
        """The same database, embedder and LLM, scoped to another agent."""
        return AsyncMemory(self.sync.for_agent(agent_id))

    def tools(self, *, recall_max_tokens: int = 1500) -> AgentTools:
        """The agent tools (their calls are sync: run them with ``asyncio.to_thread`` in a loop)."""
        return self.sync.tools(recall_max_tokens=recall_max_tokens)

    async def export_records(self, *, vectors: bool = False) -> list[Any]:
        """The agent's export records, read in a worker thread (a list: an iterator would read on the loop)."""
        return await asyncio.to_thread(lambda: list(self.sync.export_records(vectors=vectors)))

    async def backup(self, path: str, *, overwrite: bool = False, progress: "Progress | None" = None) -> "BackupResult":
        """A consistent copy of the whole database at ``path``, taken in a worker thread
        (:meth:`Memory.backup <hippo.core.memory.Memory.backup>`)."""
        return await asyncio.to_thread(lambda: self.sync.backup(path, overwrite=overwrite, progress=progress))

    async def check(self) -> "CheckReport":
        """Check the whole database, in a worker thread (:meth:`Memory.check <hippo.core.memory.Memory.check>`)."""
        return await asyncio.to_thread(self.sync.check)

    async def close(self) -> None:
        await asyncio.to_thread(self.sync.close)

    async def __aenter__(self) -> "AsyncMemory":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- raw memories ---------------------------------------------------------
    store_memory = AsyncOperation(Memories.store_memory)
    store_memories = AsyncOperation(Memories.store_memories)
    get_memory = AsyncOperation(Memories.get_memory)
    list_memories = AsyncOperation(Memories.list_memories)
    update_memory = AsyncOperation(Memories.update_memory)
    update_metadata = AsyncOperation(Memories.update_metadata)
    forget_memory = AsyncOperation(Memories.forget_memory)
    delete_memory = AsyncOperation(Memories.delete_memory)
    delete_all = AsyncOperation(Memories.delete_all)
    put_item = AsyncOperation(Memories.put_item)
    get_item = AsyncOperation(Memories.get_item)
    delete_item = AsyncOperation(Memories.delete_item)
    list_items = AsyncOperation(Memories.list_items)
    stats = AsyncOperation(Memories.stats)
    reembed = AsyncOperation(Memories.reembed)
    import_records = AsyncOperation(Memories.import_records)
    scrub = AsyncOperation(Memories.scrub)
    holds_nothing = AsyncOperation(Memories.holds_nothing)
    agent_ids = AsyncOperation(Memories.agent_ids)
    agent_of = AsyncOperation(Memories.agent_of)
    browse_memories = AsyncOperation(Browser.browse_memories)
    memory_summary = AsyncOperation(Summaries.memory_summary)
    # -- facts ----------------------------------------------------------------
    remember_facts = AsyncOperation(Facts.remember_facts)
    fact_history = AsyncOperation(Facts.fact_history)
    split_fact = AsyncOperation(Facts.split_fact)
    # -- recall ---------------------------------------------------------------
    recall_memories = AsyncOperation(Recaller.recall_memories)
    recall_conversation = AsyncOperation(Recaller.recall_conversation)
    has_conversation = AsyncOperation(Recaller.has_conversation)
    # -- memory blocks --------------------------------------------------------
    recall_memory_block = AsyncOperation(Blocks.recall_memory_block)
    memory_block = AsyncOperation(Blocks.memory_block)
    memory_blocks = AsyncOperation(Blocks.memory_blocks)
    replace_memory_block = AsyncOperation(Blocks.replace_memory_block)
    append_memory_block = AsyncOperation(Blocks.append_memory_block)
    set_memory_block = AsyncOperation(Blocks.set_memory_block)
    context = AsyncOperation(Blocks.context)
    # -- experiences ----------------------------------------------------------
    record_experience = AsyncOperation(Experiences.record_experience)
    short_term = AsyncOperation(Experiences.short_term)
    recall = AsyncOperation(Experiences.recall)
    recall_related = AsyncOperation(Experiences.recall_related)
    short_term_agents = AsyncOperation(Experiences.short_term_agents)
    consolidate = AsyncOperation(Experiences.consolidate)
    # -- capture and surfacing ------------------------------------------------
    observe = AsyncOperation(Capture.observe)
    process_pending = AsyncOperation(Capture.process_pending)
    pending_agents = AsyncOperation(Capture.pending_agents)
    surface = AsyncOperation(Capture.surface)
    add_session_items = AsyncOperation(Capture.add_session_items)
    session_items = AsyncOperation(Capture.session_items)
    pop_session_item = AsyncOperation(Capture.pop_session_item)
    clear_session_items = AsyncOperation(Capture.clear_session_items)
    # -- compaction -----------------------------------------------------------
    compact = AsyncOperation(Compactor.compact)
    # -- curation -------------------------------------------------------------
    reinforce_memory = AsyncOperation(Curation.reinforce_memory)
    demote_memory = AsyncOperation(Curation.demote_memory)
    related = AsyncOperation(Curation.related)
    maintain = AsyncOperation(Curation.maintain)
    search_archive = AsyncOperation(Curation.search_archive)
    get_archived = AsyncOperation(Curation.get_archived)
    restore_memory = AsyncOperation(Curation.restore_memory)
    import_from = AsyncOperation(Curation.import_from)
    # -- the audit trail ------------------------------------------------------
    audit = AsyncOperation(Auditor.audit)
    verify_audit = AsyncOperation(Auditor.verify_audit)
    trim_audit = AsyncOperation(Auditor.trim_audit)
    # -- forget receipts ------------------------------------------------------
    verify_receipt = AsyncOperation(Receipts.verify_receipt)


# Memory's operations that are coroutines here.
ASYNC_OPERATIONS = tuple(name for name, member in vars(AsyncMemory).items() if isinstance(member, AsyncOperation))
