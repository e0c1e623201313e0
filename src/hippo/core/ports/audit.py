"""The audit trail's contract between the core and a store: who acts in which operation (context
variables the store reads at its write), what one transaction changed of an agent, a record as
stored and hashed, and the store's part (reading, trimming).

Appending is not a method here: the store appends an agent's record inside the very write
transaction that changed the agent (``stores/audit.py``), from what the transaction's writes
noted, so that no change commits without its record and no caller can forget to ask for one.

Who and which operation. Three context variables carry them down to the store without threading
them through every call:

- the **actor** (:func:`acting_as`, :func:`set_actor`): who (an API key's id, ``"local"`` for an
  embedded call) and the surface (``python``, ``http``, ``mcp``, ``cli``, ``dashboard``,
  ``tools``). A surface sets it once per request or command; the default is ``("local", "python")``.
- the **operation** (:func:`operation`): the public operation's name and one id per call, opened
  by :class:`~hippo.core.operation.Operation` around every call of a ``Memory`` method. The
  outermost one wins: an operation that calls another (the agent tools, ``close`` consolidating)
  is recorded under the name its caller used.
- **unaudited** (:func:`unaudited`): a write that is bookkeeping, not a change (recalls' retrieval
  counts, written behind the answer by the store's queue).

The store keeps one :class:`Pending` per agent per write transaction (its handle's state, since a
transaction is one thread's), fed by every write of that agent, and appends the record before the
transaction commits. Context variables follow ``asyncio.to_thread`` (it copies the context), so
``AsyncMemory`` records the caller's actor.

The record (:class:`ChainRecord`): its ``hash`` is SHA-256 over the canonical encoding (JSON,
sorted keys, no spaces) of its fields and the ``prev_hash`` of the record before it; an agent's
first record links to :data:`GENESIS`. Both backends append with :func:`record_hash` and the core's
check (:mod:`hippo.core.audit.chain`) recomputes it: one definition of a record's identity.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Iterator, Protocol

from hippo.core.hashing import content_hash

__all__ = ["GENESIS", "SURFACES", "Actor", "AuditQuery", "AuditStore", "ChainRecord", "Pending", "Scope",
           "acting_as", "actor", "audited", "canonical", "content_hash", "current", "digest", "operation",
           "record_hash", "set_actor", "sign_checkpoint", "subkey", "unaudited"]

SURFACES = ("python", "http", "mcp", "cli", "dashboard", "tools")
DIRECT = "direct_store_write"  # the operation of a write made on a store outside any Memory operation


@dataclass(frozen=True, slots=True)
class Actor:
    """Who acts: an API key's id (``"local"`` for an embedded call) and the surface it came through."""

    who: str = "local"
    surface: str = "python"


@dataclass(frozen=True, slots=True)
class Scope:
    """One call of a public operation: its name, its id (shared by every record it leaves), its
    actor, and the clock that times its records."""

    operation: str
    operation_id: str
    actor: Actor
    clock: Callable[[], datetime] | None = None

    def now(self) -> datetime:
        return self.clock() if self.clock is not None else datetime.now(timezone.utc)


_LOCAL = Actor()
_ACTOR: ContextVar[Actor | None] = ContextVar("hippo_audit_actor", default=None)
_SCOPE: ContextVar[Scope | None] = ContextVar("hippo_audit_scope", default=None)
_UNAUDITED: ContextVar[bool] = ContextVar("hippo_audit_off", default=False)


def actor() -> Actor:
    """The actor of the calls made now."""
    return _ACTOR.get() or _LOCAL


@contextmanager
def acting_as(who: str, surface: str) -> Iterator[Actor]:
    """Record the changes made inside as ``who`` through ``surface`` (a surface calls it once per
    request or command). Inside an operation already open, that operation keeps its actor."""
    if surface not in SURFACES:
        raise ValueError(f"unknown surface {surface!r}: one of {', '.join(SURFACES)}")
    token = _ACTOR.set(Actor(who, surface))
    try:
        yield actor()
    finally:
        _ACTOR.reset(token)


def set_actor(who: str, surface: str) -> None:
    """Set the actor for the rest of the current context (a request's task: an HTTP dependency
    cannot wrap the route in a ``with``)."""
    _ACTOR.set(Actor(who, surface))


@contextmanager
def operation(name: str, *, clock: Callable[[], datetime] | None = None) -> Iterator[Scope]:
    """The scope of one call of the public operation ``name`` (the outermost one wins)."""
    outer = _SCOPE.get()
    if outer is not None:
        yield outer
        return
    scope = Scope(name, secrets.token_hex(8), actor(), clock)
    token = _SCOPE.set(scope)
    try:
        yield scope
    finally:
        _SCOPE.reset(token)


def current() -> Scope:
    """The operation open now; a write made outside any is recorded as a direct store write."""
    scope = _SCOPE.get()
    return scope if scope is not None else Scope(DIRECT, secrets.token_hex(8), actor())


@contextmanager
def unaudited() -> Iterator[None]:
    """Writes inside are bookkeeping, not changes: they leave no record (recalls' retrieval counts)."""
    token = _UNAUDITED.set(True)
    try:
        yield
    finally:
        _UNAUDITED.reset(token)


def audited() -> bool:
    """Whether a write made now is a change the trail records."""
    return not _UNAUDITED.get()


@dataclass(slots=True)
class Pending:
    """What one write transaction changed of one agent: the ids it touched (each with the digest of
    its content, when the write knew it: never the text) and counts by what was done."""

    scope: Scope
    touched: dict[str, str | None] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)

    def touch(self, ids_digests: Iterator[tuple[str, str | None]] | list[tuple[str, str | None]]) -> None:
        for chunk_id, digest in ids_digests:
            if digest is not None or chunk_id not in self.touched:
                self.touched[chunk_id] = digest

    def count(self, what: str, n: int = 1) -> None:
        if n:
            self.counts[what] = self.counts.get(what, 0) + n


# -- records and their hashes ------------------------------------------------------------------

GENESIS = "0" * 64  # the prev_hash of an agent's first record


def canonical(value: Any) -> str:
    """The one encoding that is hashed: JSON with sorted keys and no insignificant spaces."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def subkey(secret: str, purpose: str) -> bytes:
    """A key of its own for one use of the database's secret (digests, checkpoints, receipts)."""
    return hmac.new(bytes.fromhex(secret), purpose.encode(), hashlib.sha256).digest()


def digest(secret: str, content_hash: str) -> str:
    """The digest the trail keeps of a content hash (:mod:`hippo.core.hashing`): keyed with the
    database's own secret, so the same text leaves different digests in different databases and a
    table of known texts' digests made elsewhere matches nothing here."""
    return hmac.new(subkey(secret, "digest"), content_hash.encode(), hashlib.sha256).hexdigest()


def sign_checkpoint(secret: str, agent_id: str, through: int, last_hash: str) -> str:
    """The HMAC of a checkpoint: the agent, the last removed record's seq and hash."""
    message = canonical({"agent_id": agent_id, "through": through, "last_hash": last_hash})
    return hmac.new(subkey(secret, "checkpoint"), message.encode(), hashlib.sha256).hexdigest()


@dataclass(frozen=True, slots=True)
class ChainRecord:
    """One stored audit record, as hashed: ``at`` the ISO-8601 text stored, ``body`` its canonical JSON."""

    agent_id: str
    seq: int
    at: str
    operation: str
    operation_id: str
    who: str
    surface: str
    kind: str
    body: str
    prev_hash: str
    hash: str = ""

    def fields(self) -> dict[str, Any]:
        return {"agent_id": self.agent_id, "seq": self.seq, "at": self.at, "operation": self.operation,
                "operation_id": self.operation_id, "who": self.who, "surface": self.surface, "kind": self.kind,
                "body": self.body, "prev_hash": self.prev_hash}


def record_hash(record: ChainRecord) -> str:
    """SHA-256 of the record's canonical encoding, its ``prev_hash`` included."""
    return hashlib.sha256(canonical(record.fields()).encode("utf-8")).hexdigest()


# -- the store's part ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AuditQuery:
    """Which of an agent's records to read, newest first: at or after ``since``, before ``until``,
    of one ``operation``, touching ``chunk_id``; ``before_seq`` pages (the last seq seen)."""

    since: datetime | None = None
    until: datetime | None = None
    operation: str | None = None
    chunk_id: str | None = None
    before_seq: int | None = None
    limit: int = 100


class AuditStore(Protocol):
    def audit_records(self, agent_id: str, query: AuditQuery) -> list[ChainRecord]:
        """The agent's records that ``query`` selects, newest first."""
        ...

    def audit_chain(self, agent_id: str) -> Iterator[ChainRecord]:
        """Every record the agent's trail holds, oldest first (read in pages: a long trail is
        never held whole)."""
        ...

    def audit_head(self, agent_id: str) -> tuple[int, str] | None:
        """The seq and hash of the agent's newest record, as the head kept beside the trail says."""
        ...

    def audit_agents(self) -> list[str]:
        """Every agent that has a trail (``*`` is the database's own: API keys)."""
        ...

    def audit_secret(self) -> str:
        """The database's audit secret (hex): it keys the digests and signs checkpoints."""
        ...

    def trim_audit(self, agent_id: str, before: datetime, scope: Scope) -> int:
        """Remove the agent's records older than ``before`` (a run from its first), leaving a
        signed checkpoint record in the same transaction; how many were removed."""
        ...
