"""hippo: long-term memory for LLM agents.

    import hippo
    mem = hippo.open("memory.db", agent_id="marrow-main")
    mem.store_memory("We chose SQLite over PostgreSQL for the prototype")
    mem.recall_memories("which database did we pick?")

Importing hippo loads no model runtime, SDK or web framework and creates no
file; those load when first used.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from hippo.clock import Clock
from hippo.errors import (
    BlockNotFound,
    ConfigError,
    Conflict,
    EmbedderMismatch,
    HippoError,
    InvalidInput,
    LimitExceeded,
    MissingDependency,
    NotFound,
    ProviderError,
    StorageError,
    TextNotFound,
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
    LLMCall,
    MergedWording,
    Recall,
    ReembedResult,
    RememberResult,
    StoreResult,
)

if TYPE_CHECKING:
    from hippo.aio import AsyncMemory
    from hippo.api import Memory
    from hippo.core.compaction_config import CompactionConfig
    from hippo.core.keys import KeyRing
    from hippo.core.memory import MemoryInput
    from hippo.core.reembed import Progress
    from hippo.providers.base import LLM, Embedder
    from hippo.surfaces.tools import Tool, Toolset

__version__ = "0.1.0"

__all__ = [
    "Block", "BlockNotFound", "BlockResult", "LimitExceeded", "TextNotFound", "Chunk", "Conflict", "ConfigError",
    "ConversationHit", "EmbedderMismatch", "FactHistory", "FactOutcome", "ForgetResult", "Forgotten", "HippoError",
    "Hit", "ImportResult", "InvalidInput", "LLMCall", "Memory", "MemoryInput", "MergedWording", "MissingDependency",
    "NotFound",
    "ProviderError", "Recall", "ReembedResult", "RememberResult", "StorageError", "StoreResult", "Tool", "Toolset",
    "create_messages_table", "database_exists", "discard_database", "open", "open_async", "open_keys", "reembed",
    "AsyncMemory", "Compaction", "CompactionConfig", "compact",
]


def _embedder(spec: "str | Embedder | None", options: dict[str, Any]) -> "Embedder | None":
    from hippo.providers.registry import create_embedder

    if spec is None or (isinstance(spec, str) and spec.strip().lower() in {"none", "off", ""}):
        return None
    return create_embedder(spec, **options)


def _recorded_local(store: Any, spec: "str | Embedder") -> "str | Embedder":
    """``local`` without a model name means the local model the database records (one made
    with ``local:multilingual-e5-small`` keeps it), and the default one for a new database."""
    from hippo.providers.registry import parse_spec

    if not isinstance(spec, str) or parse_spec(spec) != ("local", None):
        return spec
    record = store.embedder_record()
    return record[0] if record is not None and record[0].startswith("local:") else spec


def _llm(spec: "str | LLM | None", options: dict[str, Any]) -> "LLM | None":
    from hippo.providers.registry import create_llm

    if spec is None or (isinstance(spec, str) and spec.strip().lower() in {"none", "off", ""}):
        return None
    return create_llm(spec, **options)


def open(  # noqa: A001 - hippo.open mirrors sqlite3.connect / io.open
    path: str | Path | None = None,
    *,
    agent_id: str | None = None,
    embedder: "str | Embedder | None" = None,
    embedder_options: dict[str, Any] | None = None,
    llm: "str | LLM | None" = None,
    llm_options: dict[str, Any] | None = None,
    clock: Clock | None = None,
    **settings: Any,
) -> "Memory":
    """Open (creating if needed) a memory database for one agent.

    Unset arguments come from ``HIPPO_*`` variables, then ``hippo.toml``, then the
    defaults: ``hippo.db``, agent ``default``, the ``local`` embedder and no LLM
    (facts are extracted by offline rules). Pass ``embedder="none"`` for
    keyword-only memory, ``llm="openai:gpt-4o-mini"`` (or any LLM) for extraction.
    """
    from hippo.api import Memory
    from hippo.clock import system_clock
    from hippo.config import load_settings
    from hippo.core.validation import check_agent_id
    from hippo.stores.registry import for_agent, open_store

    if "messages_table" in settings and settings["messages_table"] is None:
        settings["messages_table"] = "none"  # an explicit None turns conversation search off
    embedder_spec = embedder if embedder is None or isinstance(embedder, str) else None
    llm_spec = llm if llm is None or isinstance(llm, str) else None
    config = load_settings(db=str(path) if path is not None else None, agent_id=agent_id,
                           embedder=embedder_spec, llm=llm_spec, **settings)
    check_agent_id(config.agent_id)  # before the store creates the file
    chosen = embedder if embedder is not None and not isinstance(embedder, str) else config.embedder
    chat = _llm(llm if llm is not None and not isinstance(llm, str) else config.llm, llm_options or {})
    store = open_store(for_agent(config.db, config.agent_id, make_folder=True), ann_threshold=config.ann_threshold,
                       retrieval_delay=config.retrieval_delay)
    try:
        model = _embedder(_recorded_local(store, chosen), embedder_options or {})
        return Memory(store, agent_id=config.agent_id, embedder=model, settings=config, llm=chat,
                      clock=clock or system_clock)
    except BaseException:
        store.close()
        raise


def reembed(
    path: str | Path,
    *,
    embedder: "str | Embedder",
    embedder_options: dict[str, Any] | None = None,
    progress: "Progress | None" = None,
    batch_size: int = 64,
) -> ReembedResult:
    """Switch the database at ``path`` to ``embedder``: every chunk of every agent is re-embedded.

    With the model the database already uses, only pending vectors are filled.
    """
    from hippo.config import load_settings
    from hippo.core.embedding import EmbeddingService
    from hippo.core.reembed import switch_model
    from hippo.stores.registry import open_store

    model = _embedder(embedder, embedder_options or {})
    if model is None:
        raise ConfigError("reembed needs an embedder")
    store = open_store(load_settings(db=str(path)).db)
    try:
        service = EmbeddingService(model, store, verify=False)
        return switch_model(store, service, progress=progress, batch_size=batch_size)
    finally:
        store.close()


def database_exists(path: str | Path, agent_id: str | None = None) -> bool:
    """Whether the database a path or URL names is there already (a server database always is);
    with a file per agent (``memories/{agent_id}.db``), that agent's."""
    from hippo.config import load_settings
    from hippo.stores.registry import exists, for_agent

    config = load_settings(db=str(path), agent_id=agent_id)
    return exists(for_agent(config.db, config.agent_id))


def discard_database(path: str | Path, agent_id: str | None = None) -> None:
    """Remove a database file this process created and nobody wrote to (``Memory.holds_nothing``);
    a server database is never removed. For tools that must not leave an empty file behind."""
    from hippo.config import load_settings
    from hippo.stores.registry import discard, for_agent

    config = load_settings(db=str(path), agent_id=agent_id)
    discard(for_agent(config.db, config.agent_id))


def open_keys(path: str | Path | None = None, agent_id: str | None = None) -> "KeyRing":
    """The API keys of a database (``hippo keys``), opened without an embedder or model check;
    close it (or use ``with``) when done. With a file per agent, the keys live in the file of the
    server's own agent (``--agent``, ``HIPPO_AGENT_ID``)."""
    from hippo.config import load_settings
    from hippo.core.keys import KeyRing
    from hippo.stores.registry import for_agent, open_store

    config = load_settings(db=str(path) if path is not None else None, agent_id=agent_id)
    return KeyRing(open_store(for_agent(config.db, config.agent_id, make_folder=True)), owns_store=True)


def create_messages_table(target: Any, name: str = "messages") -> None:
    """Create a messages table with its full-text index, for applications that have none.
    ``target`` is a database name (path or URL) or an open ``sqlite3.Connection``."""
    from hippo.stores.registry import create_messages_table as create

    create(target, name)


def open_async(path: str | Path | None = None, **options: Any) -> "AsyncMemory":
    """:func:`open`, with every operation a coroutine (:class:`~hippo.aio.AsyncMemory`): the same
    arguments, the same one implementation, run in worker threads."""
    from hippo.aio import AsyncMemory

    return AsyncMemory(open(path, **options))


def compact(messages: Any, config: "CompactionConfig | dict[str, Any] | None" = None, *,
            previous_summary: str | None = None) -> Compaction:
    """Compact a long message history (OpenAI or Anthropic shapes) into seed 004's summary: each
    message classified, weighed and decayed, kept in full, compressed to a line or reduced to a
    pointer. ``config``: a :class:`CompactionConfig`; a mapping of its numbers (``decay_rates``,
    ``sparse_threshold``, ...; never ``log_file`` or ``debug``, which are the operator's) over
    hippo.toml's ``[compaction]`` section; or None for that section. Stores nothing:
    ``Memory.compact`` also keeps what fades."""
    from hippo.core.compaction import compact as run

    return run(messages, config, previous_summary=previous_summary)


def __getattr__(name: str) -> Any:
    if name == "AsyncMemory":
        from hippo.aio import AsyncMemory

        return AsyncMemory
    if name == "Memory":
        from hippo.api import Memory

        return Memory
    if name == "CompactionConfig":
        from hippo.core.compaction_config import CompactionConfig

        return CompactionConfig
    if name == "MemoryInput":
        from hippo.core.memory import MemoryInput

        return MemoryInput
    if name in ("Tool", "Toolset"):
        from hippo.surfaces import tools

        return getattr(tools, name)
    raise AttributeError(f"module 'hippo' has no attribute {name!r}")
