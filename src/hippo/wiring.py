"""The one composition root: settings -> store, embedder, LLM -> :class:`~hippo.core.memory.Memory`.

Every way into hippo opens its parts here: :func:`hippo.open` and the other functions of the
package, and through them the CLI, the HTTP service, the MCP server and the integrations. This
is the one module that knows all the layers: the settings (:mod:`hippo.config`), the store
registry (:mod:`hippo.stores.registry`), the provider registry (:mod:`hippo.providers.registry`),
and the core. It builds the stores, the providers and each memory's agent tools
(:mod:`hippo.core.tools.toolset`, handed to the memory so that its facade never builds them), and
imports none of the ways in (:mod:`hippo.interfaces`): they import it.

Nothing heavy is imported at module level: importing hippo stays cheap, and each part loads when
a function here first needs it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from hippo.clock import Clock
from hippo.config import Settings, load_settings
from hippo.errors import ConfigError

if TYPE_CHECKING:
    from hippo.aio import AsyncMemory
    from hippo.core.keys import KeyRing
    from hippo.core.memories.reembed import Progress
    from hippo.core.memory import AgentTools, Memory
    from hippo.core.ports import Store
    from hippo.core.ports.database import RestoreResult
    from hippo.providers.base import LLM, Embedder
    from hippo.types import ReembedResult

__version__ = "0.1.0"

__all__ = ["__version__", "create_messages_table", "database_exists", "discard_database", "embedder", "llm", "open",
           "open_async", "open_keys", "reembed", "restore", "settings", "Wiring"]

_OFF = {"none", "off", ""}


def settings(path: str | Path | None = None, **overrides: Any) -> Settings:
    """The settings of a memory: arguments > ``HIPPO_*`` environment > ``hippo.toml`` > defaults."""
    return load_settings(db=str(path) if path is not None else None, **overrides)


def embedder(spec: "str | Embedder | None", options: dict[str, Any] | None = None) -> "Embedder | None":
    """The embedder a spec names (``local``, ``ollama:...``, ``openai:...``), or None for keywords only."""
    from hippo.providers.registry import create_embedder

    if spec is None or (isinstance(spec, str) and spec.strip().lower() in _OFF):
        return None
    return create_embedder(spec, **(options or {}))


def llm(spec: "str | LLM | None", options: dict[str, Any] | None = None) -> "LLM | None":
    """The LLM a spec names (``openai:gpt-4o-mini``, ...), or None for the offline rules."""
    from hippo.providers.registry import create_llm

    if spec is None or (isinstance(spec, str) and spec.strip().lower() in _OFF):
        return None
    return create_llm(spec, **(options or {}))


class Wiring:
    """What each memory borrows from here (:class:`~hippo.core.memory.Assembly`): another agent's
    store when each agent has a database of its own, and the agent tools."""

    def agent_store(self, settings: Settings, agent_id: str) -> "Store | None":
        from hippo.stores.registry import for_agent, open_store, per_agent

        if not per_agent(settings.db):
            return None
        return open_store(for_agent(settings.db, agent_id, make_folder=True), ann_threshold=settings.ann_threshold,
                          retrieval_delay=settings.retrieval_delay)

    def tools(self, memory: "Memory", *, recall_max_tokens: int) -> "AgentTools":
        from hippo.core.tools.toolset import Toolset

        return Toolset(memory, recall_max_tokens=recall_max_tokens)


WIRING = Wiring()


def _recorded_local(store: "Store", spec: "str | Embedder") -> "str | Embedder":
    """``local`` without a model name means the local model the database records (one made
    with ``local:multilingual-e5-small`` keeps it), and the default one for a new database."""
    from hippo.providers.registry import parse_spec

    if not isinstance(spec, str) or parse_spec(spec) != ("local", None):
        return spec
    record = store.embedder_record()
    return record[0] if record is not None and record[0].startswith("local:") else spec


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
    from hippo.clock import system_clock
    from hippo.core.memory import Memory
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
    chat = _llm(llm if llm is not None and not isinstance(llm, str) else config.llm, llm_options)
    store = open_store(for_agent(config.db, config.agent_id, make_folder=True), ann_threshold=config.ann_threshold,
                       retrieval_delay=config.retrieval_delay)
    try:
        model = _embedder(_recorded_local(store, chosen), embedder_options)
        return Memory(store, agent_id=config.agent_id, embedder=model, settings=config, llm=chat,
                      clock=clock or system_clock, assembly=WIRING)
    except BaseException:
        store.close()
        raise


_embedder, _llm = embedder, llm  # open() takes arguments of those names


def open_async(path: str | Path | None = None, **options: Any) -> "AsyncMemory":
    """:func:`open`, with every operation a coroutine (:class:`~hippo.aio.AsyncMemory`): the same
    arguments, the same one implementation, run in worker threads."""
    from hippo.aio import AsyncMemory

    return AsyncMemory(open(path, **options))


def reembed(
    path: str | Path,
    *,
    embedder: "str | Embedder",
    embedder_options: dict[str, Any] | None = None,
    progress: "Progress | None" = None,
    batch_size: int = 64,
) -> "ReembedResult":
    """Switch the database at ``path`` to ``embedder``: every chunk of every agent is re-embedded.

    With the model the database already uses, only pending vectors are filled.
    """
    from hippo.core.embedding import EmbeddingService
    from hippo.core.memories.reembed import switch_model
    from hippo.stores.registry import open_store

    model = _embedder(embedder, embedder_options)
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
    from hippo.stores.registry import exists, for_agent

    config = load_settings(db=str(path), agent_id=agent_id)
    return exists(for_agent(config.db, config.agent_id))


def discard_database(path: str | Path, agent_id: str | None = None) -> None:
    """Remove a database file this process created and nobody wrote to (``Memory.holds_nothing``);
    a server database is never removed. For tools that must not leave an empty file behind."""
    from hippo.stores.registry import discard, for_agent

    config = load_settings(db=str(path), agent_id=agent_id)
    discard(for_agent(config.db, config.agent_id))


def restore(backup: str | Path, path: str | Path | None = None, *, agent_id: str | None = None,
            progress: "Progress | None" = None) -> "RestoreResult":
    """Check the backup file ``backup`` (made by :meth:`Memory.backup`), then put it in place of the
    database ``path`` (with a file per agent, ``agent_id``'s). No process may have that database
    open: one that does is refused when it can be seen (a server: stop it first)."""
    from hippo.stores.registry import for_agent
    from hippo.stores.registry import restore as restore_database

    config = load_settings(db=str(path) if path is not None else None, agent_id=agent_id)
    return restore_database(for_agent(config.db, config.agent_id), str(backup), progress=progress)


def open_keys(path: str | Path | None = None, agent_id: str | None = None) -> "KeyRing":
    """The API keys of a database (``hippo keys``), opened without an embedder or model check;
    close it (or use ``with``) when done. With a file per agent, the keys live in the file of the
    server's own agent (``--agent``, ``HIPPO_AGENT_ID``)."""
    from hippo.core.keys import KeyRing
    from hippo.stores.registry import for_agent, open_store

    config = load_settings(db=str(path) if path is not None else None, agent_id=agent_id)
    return KeyRing(open_store(for_agent(config.db, config.agent_id, make_folder=True)), owns_store=True)


def create_messages_table(target: Any, name: str = "messages") -> None:
    """Create a messages table with its full-text index, for applications that have none.
    ``target`` is a database name (path or URL) or an open ``sqlite3.Connection``."""
    from hippo.stores.registry import create_messages_table as create

    create(target, name)
