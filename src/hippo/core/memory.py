"""``Memory``: one agent's long-term memory, a thin facade over its capabilities.

Each capability is an object built with the agent's :class:`~hippo.core.context.AgentContext`
and holding its operations: raw memories (:mod:`hippo.core.memories`), facts
(:mod:`hippo.core.facts`), recall (:mod:`hippo.core.recall`), memory blocks
(:mod:`hippo.core.blocks`), experiences (:mod:`hippo.core.experiences`), capture and surfacing
(:mod:`hippo.core.capture`), compaction (:mod:`hippo.core.compaction`) and curation
(:mod:`hippo.core.curation`). The facade names every operation once, as an
:class:`~hippo.core.operation.Operation` of the capability that implements it, and adds only what
is the memory's own: scoping to another agent, the agent tools, closing.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable, Iterator, Protocol, Self

from hippo.clock import Clock, system_clock
from hippo.core import validation as v
from hippo.core.audit.operations import Auditor
from hippo.core.blocks.operations import Blocks
from hippo.core.capture.operations import Capture
from hippo.core.compaction.operations import Compactor
from hippo.core.context import agent_context
from hippo.core.curation.operations import Curation
from hippo.core.experiences.operations import Experiences
from hippo.core.experiences.short_term import local_agents
from hippo.core.facts.operations import Facts
from hippo.core.keys import KeyRing
from hippo.core.memories.browsing import Browser
from hippo.core.memories.operations import Memories
from hippo.core.memories.summary import Summaries
from hippo.core.memories.writer import MemoryInput
from hippo.core.operation import Operation, owner_name
from hippo.core.recall.operations import Recaller
from hippo.core.receipts import Receipts
from hippo.errors import ConfigError

if TYPE_CHECKING:
    from hippo.config import Settings
    from hippo.core.ports import Store
    from hippo.core.ports.database import BackupResult, CheckReport, Progress
    from hippo.providers.base import LLM, Embedder

__all__ = ["OPERATIONS", "AgentTools", "Assembly", "Memory", "MemoryInput"]


class AgentTools(Protocol):
    """The agent tools over a memory (``hippo.Toolset``): a sequence of tools, in each format."""

    def __iter__(self) -> Iterator[Any]: ...
    def __len__(self) -> int: ...
    @property
    def names(self) -> list[str]: ...
    def call(self, name: Any, arguments: Any = None) -> dict[str, Any]: ...
    def openai(self) -> list[dict[str, Any]]: ...
    def anthropic(self) -> list[dict[str, Any]]: ...
    def dispatch(self, tool_call: Any) -> dict[str, Any]: ...
    def results_for(self, message: Any) -> list[dict[str, Any]]: ...


class Assembly(Protocol):
    """What the composition root (:mod:`hippo.wiring`) lends each memory: the parts the core does
    not import, because they belong to the layers above it or beside it."""

    def agent_store(self, settings: "Settings", agent_id: str) -> "Store | None":
        """A store of ``agent_id``'s own (a database per agent), or None: it shares this one's."""

    def tools(self, memory: "Memory", *, recall_max_tokens: int) -> AgentTools:
        """The agent tools over ``memory``."""


class Memory:
    """The long-term memory of one agent. Build it with :func:`hippo.open`."""

    def __init__(self, store: "Store", *, agent_id: str, embedder: "Embedder | None", settings: "Settings",
                 llm: "LLM | None" = None, clock: Clock = system_clock, assembly: Assembly | None = None) -> None:
        ctx = self.agent_context = agent_context(store, agent_id=agent_id, embedder=embedder, settings=settings,
                                                 llm=llm, clock=clock)
        self.agent_id, self.settings, self.store, self.embedding, self.llm = \
            ctx.agent_id, ctx.settings, ctx.store.database, ctx.embedding, ctx.llm
        experiences = Experiences(ctx)
        parts = (Memories(ctx, experiences.episodic), Facts(ctx), Recaller(ctx), Blocks(ctx), experiences,
                 Capture(ctx), Compactor(ctx), Curation(ctx), Browser(ctx), Summaries(ctx), Auditor(ctx),
                 Receipts(ctx))
        self._parts: dict[str, object] = {type(part).__qualname__: part for part in parts}
        self._assembly = assembly
        self._owns_store = True

    def capability(self, method: Callable[..., Any]) -> object:
        """The capability object of this memory whose class defines ``method``."""
        return self._parts[owner_name(method)]

    # -- the memory's own -----------------------------------------------------

    def now(self) -> datetime:
        return self.agent_context.now()

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
        settings = replace(self.settings, agent_id=agent_id)
        own = None if self._assembly is None or agent_id == self.agent_id \
            else self._assembly.agent_store(settings, agent_id)
        store = own if own is not None else self.store
        try:
            other = type(self)(store, agent_id=agent_id, embedder=self.embedding.embedder, llm=self.llm,
                               settings=settings, clock=self.agent_context.clock, assembly=self._assembly)
        except BaseException:
            if own is not None:
                own.close()
            raise
        other._owns_store = own is not None
        return other

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def tools(self, *, recall_max_tokens: int = 1500) -> AgentTools:
        """The agent tools over this memory: name, description, JSON Schema, call.

        Also as OpenAI and Anthropic tool definitions, with a dispatcher for
        either format's tool calls. ``recall_conversation`` is offered only when
        the messages table exists (:meth:`has_conversation`).
        """
        if self._assembly is None:
            raise ConfigError("this memory was built without its agent tools: open it with hippo.open")
        return self._assembly.tools(self, recall_max_tokens=recall_max_tokens)

    @property
    def database(self) -> str:
        """Where this memory's database is, as it may be shown (a URL's password masked)."""
        return self.store.location

    @property
    def keys(self) -> KeyRing:
        """The database's API keys (database-wide, like :meth:`for_agent`)."""
        return KeyRing(self.store, clock=self.agent_context.clock)

    def backup(self, path: str, *, overwrite: bool = False, progress: "Progress | None" = None) -> "BackupResult":
        """A consistent copy of the whole database (every agent) at ``path``, taken while others
        write (``hippo backup``); on PostgreSQL a ConfigError names the ``pg_dump`` command."""
        return self.store.backup(path, overwrite=overwrite, progress=progress)

    def check(self) -> "CheckReport":
        """Check the whole database: its structure, keyword and vector indexes, schema version."""
        return self.store.check()

    # -- raw memories ---------------------------------------------------------
    store_memory = Operation(Memories.store_memory)
    store_memories = Operation(Memories.store_memories)
    get_memory = Operation(Memories.get_memory)
    list_memories = Operation(Memories.list_memories)
    update_memory = Operation(Memories.update_memory)
    update_metadata = Operation(Memories.update_metadata)
    forget_memory = Operation(Memories.forget_memory)
    delete_memory = Operation(Memories.delete_memory)
    delete_all = Operation(Memories.delete_all)
    put_item = Operation(Memories.put_item)
    get_item = Operation(Memories.get_item)
    delete_item = Operation(Memories.delete_item)
    list_items = Operation(Memories.list_items)
    stats = Operation(Memories.stats)
    reembed = Operation(Memories.reembed)
    export_records = Operation(Memories.export_records)
    import_records = Operation(Memories.import_records)
    scrub = Operation(Memories.scrub)
    holds_nothing = Operation(Memories.holds_nothing)
    agent_ids = Operation(Memories.agent_ids)
    agent_of = Operation(Memories.agent_of)
    browse_memories = Operation(Browser.browse_memories)
    memory_summary = Operation(Summaries.memory_summary)
    # -- facts ----------------------------------------------------------------
    remember_facts = Operation(Facts.remember_facts)
    fact_history = Operation(Facts.fact_history)
    split_fact = Operation(Facts.split_fact)
    # -- recall ---------------------------------------------------------------
    recall_memories = Operation(Recaller.recall_memories)
    recall_conversation = Operation(Recaller.recall_conversation)
    has_conversation = Operation(Recaller.has_conversation)
    # -- memory blocks --------------------------------------------------------
    recall_memory_block = Operation(Blocks.recall_memory_block)
    memory_block = Operation(Blocks.memory_block)
    memory_blocks = Operation(Blocks.memory_blocks)
    replace_memory_block = Operation(Blocks.replace_memory_block)
    append_memory_block = Operation(Blocks.append_memory_block)
    set_memory_block = Operation(Blocks.set_memory_block)
    context = Operation(Blocks.context)
    # -- experiences ----------------------------------------------------------
    record_experience = Operation(Experiences.record_experience)
    short_term = Operation(Experiences.short_term)
    recall = Operation(Experiences.recall)
    recall_related = Operation(Experiences.recall_related)
    short_term_agents = Operation(Experiences.short_term_agents)
    consolidate = Operation(Experiences.consolidate)
    # -- capture and surfacing ------------------------------------------------
    observe = Operation(Capture.observe)
    process_pending = Operation(Capture.process_pending)
    pending_agents = Operation(Capture.pending_agents)
    surface = Operation(Capture.surface)
    add_session_items = Operation(Capture.add_session_items)
    session_items = Operation(Capture.session_items)
    pop_session_item = Operation(Capture.pop_session_item)
    clear_session_items = Operation(Capture.clear_session_items)
    # -- compaction -----------------------------------------------------------
    compact = Operation(Compactor.compact)
    # -- curation -------------------------------------------------------------
    reinforce_memory = Operation(Curation.reinforce_memory)
    demote_memory = Operation(Curation.demote_memory)
    related = Operation(Curation.related)
    maintain = Operation(Curation.maintain)
    search_archive = Operation(Curation.search_archive)
    get_archived = Operation(Curation.get_archived)
    restore_memory = Operation(Curation.restore_memory)
    import_from = Operation(Curation.import_from)
    # -- the audit trail ------------------------------------------------------
    audit = Operation(Auditor.audit)
    verify_audit = Operation(Auditor.verify_audit)
    trim_audit = Operation(Auditor.trim_audit)
    # -- forget receipts ------------------------------------------------------
    verify_receipt = Operation(Receipts.verify_receipt)


# The names of Memory's operations, in the order above (AsyncMemory and hippo.connect offer them).
OPERATIONS: tuple[str, ...] = tuple(name for name, member in vars(Memory).items() if isinstance(member, Operation))
