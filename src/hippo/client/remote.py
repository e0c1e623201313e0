"""``RemoteMemory`` and ``AsyncRemoteMemory``: one agent's memory on a ``hippo serve``, with
``Memory``'s operations.

Each operation is listed once per class, from ``Memory``'s own (``store_memory =
Remote(Memory.store_memory)``), so a type checker and ``help()`` see the same parameters, result
type and docstring as the embedded memory's. A call binds its arguments to that signature (a
wrong name is a ``TypeError``, as it is embedded), encodes them, posts them to the server's
operations route and decodes the answer into the operation's own result type, or raises the
typed error the server's envelope names. The sync and async clients share all of that; only the
request itself is sent by ``httpx.Client`` or awaited on ``httpx.AsyncClient``.
"""

from __future__ import annotations

import functools
import json
from typing import Any, Awaitable, Callable, Concatenate, Generic, ParamSpec, Protocol, TypeVar
from urllib.parse import quote

import httpx

from hippo.client import wire
from hippo.core.memory import Memory
from hippo.errors import HippoError, InvalidInput, StorageError

__all__ = ["AsyncRemoteMemory", "RemoteMemory"]

P = ParamSpec("P")
R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)
DEFAULT_TIMEOUT = 300.0  # seconds: a compaction or a capture batch through a model takes a while


class Described(Protocol[P, R_co]):
    """A facade's operation (``Memory.store_memory``): the capability method it offers."""

    @property
    def method(self) -> Callable[Concatenate[Any, P], R_co]: ...


class Request:
    """One call, ready to send: the route and the JSON body."""

    def __init__(self, client: "_Client", name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        bound = wire.signature(name).bind(*args, **kwargs)  # TypeError for a wrong argument, as embedded
        arguments = dict(bound.arguments)
        for local in wire.LOCAL_ARGUMENTS & set(arguments):
            if arguments.pop(local) is not None:
                raise InvalidInput(f"{local} is a callback of the caller's process; it cannot be sent over HTTP")
        try:
            encoded = {arg: wire.encode(value, arg, argument=True) for arg, value in arguments.items()}
            body = json.dumps({"arguments": encoded}, allow_nan=False)
        except RecursionError:
            raise InvalidInput(f"{name}: an argument is nested too deeply to be sent") from None
        except InvalidInput:
            raise
        except ValueError:
            raise InvalidInput(f"{name}: NaN and infinity cannot be sent over HTTP") from None
        self.name, self.body = name, body.encode()
        self.path = f"/v1/agents/{quote(client.agent_id, safe='')}/operations/{name}"

    def outcome(self, status: int, content: bytes) -> Any:
        """The decoded result, or the typed error the answer stands for."""
        try:
            answer = json.loads(content)
        except ValueError:
            answer = None
        if status == 200 and isinstance(answer, dict) and "result" in answer:
            return wire.decode(wire.result_type(self.name), answer["result"])
        raise wire.error_from(status, answer)


@functools.cache
def _tls() -> Any:
    """One TLS context for every client of the process (httpx's default one, made once): loading
    the certificate bundle took 25-40 ms per client."""
    make = getattr(httpx, "create_ssl_context", None)
    return make() if make is not None else True


def _unreachable(url: str, exc: Exception) -> HippoError:
    return StorageError(f"could not reach the hippo server at {url}: {exc}")


class _Client:
    """What both clients hold: the server, the agent, the key."""

    def __init__(self, url: str, *, agent_id: str, key: str | None, timeout: float | None,
                 transport: Any = None) -> None:
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise InvalidInput(f"url must be an http:// or https:// address, got {url!r}")
        if not isinstance(agent_id, str):
            raise InvalidInput(f"agent_id must be a string, got {type(agent_id).__name__}")
        self.url, self.agent_id = url.rstrip("/"), agent_id
        self._options = {"key": key, "timeout": timeout, "transport": transport}
        self._owns_http = True

    @property
    def database(self) -> str:
        """The server this memory is on (its URL)."""
        return self.url

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if self._options["key"]:
            headers["Authorization"] = f"Bearer {self._options['key']}"
        return headers

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.url!r}, agent_id={self.agent_id!r})"


class Remote(Generic[P, R]):
    """A method of :class:`RemoteMemory` that is ``Memory``'s operation of the same name."""

    def __init__(self, operation: Described[P, R]) -> None:
        self.__doc__ = operation.method.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: "RemoteMemory | None", owner: type | None = None) -> Callable[P, R]:
        if obj is None:
            return self  # type: ignore[return-value]
        name = self.name

        @functools.wraps(wire.operation(name))
        def call(*args: Any, **kwargs: Any) -> Any:
            return obj.send(Request(obj, name, args, kwargs))

        call.__signature__ = wire.signature(name)  # type: ignore[attr-defined]
        return call


class AsyncRemote(Generic[P, R]):
    """A coroutine of :class:`AsyncRemoteMemory` that is ``Memory``'s operation of the same name."""

    def __init__(self, operation: Described[P, R]) -> None:
        self.__doc__ = operation.method.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: "AsyncRemoteMemory | None", owner: type | None = None) -> Callable[P, Awaitable[R]]:
        if obj is None:
            return self  # type: ignore[return-value]
        name = self.name

        @functools.wraps(wire.operation(name))
        async def call(*args: Any, **kwargs: Any) -> Any:
            return await obj.send(Request(obj, name, args, kwargs))

        call.__signature__ = wire.signature(name)  # type: ignore[attr-defined]
        return call


class RemoteMemory(_Client):
    """One agent's memory on a hippo server, with ``Memory``'s operations. Build it with
    :func:`hippo.connect`; ``with`` closes its connections."""

    def __init__(self, url: str, *, agent_id: str = "default", key: str | None = None,
                 timeout: float | None = DEFAULT_TIMEOUT, transport: "httpx.BaseTransport | None" = None) -> None:
        super().__init__(url, agent_id=agent_id, key=key, timeout=timeout, transport=transport)
        self.http = httpx.Client(base_url=self.url, headers=self._headers(), timeout=timeout, transport=transport,
                                 verify=_tls())

    def send(self, request: Request) -> Any:
        try:
            response = self.http.post(request.path, content=request.body)
        except httpx.TransportError as exc:
            raise _unreachable(self.url, exc) from None
        return request.outcome(response.status_code, response.content)

    def for_agent(self, agent_id: str) -> "RemoteMemory":
        """The same server and key, scoped to another agent (the key must reach it). The new memory
        shares this one's connections: closing it leaves them open."""
        other = RemoteMemory.__new__(RemoteMemory)
        _Client.__init__(other, self.url, agent_id=agent_id, **self._options)
        other.http, other._owns_http = self.http, False
        return other

    def close(self) -> None:
        """Close the connections to the server (the server's memory stays open)."""
        if self._owns_http:
            self.http.close()

    def __enter__(self) -> "RemoteMemory":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- raw memories ---------------------------------------------------------
    store_memory = Remote(Memory.store_memory)
    store_memories = Remote(Memory.store_memories)
    get_memory = Remote(Memory.get_memory)
    list_memories = Remote(Memory.list_memories)
    update_memory = Remote(Memory.update_memory)
    update_metadata = Remote(Memory.update_metadata)
    forget_memory = Remote(Memory.forget_memory)
    delete_memory = Remote(Memory.delete_memory)
    delete_all = Remote(Memory.delete_all)
    put_item = Remote(Memory.put_item)
    get_item = Remote(Memory.get_item)
    delete_item = Remote(Memory.delete_item)
    list_items = Remote(Memory.list_items)
    stats = Remote(Memory.stats)
    reembed = Remote(Memory.reembed)
    export_records = Remote(Memory.export_records)
    import_records = Remote(Memory.import_records)
    browse_memories = Remote(Memory.browse_memories)
    memory_summary = Remote(Memory.memory_summary)
    # -- facts ----------------------------------------------------------------
    remember_facts = Remote(Memory.remember_facts)
    fact_history = Remote(Memory.fact_history)
    split_fact = Remote(Memory.split_fact)
    # -- recall ---------------------------------------------------------------
    recall_memories = Remote(Memory.recall_memories)
    recall_conversation = Remote(Memory.recall_conversation)
    has_conversation = Remote(Memory.has_conversation)
    # -- memory blocks --------------------------------------------------------
    recall_memory_block = Remote(Memory.recall_memory_block)
    memory_block = Remote(Memory.memory_block)
    memory_blocks = Remote(Memory.memory_blocks)
    replace_memory_block = Remote(Memory.replace_memory_block)
    append_memory_block = Remote(Memory.append_memory_block)
    set_memory_block = Remote(Memory.set_memory_block)
    context = Remote(Memory.context)
    # -- experiences ----------------------------------------------------------
    record_experience = Remote(Memory.record_experience)
    short_term = Remote(Memory.short_term)
    recall = Remote(Memory.recall)
    recall_related = Remote(Memory.recall_related)
    consolidate = Remote(Memory.consolidate)
    # -- capture and surfacing ------------------------------------------------
    observe = Remote(Memory.observe)
    process_pending = Remote(Memory.process_pending)
    surface = Remote(Memory.surface)
    add_session_items = Remote(Memory.add_session_items)
    session_items = Remote(Memory.session_items)
    pop_session_item = Remote(Memory.pop_session_item)
    clear_session_items = Remote(Memory.clear_session_items)
    # -- compaction -----------------------------------------------------------
    compact = Remote(Memory.compact)
    # -- curation -------------------------------------------------------------
    reinforce_memory = Remote(Memory.reinforce_memory)
    demote_memory = Remote(Memory.demote_memory)
    related = Remote(Memory.related)
    search_archive = Remote(Memory.search_archive)
    get_archived = Remote(Memory.get_archived)
    restore_memory = Remote(Memory.restore_memory)
    # -- the audit trail ------------------------------------------------------
    audit = Remote(Memory.audit)
    verify_receipt = Remote(Memory.verify_receipt)


class AsyncRemoteMemory(_Client):
    """:class:`RemoteMemory` with every operation a coroutine; ``async with`` closes it. Build it
    with :func:`hippo.connect_async`."""

    def __init__(self, url: str, *, agent_id: str = "default", key: str | None = None,
                 timeout: float | None = DEFAULT_TIMEOUT, transport: "httpx.AsyncBaseTransport | None" = None) -> None:
        super().__init__(url, agent_id=agent_id, key=key, timeout=timeout, transport=transport)
        self.http = httpx.AsyncClient(base_url=self.url, headers=self._headers(), timeout=timeout,
                                      transport=transport, verify=_tls())

    async def send(self, request: Request) -> Any:
        try:
            response = await self.http.post(request.path, content=request.body)
        except httpx.TransportError as exc:
            raise _unreachable(self.url, exc) from None
        return request.outcome(response.status_code, response.content)

    def for_agent(self, agent_id: str) -> "AsyncRemoteMemory":
        """The same server and key, scoped to another agent, sharing this one's connections."""
        other = AsyncRemoteMemory.__new__(AsyncRemoteMemory)
        _Client.__init__(other, self.url, agent_id=agent_id, **self._options)
        other.http, other._owns_http = self.http, False
        return other

    async def export_records(self, *, vectors: bool = False) -> list[Any]:
        """The agent's export records (a list, as ``AsyncMemory``'s)."""
        return list(await self.send(Request(self, "export_records", (), {"vectors": vectors})))

    async def close(self) -> None:
        if self._owns_http:
            await self.http.aclose()

    async def __aenter__(self) -> "AsyncRemoteMemory":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- raw memories ---------------------------------------------------------
    store_memory = AsyncRemote(Memory.store_memory)
    store_memories = AsyncRemote(Memory.store_memories)
    get_memory = AsyncRemote(Memory.get_memory)
    list_memories = AsyncRemote(Memory.list_memories)
    update_memory = AsyncRemote(Memory.update_memory)
    update_metadata = AsyncRemote(Memory.update_metadata)
    forget_memory = AsyncRemote(Memory.forget_memory)
    delete_memory = AsyncRemote(Memory.delete_memory)
    delete_all = AsyncRemote(Memory.delete_all)
    put_item = AsyncRemote(Memory.put_item)
    get_item = AsyncRemote(Memory.get_item)
    delete_item = AsyncRemote(Memory.delete_item)
    list_items = AsyncRemote(Memory.list_items)
    stats = AsyncRemote(Memory.stats)
    reembed = AsyncRemote(Memory.reembed)
    import_records = AsyncRemote(Memory.import_records)
    browse_memories = AsyncRemote(Memory.browse_memories)
    memory_summary = AsyncRemote(Memory.memory_summary)
    # -- facts ----------------------------------------------------------------
    remember_facts = AsyncRemote(Memory.remember_facts)
    fact_history = AsyncRemote(Memory.fact_history)
    split_fact = AsyncRemote(Memory.split_fact)
    # -- recall ---------------------------------------------------------------
    recall_memories = AsyncRemote(Memory.recall_memories)
    recall_conversation = AsyncRemote(Memory.recall_conversation)
    has_conversation = AsyncRemote(Memory.has_conversation)
    # -- memory blocks --------------------------------------------------------
    recall_memory_block = AsyncRemote(Memory.recall_memory_block)
    memory_block = AsyncRemote(Memory.memory_block)
    memory_blocks = AsyncRemote(Memory.memory_blocks)
    replace_memory_block = AsyncRemote(Memory.replace_memory_block)
    append_memory_block = AsyncRemote(Memory.append_memory_block)
    set_memory_block = AsyncRemote(Memory.set_memory_block)
    context = AsyncRemote(Memory.context)
    # -- experiences ----------------------------------------------------------
    record_experience = AsyncRemote(Memory.record_experience)
    short_term = AsyncRemote(Memory.short_term)
    recall = AsyncRemote(Memory.recall)
    recall_related = AsyncRemote(Memory.recall_related)
    consolidate = AsyncRemote(Memory.consolidate)
    # -- capture and surfacing ------------------------------------------------
    observe = AsyncRemote(Memory.observe)
    process_pending = AsyncRemote(Memory.process_pending)
    surface = AsyncRemote(Memory.surface)
    add_session_items = AsyncRemote(Memory.add_session_items)
    session_items = AsyncRemote(Memory.session_items)
    pop_session_item = AsyncRemote(Memory.pop_session_item)
    clear_session_items = AsyncRemote(Memory.clear_session_items)
    # -- compaction -----------------------------------------------------------
    compact = AsyncRemote(Memory.compact)
    # -- curation -------------------------------------------------------------
    reinforce_memory = AsyncRemote(Memory.reinforce_memory)
    demote_memory = AsyncRemote(Memory.demote_memory)
    related = AsyncRemote(Memory.related)
    search_archive = AsyncRemote(Memory.search_archive)
    get_archived = AsyncRemote(Memory.get_archived)
    restore_memory = AsyncRemote(Memory.restore_memory)
    # -- the audit trail ------------------------------------------------------
    audit = AsyncRemote(Memory.audit)
    verify_receipt = AsyncRemote(Memory.verify_receipt)
