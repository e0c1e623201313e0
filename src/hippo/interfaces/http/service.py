"""What every route of the HTTP API shares: the server's :class:`Service` (the database's memory,
one view of it per agent, the keys, the pool of heavy work) and the ``Mem`` dependency that gives
a route the memory of the agent in its path once the request's key may reach it."""

import threading
from dataclasses import dataclass, replace
from typing import Annotated, Any, Callable, Literal, TypeVar

from fastapi import Depends, Path, Request, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from hippo.core.embedding import EmbeddingObserver
from hippo.core.memory import Memory
from hippo.core.ports.audit import set_actor
from hippo.core.validation import AGENT_ID, ULID, check_agent_id
from hippo.core.vitals import schema_version
from hippo.errors import Forbidden, Unauthorized
from hippo.types import ApiKey, Stats

__all__ = ["AGENT", "HEAVY_WORKERS", "MEMORY_ID", "Check", "Mem", "Run", "Service", "agent_memory", "base_path",
           "shown_stats"]

# Heavy calls (capture, compaction: a batch through the model) at once; the others wait for a slot
# without a thread, so the request threads (anyio's 40) stay free for every light call. Two, not
# one: with an LLM, capture mostly waits on the network, and one slot would queue every agent.
HEAVY_WORKERS = 2
T = TypeVar("T")

AGENT = Path(pattern=AGENT_ID.pattern, description="The agent whose memory this is.")
MEMORY_ID = Path(pattern=ULID.pattern, description="A memory's id (ULID).")


@dataclass(frozen=True, slots=True)
class Run:
    """One maintenance run: ``task`` maintenance, consolidation or capture; ``trigger`` schedule or
    request; whether it succeeded; how many memories it archived."""

    task: str
    trigger: Literal["schedule", "request"]
    ok: bool
    archived: int = 0


@dataclass(frozen=True, slots=True)
class Check:
    """One readiness check: its name, whether it passed, and why not."""

    name: str
    ok: bool
    detail: str = ""


class Service:
    """The shared state of one server: the database's memory and one view of it per agent."""

    def __init__(self, base: Memory, *, require_keys: bool = False) -> None:
        self.base = base
        self._keyring = base.keys
        self._agents: dict[str, Memory] = {}
        self._lock = threading.Lock()
        # Once keys are required they stay required for this server's life: deleting the last
        # key must not open a server that was started with keys (or reachable beyond loopback).
        self._keyed = require_keys
        self.on_close: list[Callable[[], None]] = []  # background work to stop before the database closes
        self._heavy: Any = None  # anyio.CapacityLimiter of HEAVY_WORKERS, made on the event loop
        self.on_run: list[Callable[[Run], None]] = []  # told of each maintenance run (the metrics)
        # Each agent's memory has an embedding service of its own: every one gets these observers.
        self._observers: list[EmbeddingObserver] = []

    def observe_embeddings(self, observer: EmbeddingObserver) -> None:
        """Tell ``observer`` of every call to the embedder, whichever agent's memory makes it."""
        with self._lock:
            self._observers.append(observer)
            for mem in (self.base, *self._agents.values()):
                mem.embedding.observers.append(observer)

    def ran(self, run: Run) -> None:
        """Report one maintenance run to whoever listens."""
        for listener in list(self.on_run):
            listener(run)

    async def heavy(self, work: Callable[[], T]) -> T:
        """Run ``work`` (one heavy call) in the bounded pool of heavy work, off the request threads."""
        import anyio.to_thread

        if self._heavy is None:  # only the event loop's thread gets here: no race
            self._heavy = anyio.CapacityLimiter(HEAVY_WORKERS)
        return await anyio.to_thread.run_sync(work, limiter=self._heavy)

    def memory(self, agent_id: str) -> Memory:
        agent_id = check_agent_id(agent_id)
        with self._lock:
            if agent_id not in self._agents:
                mem = self.base.for_agent(agent_id)
                mem.embedding.observers.extend(self._observers)
                self._agents[agent_id] = mem
            return self._agents[agent_id]

    def auth_required(self) -> bool:
        if not self._keyed and self.base.keys.any():
            self._keyed = True
        return self._keyed

    def authorize(self, authorization: str | None, agent_id: str) -> ApiKey | None:
        """The request's key once it may reach ``agent_id``; None on a server that needs no key."""
        if not self.auth_required():
            return None
        key = self._key(authorization)
        if not key.allows(agent_id):
            raise Forbidden("this API key may not access this agent")  # 403
        return key

    def authorize_admin(self, authorization: str | None) -> ApiKey | None:
        """The request's key once it is an admin key (for what spans every agent); None on a
        server that needs no key."""
        if not self.auth_required():
            return None
        key = self._key(authorization)
        if not key.admin:
            raise Forbidden("this route spans every agent: it needs an admin key (hippo keys create --admin)")
        return key

    def _key(self, authorization: str | None) -> ApiKey:
        scheme, _, token = (authorization or "").partition(" ")
        key = self._keyring.verify(token.strip()) if scheme.lower() == "bearer" else None
        if key is None:
            raise Unauthorized("a valid API key is required: Authorization: Bearer <key>")  # 401
        return key

    def readiness(self) -> list[Check]:
        """Whether the server can answer: the database answers a trivial query with the schema
        this hippo knows, and the embedding model has answered once (none configured: ready).
        Never loads the model: a probe must stay cheap."""
        checks = []
        try:
            schema = schema_version(self.base)
            checks.append(Check("store", True))
            checks.append(Check("migrations", schema.current, "" if schema.current else (
                f"the database's schema is at migration {schema.applied}, this version knows {schema.known}")))
        except Exception as exc:  # the probe reports a store that fails, whatever the failure
            checks.append(Check("store", False, f"the database did not answer ({type(exc).__name__})"))
            checks.append(Check("migrations", False, "unknown: the database did not answer"))
        embedder = self.base.embedding.embedder
        if embedder is None or self.base.embedding.loaded:  # the model object every agent's memory shares
            checks.append(Check("model", True))
        else:
            checks.append(Check("model", False, f"the embedding model {embedder.model_id} is not loaded yet"))
        return checks

    def close(self) -> None:
        for stop in self.on_close:
            stop()
        self.base.close()


# Declares the scheme in the OpenAPI document (the Authorize button of /docs); the header itself
# is checked by Service.authorize, which also answers servers that need no key.
_BEARER = HTTPBearer(auto_error=False, scheme_name="apiKey",
                     description="An API key from `hippo keys create`; not needed on a keyless loopback server.")


async def agent_memory(request: Request, agent_id: Annotated[str, AGENT],
                       _key: Annotated[HTTPAuthorizationCredentials | None, Security(_BEARER)] = None) -> Memory:
    """The memory of the agent in the path, once the request's key may reach it. Async so that the
    audit trail's actor (the key's id, "http") is set in the request's own context, which the route
    runs in (its worker thread gets a copy); the key is read in a worker thread all the same."""
    from starlette.concurrency import run_in_threadpool

    service: Service = request.app.state.service
    key = await run_in_threadpool(service.authorize, request.headers.get("authorization"), agent_id)
    request.state.key = key
    set_actor(key.id if key is not None else "anonymous", "http")
    return service.memory(agent_id)


def shown_stats(found: Stats, key: ApiKey | None) -> Stats:
    """An agent's stats as a request may see them: ``database_bytes`` (the whole file, every agent's
    writes) only for an admin key or on a server that needs none; never the server's path."""
    shown_bytes = found.database_bytes if key is None or key.admin else None
    return replace(found, database=None, database_bytes=shown_bytes)


Mem = Annotated[Memory, Depends(agent_memory)]
base_path = "/v1/agents/{agent_id}"


