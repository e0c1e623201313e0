"""mem0's ``Memory`` and ``AsyncMemory`` on hippo: the same method names, arguments and results.

One database holds every scope; each (user, agent) pair is a hippo agent of its own and a run is
a session of it (:mod:`hippo.core.curation.importers.mem0` says how). ``AsyncMemory`` runs the one
implementation in worker threads, as :mod:`hippo.aio` does.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from hippo import wiring
from hippo.compat.mem0 import records, scopes
from hippo.compat.mem0.config import options_of
from hippo.compat.mem0.records import scope_of
from hippo.compat.mem0.scopes import Removed
from hippo.core import validation as v
from hippo.core.curation.importers.mem0 import MARK, Scope
from hippo.core.memories.writer import MemoryInput
from hippo.core.messages import read_messages, user_text
from hippo.core.operation import AsyncOperation
from hippo.errors import ConfigError, InvalidInput, NotFound

if TYPE_CHECKING:
    from hippo.core.memory import Memory as HippoMemory

__all__ = ["AsyncMemory", "Memory", "MemoryNotFound"]

_CACHED = 256  # scopes whose hippo memory is kept at hand (each is a few objects over the one store)


class MemoryNotFound(NotFound, ValueError):
    """No memory has this id: hippo's ``NotFound``, and a ``ValueError`` as mem0 raises."""


class Memory:
    """mem0's ``Memory`` on hippo (``from hippo.compat.mem0 import Memory``).

    ``Memory(db=None, **options)`` opens a hippo database as :func:`hippo.open` does, with its
    arguments (``embedder=``, ``llm=``, ...; unset ones from ``HIPPO_*`` and ``hippo.toml``). What
    differs from mem0, each said where it happens: ids are hippo's (ULIDs); scores are hippo's
    (relevance, strength and recency), and a search counts as a retrieval, as recall does;
    ``add(infer=True)`` learns through ``remember_facts``, from the user's turns; ``delete`` and
    ``update`` forget the old text for real, so ``history`` has no text of what was deleted or
    edited away. A read or ``delete_all`` that names part of a scope reaches every scope it matches,
    as mem0's filters do (``user_id`` alone: that user's memories with any agent, in any run;
    :mod:`hippo.compat.mem0.scopes`); ``delete_all`` and ``reset`` remove only what this API (or a
    mem0 import) stored, never what hippo's own API stored under the same agent names.
    """

    def __init__(self, db: str | Path | None = None, **options: Any) -> None:
        base = wiring.open(db, **options)
        if base.settings.file_per_agent:
            base.close()
            raise ConfigError("hippo.compat.mem0 keeps every user in one database: give a file name or URL "
                              "without {agent_id}")
        self.memory = base  # the hippo memory the scopes come from
        self._scopes: OrderedDict[str, "HippoMemory"] = OrderedDict()
        self._lock = threading.Lock()

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> "Memory":
        """A memory from a configuration: :func:`hippo.open`'s arguments (``db``, ``embedder``,
        ``llm``, settings), or mem0's: its ``llm`` and ``embedder`` blocks (``{"provider",
        "config": {"model", "api_key", ...}}``: openai, anthropic, ollama; huggingface: hippo's
        local model of that name) are mapped; its plumbing (``vector_store``, ``history_db_path``,
        ``version``) is left out with a warning; what hippo cannot do (custom prompts, a reranker,
        a graph store) is InvalidInput (:mod:`hippo.compat.mem0.config`)."""
        return cls(**options_of(config))

    def _scoped(self, scope: Scope | str) -> "HippoMemory":
        """The hippo memory of a scope's agent, or of an agent by name (kept for the next call)."""
        agent = scope if isinstance(scope, str) else scope.agent
        with self._lock:
            found = self._scopes.pop(agent, None) or self.memory.for_agent(agent)
            self._scopes[agent] = found
            if len(self._scopes) > _CACHED:
                self._scopes.popitem(last=False)
            return found

    def _holder(self, memory_id: str) -> "HippoMemory | None":
        agent = self.memory.agent_of(memory_id)
        return None if agent is None else self.memory.for_agent(agent)

    def add(self, messages: Any, *, user_id: Any = None, agent_id: Any = None, run_id: Any = None,
            metadata: Mapping[str, Any] | None = None, infer: bool = True, memory_type: str | None = None,
            prompt: str | None = None) -> dict[str, Any]:
        """Store what ``messages`` (a text, a message, or a list of chat messages) hold, for a user,
        an agent and/or a run (one at least). ``infer=True`` learns facts through
        ``remember_facts`` from the user's turns (an LLM if one is configured, else offline rules):
        each result's ``event`` is ``ADD`` (a new fact), ``UPDATE`` (it supersedes one:
        ``previous_memory``; the new fact has a new id, the old one stays in ``history``), ``DELETE``
        (a further fact it superseded) or ``NONE`` (known already: the held one is strengthened;
        mem0 leaves these out). ``infer=False`` stores each message but the system's as it is, with
        its ``role`` (and ``actor_id``: the message's ``name``). ``memory_type`` (procedural
        memory) and ``prompt`` (a custom extraction prompt) have no hippo counterpart."""
        scope = Scope.of(user_id, agent_id, run_id)
        if memory_type is not None or prompt is not None:
            raise InvalidInput("hippo has no procedural memory (memory_type) or custom extraction prompt (prompt)")
        if not isinstance(infer, bool):
            raise InvalidInput(f"infer must be True or False, got {type(infer).__name__}")
        stored = {**records.own_metadata(metadata), **scope.identity(), MARK: True}
        turns = _turns(messages)
        memory = self._scoped(scope)
        if not infer:
            return {"results": _store(memory, turns, stored, scope)}
        if isinstance(messages, str):
            said: Any = messages
        elif user_text(turns):
            said = turns
        else:
            return {"results": []}  # no user turn: nothing to learn (mem0 returns no event either)
        learned = memory.remember_facts(said, metadata=stored, session_id=scope.session)
        return {"results": records.add_events(learned, lambda old: memory.get_memory(old).content)}

    def search(self, query: str, *, user_id: Any = None, agent_id: Any = None, run_id: Any = None,
               filters: Mapping[str, Any] | None = None, limit: int = 100, top_k: int | None = None,
               threshold: float | None = None, rerank: bool = False) -> dict[str, Any]:
        """The scope's memories that match ``query`` best, each with its ``score``: hippo's recall
        (meaning and keywords, strength, recency), whose hits count as retrieved. The scope comes
        from the arguments (mem0 1.x) or from ``filters`` (mem0 2.x); the other filters test the
        metadata (:func:`~hippo.compat.mem0.records.metadata_filter`). ``top_k`` is mem0 2.x's
        ``limit``; ``threshold`` drops hits that score less (hippo's scores, not mem0's);
        ``rerank`` changes nothing (as in mem0 without a reranker). Every scope the ids match is
        searched, each by its own recall, and the hits merged by score."""
        scope = scope_of(user_id, agent_id, run_id, filters)
        count, where = v.check_limit(_count(limit, top_k)), records.metadata_filter(filters)
        if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, (int, float))):
            raise InvalidInput(f"threshold must be a number, got {type(threshold).__name__}")
        found = [self._scoped(agent).recall_memories(query, count, metadata=where, session_id=scope.session)
                 for agent in self._agents(scope)]
        hits = [hit for hit in scopes.merged_hits(found, count) if threshold is None or hit.score >= threshold]
        return {"results": [records.item(hit.chunk, hit.score) for hit in hits]}

    def get(self, memory_id: str) -> dict[str, Any] | None:
        """One memory by id, whichever scope holds it (``score`` None), or None: no memory has
        this id. An id that is not hippo's (a ULID) is InvalidInput."""
        holder = self._holder(memory_id)
        return None if holder is None else records.item(holder.get_memory(memory_id), None)

    def get_all(self, *, user_id: Any = None, agent_id: Any = None, run_id: Any = None,
                filters: Mapping[str, Any] | None = None, limit: int = 100,
                top_k: int | None = None) -> dict[str, Any]:
        """The scope's memories, newest first, without superseded facts (their versions are in
        ``history``); the other filters test the metadata. Every scope the ids match is listed.
        Browsing: nothing counts as retrieved."""
        scope = scope_of(user_id, agent_id, run_id, filters)
        count, where = v.check_limit(_count(limit, top_k)), records.metadata_filter(filters)
        pages = [self._scoped(agent).browse_memories(limit=count, session_id=scope.session, superseded=False,
                                                     metadata=where).items for agent in self._agents(scope)]
        return {"results": [records.item(chunk) for chunk in scopes.newest_first(pages, count)]}

    def update(self, memory_id: str, text: str | None = None, metadata: Mapping[str, Any] | None = None, *,
               data: str | None = None) -> dict[str, str]:
        """Change a memory in place (same id): its text (``text``, or ``data`` as in mem0 1.x;
        embedded again) and/or metadata (merged into what it has; its ids stay). hippo keeps no
        earlier text: the old one leaves the database, as after a forget, and ``history`` records
        when (``UPDATE`` with no ``old_memory``)."""
        text = text if text is not None else data
        if text is None and metadata is None:
            raise InvalidInput("At least one of text or metadata must be provided.")
        holder = self._found(memory_id)
        held = holder.get_memory(memory_id).metadata
        merged = {**held, **records.own_metadata(metadata),
                  records.EDITS: records.edited(held, holder.now())}
        holder.update_memory(memory_id, content=text, metadata=merged)
        return {"message": "Memory updated successfully!"}

    def delete(self, memory_id: str, *, receipt: bool = False) -> dict[str, Any]:
        """Delete one memory by id: hippo's hard delete, its text gone from the database. With
        ``receipt``, the answer's ``receipt`` is the signed proof of it (a :class:`hippo.Receipt`'s
        dict: hippo's ``verify_receipt`` checks it again)."""
        receipt = v.check_flag(receipt, "receipt")
        gone = self._found(memory_id).delete_memory(memory_id, receipt=receipt)
        proof = {"receipt": gone.receipt.to_dict()} if gone.receipt is not None else {}
        return {"message": "Memory deleted successfully!", **proof}

    def delete_all(self, user_id: Any = None, agent_id: Any = None, run_id: Any = None, *,
                   receipt: bool = False) -> dict[str, Any]:
        """Delete every memory of the scopes the ids match, as mem0 does (``user_id`` alone: that
        user's with every agent, in every run; with a run, that run's only), and only what this
        API stored (metadata ``_mem0``): what hippo's own API stored under those agents stays. The
        log ``hippo.compat.mem0`` says what was removed, from where. With ``receipt``, the answer's
        ``receipts`` lists the signed proof of each hippo deletion it took (a scope can span several
        hippo agents, and each receipt is one agent's), as :class:`hippo.Receipt` dicts."""
        if user_id is None and agent_id is None and run_id is None:
            raise InvalidInput("At least one filter is required to delete all memories. If you want to delete "
                               "all memories, use the `reset()` method.")
        receipt = v.check_flag(receipt, "receipt")
        scope = Scope.of(user_id, agent_id, run_id)
        removed = Removed(receipts=[] if receipt else None)
        for agent in self._agents(scope):
            scopes.remove_marked(self._scoped(agent), scope.session, removed, agent)
        removed.report(f"delete_all({', '.join(f'{k}={x!r}' for k, x in scope.identity().items())})")
        proofs = {"receipts": [r.to_dict() for r in removed.receipts]} if removed.receipts is not None else {}
        return {"message": "Memories deleted successfully!", **proofs}

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        """The changes of a memory, oldest first (:func:`~hippo.compat.mem0.records.history`): its
        fact's versions, from any of their ids, and its edits. A deleted memory has none left."""
        holder = self._holder(memory_id)
        return [] if holder is None else records.history(holder.fact_history(memory_id))

    def reset(self) -> None:
        """Delete every memory this API (or a mem0 import) stored, in every scope; the database's
        other agents, and what hippo's own API stored under the names this API uses, stay. The log
        ``hippo.compat.mem0`` says what was removed, from where."""
        removed = Removed()
        for agent in scopes.every_agent(self.memory):
            scopes.remove_marked(self._scoped(agent), None, removed, agent)
        removed.report("reset()")
        with self._lock:
            self._scopes.clear()

    def _agents(self, scope: Scope) -> list[str]:
        """The agents a call on ``scope`` reaches; a scope with nothing held yet is its own agent."""
        return scopes.agents_of(self.memory, scope) or [scope.agent]

    def _found(self, memory_id: str) -> "HippoMemory":
        holder = self._holder(memory_id)
        if holder is None:
            raise MemoryNotFound(f"Memory with id {memory_id} not found")
        return holder

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._scopes.clear()
        self.memory.close()

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncMemory:
    """mem0's ``AsyncMemory`` on hippo: :class:`Memory`'s methods as coroutines, run in worker
    threads (one implementation, as :mod:`hippo.aio`); ``async with`` closes it."""

    def __init__(self, db: str | Path | None = None, **options: Any) -> None:
        self.sync = Memory(db, **options)

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> "AsyncMemory":
        """As :meth:`Memory.from_config`."""
        return cls(**options_of(config))

    def capability(self, method: Callable[..., Any]) -> object:
        """What runs every coroutine here: the sync memory."""
        return self.sync

    def close(self) -> None:
        """Close the database (not a coroutine, as mem0's)."""
        self.sync.close()

    async def __aenter__(self) -> "AsyncMemory":
        return self

    async def __aexit__(self, *exc: object) -> None:
        import asyncio  # here: a synchronous Memory never loads it

        await asyncio.to_thread(self.sync.close)

    add = AsyncOperation(Memory.add)
    search = AsyncOperation(Memory.search)
    get = AsyncOperation(Memory.get)
    get_all = AsyncOperation(Memory.get_all)
    update = AsyncOperation(Memory.update)
    delete = AsyncOperation(Memory.delete)
    delete_all = AsyncOperation(Memory.delete_all)
    history = AsyncOperation(Memory.history)
    reset = AsyncOperation(Memory.reset)


def _turns(messages: Any) -> list[Any]:
    """mem0's forms of ``messages``: a text (the user's), one message, or a list of them."""
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    if isinstance(messages, dict):
        return [messages]
    if isinstance(messages, list):
        return messages
    raise InvalidInput(f"messages must be str, dict, or list[dict], got {type(messages).__name__}")


def _store(memory: "HippoMemory", turns: list[Any], stored: dict[str, Any], scope: Scope) -> list[dict[str, Any]]:
    """``add(infer=False)``: each message but the system's as a memory, with its role and speaker;
    the same text twice in a scope strengthens the one held (``NONE``)."""
    said = [m for m in read_messages(turns) if m.role != "system" and m.text.strip()]
    inputs = [MemoryInput(m.text, {**stored, "role": m.role, **({"actor_id": m.name} if m.name else {})},
                          session_id=scope.session) for m in said]
    return [{"id": result.id, "memory": m.text, "event": "ADD" if result.action == "inserted" else "NONE",
             "actor_id": m.name, "role": m.role} for m, result in zip(said, memory.store_memories(inputs))]


def _count(limit: Any, top_k: Any) -> Any:
    """How many to return: mem0 2.x's ``top_k`` when given, else ``limit`` (checked by hippo)."""
    return limit if top_k is None else top_k
