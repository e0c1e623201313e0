"""The async API: every operation of :class:`~hippo.core.memory.Memory` as a coroutine.

There is one implementation. ``AsyncMemory`` runs each call of the ``Memory`` it
wraps in a worker thread (``asyncio.to_thread``), so the event loop never
waits on SQLite or the model; the store's own lock orders the writes, as it does
for the threads of ``hippo serve``. The coroutines are generated from the list
below, with the sync method's name, signature and docstring: a new operation
of ``Memory`` becomes async by adding its name here, never by copying it.

    mem = hippo.open_async("memory.db", agent_id="alice")
    await mem.store_memory("We chose SQLite")
    hits = await mem.recall_memories("which database?")
    await mem.close()
"""

from __future__ import annotations

import asyncio
import functools
from typing import TYPE_CHECKING, Any, Callable

from hippo.api import Memory

if TYPE_CHECKING:
    from hippo.config import Settings
    from hippo.surfaces.tools import Toolset

__all__ = ["ASYNC_OPERATIONS", "AsyncMemory"]

# Memory's operations that read or write the database or call a model: coroutines here.
ASYNC_OPERATIONS = (
    "store_memory", "store_memories", "remember_facts", "fact_history", "split_fact", "recall_memories",
    "forget_memory", "get_memory", "list_memories", "browse_memories", "update_metadata", "update_memory",
    "reinforce_memory", "demote_memory", "delete_all", "delete_memory", "stats", "memory_summary",
    "recall_memory_block", "memory_block", "memory_blocks", "replace_memory_block", "append_memory_block",
    "set_memory_block", "context", "recall_conversation", "has_conversation", "reembed", "import_records",
    "put_item", "get_item", "delete_item", "list_items", "agent_ids", "holds_nothing", "scrub",
    "maintain", "search_archive", "get_archived", "restore_memory", "related", "import_from",
    "record_experience", "short_term", "recall", "recall_related", "consolidate", "short_term_agents",
    "observe", "process_pending", "surface", "pending_agents", "compact",
)


class AsyncMemory:
    """One agent's memory, every operation awaitable; ``async with`` closes it."""

    def __init__(self, memory: Memory) -> None:
        self.sync = memory  # the one implementation, also usable as it is

    @property
    def agent_id(self) -> str:
        return self.sync.agent_id

    @property
    def settings(self) -> "Settings":
        return self.sync.settings

    def for_agent(self, agent_id: str) -> "AsyncMemory":
        """The same database, embedder and LLM, scoped to another agent."""
        return AsyncMemory(self.sync.for_agent(agent_id))

    def tools(self, **options: Any) -> "Toolset":
        """The agent tools (their calls are sync: run them with ``asyncio.to_thread`` in a loop)."""
        return self.sync.tools(**options)

    async def export_records(self, *, vectors: bool = False) -> list[Any]:
        """The agent's export records, read in a worker thread (a list: an iterator would read on the loop)."""
        return await asyncio.to_thread(lambda: list(self.sync.export_records(vectors=vectors)))

    async def close(self) -> None:
        await asyncio.to_thread(self.sync.close)

    async def __aenter__(self) -> "AsyncMemory":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def _coroutine(name: str) -> Callable[..., Any]:
    method = getattr(Memory, name)

    @functools.wraps(method)
    async def call(self: AsyncMemory, *args: Any, **kwargs: Any) -> Any:
        return await asyncio.to_thread(method, self.sync, *args, **kwargs)

    return call


for _name in ASYNC_OPERATIONS:
    setattr(AsyncMemory, _name, _coroutine(_name))
