"""hippo: long-term memory for LLM agents.

    import hippo
    mem = hippo.open("memory.db", agent_id="marrow-main")
    mem.store_memory("We chose SQLite over PostgreSQL for the prototype")
    mem.recall_memories("which database did we pick?")

The same memory on a ``hippo serve``: ``hippo.connect(url, key=..., agent_id=...)``.

Importing hippo loads no model runtime, SDK or web framework and creates no
file; those load when first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hippo.errors import (
    BlockNotFound,
    ConfigError,
    Conflict,
    EmbedderMismatch,
    Forbidden,
    HippoError,
    InvalidInput,
    LimitExceeded,
    MissingDependency,
    NotFound,
    ProviderError,
    StorageError,
    TextNotFound,
    Unauthorized,
)
from hippo.types import (
    Block,
    BlockResult,
    Chunk,
    Compaction,
    ConversationHit,
    FactHistory,
    FactOutcome,
    ForgetResult,
    Forgotten,
    Hit,
    ImportResult,
    ItemWrite,
    LLMCall,
    MergedWording,
    Recall,
    ReembedResult,
    RememberResult,
    StoreResult,
)
from hippo.wiring import (
    __version__,
    create_messages_table,
    database_exists,
    discard_database,
    open,
    open_async,
    open_keys,
    reembed,
)

if TYPE_CHECKING:
    from hippo.aio import AsyncMemory
    from hippo.client import AsyncRemoteMemory, RemoteMemory
    from hippo.core.compaction.config import CompactionConfig
    from hippo.core.memory import Memory, MemoryInput
    from hippo.core.tools.toolset import Tool, Toolset


__all__ = [
    "__version__",
    "Block", "BlockNotFound", "BlockResult", "LimitExceeded", "TextNotFound", "Chunk", "Conflict", "ConfigError",
    "ConversationHit", "EmbedderMismatch", "FactHistory", "FactOutcome", "ForgetResult", "Forgotten", "HippoError",
    "Hit", "ImportResult", "ItemWrite", "InvalidInput", "LLMCall", "Memory", "MemoryInput", "MergedWording",
    "MissingDependency", "NotFound", "Unauthorized", "Forbidden",
    "ProviderError", "Recall", "ReembedResult", "RememberResult", "StorageError", "StoreResult", "Tool", "Toolset",
    "create_messages_table", "database_exists", "discard_database", "open", "open_async", "open_keys", "reembed",
    "AsyncMemory", "Compaction", "CompactionConfig", "compact", "connect", "connect_async", "RemoteMemory",
    "AsyncRemoteMemory",
]


def connect(url: str, *, key: str | None = None, agent_id: str | None = None,
            timeout: float | None = 300.0) -> "RemoteMemory":
    """One agent's memory on the hippo server at ``url`` (``hippo serve``), with ``Memory``'s
    operations, arguments, result types and errors. ``key``: an API key (default
    ``HIPPO_API_KEY``); ``agent_id``: as :func:`open` finds it (``HIPPO_AGENT_ID``, hippo.toml,
    else ``default``); ``timeout``: seconds a call may take. A key the server refuses raises
    :class:`Unauthorized` (none, or one it does not know) or :class:`Forbidden` (not for this
    agent). Database-wide operations
    (``agent_ids``, ``maintain``, ``scrub``, ...) and ``import_from`` (a file on the server's disk)
    are not offered."""
    from hippo.client import connect as remote

    return remote(url, key=key, agent_id=agent_id, timeout=timeout)


def connect_async(url: str, *, key: str | None = None, agent_id: str | None = None,
                  timeout: float | None = 300.0) -> "AsyncRemoteMemory":
    """:func:`connect`, with every operation a coroutine."""
    from hippo.client import connect_async as remote

    return remote(url, key=key, agent_id=agent_id, timeout=timeout)


def compact(messages: Any, config: "CompactionConfig | dict[str, Any] | None" = None, *,
            previous_summary: str | None = None) -> Compaction:
    """Compact a long message history (OpenAI or Anthropic shapes) into a summary by decay: each
    message classified, weighed and decayed, kept in full, compressed to a line or reduced to a
    pointer. ``config``: a :class:`CompactionConfig`; a mapping of its numbers (``decay_rates``,
    ``sparse_threshold``, ...; never ``log_file`` or ``debug``, which are the operator's) over
    hippo.toml's ``[compaction]`` section; or None for that section. Stores nothing:
    ``Memory.compact`` also keeps what fades."""
    from hippo.core.compaction.compact import compact as run

    return run(messages, config, previous_summary=previous_summary)


def __getattr__(name: str) -> Any:
    if name == "AsyncMemory":
        from hippo.aio import AsyncMemory

        return AsyncMemory
    if name == "Memory":
        from hippo.core.memory import Memory

        return Memory
    if name == "CompactionConfig":
        from hippo.core.compaction.config import CompactionConfig

        return CompactionConfig
    if name == "MemoryInput":
        from hippo.core.memory import MemoryInput

        return MemoryInput
    if name in ("RemoteMemory", "AsyncRemoteMemory"):
        import hippo.client

        return getattr(hippo.client, name)
    if name in ("Tool", "Toolset"):
        from hippo.core.tools import toolset

        return getattr(toolset, name)
    raise AttributeError(f"module 'hippo' has no attribute {name!r}")
