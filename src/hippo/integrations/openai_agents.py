"""hippo for the OpenAI Agents SDK: a session kept in hippo, and hippo's agent tools as function tools.

    import hippo
    from agents import Agent, Runner
    from hippo.integrations.openai_agents import HippoSession, hippo_tools

    memory = hippo.open("memory.db")
    agent = Agent(name="Assistant", instructions="...",
                  tools=hippo_tools(memory, user=lambda context: context["user_id"]))
    session = HippoSession(memory.for_agent("alice"), "chat-1")
    result = await Runner.run(agent, "I moved to Lisbon.", session=session, context={"user_id": "alice"})

One hippo agent per user: the user's memories, memory blocks and sessions are that agent's, and
no other user's run reaches them (the tools name the agent from the run's context, the session
is made with the user's memory). The same agent is what the CLI, the HTTP API and the dashboard
show under the user's id.

:class:`HippoSession` is the SDK's ``Session``: the conversation's items are kept in the agent's
database in the order the SDK wrote them (``Memory.add_session_items``), and the chat messages
among them are observed by capture in the same transaction, so what the user says becomes
memories (``Memory.process_pending``, by default right after each write). Forgetting a memory
takes the items it was captured from out of the history too.

:func:`hippo_tools` are hippo's agent tools (``Memory.tools``) as ``FunctionTool`` objects with the
same names, descriptions and JSON Schemas (not made strict: strict mode would make every optional
argument required). A call runs in a worker thread and answers the model with the tool's JSON
result: ``{"ok": true, ...}``, or ``{"ok": false, "error": {"code", "message"}}`` for a problem
the model can act on.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections import OrderedDict
from typing import Any, Callable, cast

from hippo.errors import missing_extra

try:
    from agents import FunctionTool, RunContextWrapper, SessionSettings, TResponseInputItem
    from agents.memory.session_settings import resolve_session_limit
except ImportError as exc:  # one line naming the extra, never a bare ModuleNotFoundError
    raise (missing_extra(exc) or exc) from None

from hippo.aio import AsyncMemory
from hippo.core import validation as v
from hippo.core.memory import AgentTools, Memory
from hippo.errors import InvalidInput

__all__ = ["HippoSession", "hippo_tools"]

UserOf = Callable[[Any], str]
_CACHED = 1024  # users whose memory and tools are kept ready (the least recently used go first)


def _sync(memory: Memory | AsyncMemory) -> Memory:
    return memory.sync if isinstance(memory, AsyncMemory) else memory


class HippoSession:
    """The SDK's ``Session`` over one hippo agent's memory (one user's), for one conversation.

    ``process=True`` turns what was observed into memories after each write (offline this takes
    milliseconds; with an LLM configured it makes capture's LLM calls before the run returns):
    set it to False when ``hippo serve`` (``capture_every``) or a job of your own runs
    ``process_pending``. ``session_settings.limit`` caps how many of the latest items a run reads.
    """

    def __init__(self, memory: Memory | AsyncMemory, session_id: str, *, process: bool = True,
                 session_settings: SessionSettings | None = None) -> None:
        session = v.check_session_id(session_id)
        if session is None:
            raise InvalidInput("HippoSession needs a session_id")
        self.memory = _sync(memory)
        self.session_id: str = session
        self.process = process
        self.session_settings: SessionSettings | None = session_settings

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The conversation's items, oldest first: the latest ``limit`` (else the settings' limit, else all)."""
        latest = resolve_session_limit(limit, self.session_settings)
        found = await asyncio.to_thread(self.memory.session_items, self.session_id, limit=latest)
        return cast("list[TResponseInputItem]", found)

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Keep the items at the conversation's end, and capture the messages among them."""
        await asyncio.to_thread(self._add, [dict(item) for item in items])

    def _add(self, items: list[dict[str, Any]]) -> None:
        if not items:
            return
        self.memory.add_session_items(self.session_id, items)
        if self.process:
            self.memory.process_pending()

    async def pop_item(self) -> TResponseInputItem | None:
        """Remove the conversation's latest item and return it (None: the conversation is empty)."""
        item = await asyncio.to_thread(self.memory.pop_session_item, self.session_id)
        return cast("TResponseInputItem | None", item)

    async def clear_session(self) -> None:
        """Remove every item of the conversation (the memories captured from it stay)."""
        await asyncio.to_thread(self.memory.clear_session_items, self.session_id)


class _Users:
    """The agent tools of each user's memory (``memory.for_agent(user)``), made once and kept for
    the ``_CACHED`` users seen last."""

    def __init__(self, memory: Memory, user: UserOf, recall_max_tokens: int) -> None:
        self.memory, self.user, self.recall_max_tokens = memory, user, recall_max_tokens
        self._known: OrderedDict[str, tuple[Memory, AgentTools]] = OrderedDict()
        self._lock = threading.Lock()

    def tools(self, context: Any) -> AgentTools:
        agent = v.check_agent_id(self.user(context))
        with self._lock:  # held while a memory is made: two calls never make one user's twice
            if agent not in self._known:
                mine = self.memory if agent == self.memory.agent_id else self.memory.for_agent(agent)
                self._known[agent] = (mine, mine.tools(recall_max_tokens=self.recall_max_tokens))
                while len(self._known) > _CACHED:
                    _, (old, _) = self._known.popitem(last=False)
                    if old is not self.memory:
                        old.close()  # closes only a database of the agent's own (a file per agent)
            self._known.move_to_end(agent)
            return self._known[agent][1]


def _kept(result: dict[str, Any]) -> dict[str, Any]:
    """A tool's result as the session keeps it (the SDK writes every tool result into the
    conversation): a forget names what it deleted by id and kind, never by the text it removed,
    which would otherwise stay in the database file with the session."""
    if isinstance(result.get("deleted"), list):
        return {**result, "deleted": [{k: v for k, v in gone.items() if k != "content"} for gone in result["deleted"]]}
    return result


def hippo_tools(memory: Memory | AsyncMemory, *, user: UserOf | None = None,
                recall_max_tokens: int = 1500) -> list[FunctionTool]:
    """hippo's agent tools as the SDK's function tools.

    Without ``user`` every call works on ``memory``'s agent. With it, ``user`` gets the run's
    context (the object given to ``Runner.run(context=...)``) and returns the user's id; each call
    works on the hippo agent of that id (``memory.for_agent``), so one ``Agent`` serves every user.
    """
    memory = _sync(memory)
    offered = memory.tools(recall_max_tokens=recall_max_tokens)
    users = _Users(memory, user, recall_max_tokens) if user is not None else None

    def run(context: Any, name: str, arguments: str) -> str:
        tools = offered if users is None else users.tools(context)
        return json.dumps(_kept(tools.call(name, arguments)), ensure_ascii=False, separators=(",", ":"))

    def invoker(name: str) -> Callable[[RunContextWrapper[Any], str], Any]:
        async def invoke(ctx: RunContextWrapper[Any], arguments: str) -> str:
            return await asyncio.to_thread(run, ctx.context, name, arguments)

        return invoke

    return [FunctionTool(name=tool.name, description=tool.description, params_json_schema=tool.parameters,
                         on_invoke_tool=invoker(tool.name), strict_json_schema=False)
            for tool in offered]
