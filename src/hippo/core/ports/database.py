"""What every part of a store shares, and the database-wide parts.

Every per-agent method of a store takes the agent's id first and never returns or changes another
agent's rows. Write methods called inside ``with store.transaction():`` join that one transaction;
called alone, each is its own transaction. API keys belong to the database, not to an agent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable, ContextManager, Protocol

from hippo.types import ApiKey

__all__ = ["BackupResult", "CheckReport", "Database", "Finding", "KeyStore", "Progress", "RestoreResult",
           "SchemaVersion", "StoreCapabilities"]

Progress = Callable[[int, int], None]
"""Called with (done, total) as a long job goes (a backup: pages copied, of all)."""


@dataclass(frozen=True, slots=True)
class StoreCapabilities:
    """Declared once per backend and checked by the core, never probed."""

    supports_ann: bool = False
    secure_delete: bool = True
    conversation: bool = True
    # Several processes share the database (servers on PostgreSQL): state they must all see, such
    # as the short-term buffer, lives in the database, never in one process.
    shared: bool = False


@dataclass(frozen=True, slots=True)
class SchemaVersion:
    """How many of the schema's migrations the database has applied, and how many this hippo knows."""

    applied: int
    known: int

    @property
    def current(self) -> bool:
        return self.applied == self.known


@dataclass(frozen=True, slots=True)
class Finding:
    """One check of a database (``check``): its name, whether it holds, and what was found."""

    name: str
    ok: bool
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "ok": self.ok, "detail": self.detail}


@dataclass(frozen=True, slots=True)
class CheckReport:
    """What checking a whole database found: each check, and the counts it read on the way."""

    location: str
    findings: tuple[Finding, ...]
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Whether every check holds."""
        return all(finding.ok for finding in self.findings)

    @property
    def failed(self) -> list[Finding]:
        return [finding for finding in self.findings if not finding.ok]

    def to_dict(self) -> dict[str, Any]:
        return {"database": self.location, "ok": self.ok, "checks": [f.to_dict() for f in self.findings],
                "counts": dict(self.counts)}


@dataclass(frozen=True, slots=True)
class BackupResult:
    """A copy of the whole database written to ``path``: its size and schema version."""

    path: str
    bytes: int
    schema_version: int

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "bytes": self.bytes, "schema_version": self.schema_version}


@dataclass(frozen=True, slots=True)
class RestoreResult:
    """A backup put in place of the database at ``database``, after its checks held."""

    backup: str
    database: str
    bytes: int
    schema_version: int

    def to_dict(self) -> dict[str, Any]:
        return {"backup": self.backup, "database": self.database, "bytes": self.bytes,
                "schema_version": self.schema_version}


class Database(Protocol):
    """What every part of a store shares: where it is, its transaction, closing it, and its upkeep
    (a backup, a check of the whole database)."""

    capabilities: StoreCapabilities
    location: str
    """Where the database is, as it may be shown: a file path, or a URL with its password masked."""

    def close(self) -> None: ...

    def transaction(self) -> ContextManager[None]:
        """One write transaction (SQLite: ``BEGIN IMMEDIATE``); re-entrant. Calls of any part
        made inside it join it."""
        ...

    def backup(self, path: str, *, overwrite: bool = False, progress: Progress | None = None) -> BackupResult:
        """A consistent copy of the whole database (every agent) at ``path``, taken while writers
        go on: the copy holds each write whole or not at all. Written beside ``path`` and renamed
        over it once complete; an existing ``path`` is refused unless ``overwrite``. A backend whose
        backups belong to its own tools (PostgreSQL: ``pg_dump``) raises ConfigError naming them."""
        ...

    def check(self) -> CheckReport:
        """Check the whole database (its structure, its keyword and vector indexes agree with the
        chunks, its schema version); reads only."""
        ...

    def schema_version(self) -> SchemaVersion:
        """The migrations applied, read from the database now (one trivial query: a readiness
        probe asks it, so it must stay cheap and touch no row of any agent)."""
        ...


class KeyStore(Database, Protocol):
    """The HTTP API keys (hashed), kept in the database they open: database-wide."""

    def put_api_key(self, key: ApiKey) -> None: ...

    def get_api_key(self, key_id: str) -> ApiKey | None: ...

    def list_api_keys(self) -> list[ApiKey]: ...

    def has_api_keys(self) -> bool:
        """Whether any key exists (asked on every request until one does: must be cheap)."""
        ...

    def delete_api_key(self, key_id: str) -> bool:
        """Delete a key and, in the same transaction, every dashboard session made with it."""
        ...

    def put_session(self, session_hash: str, key_id: str, expires_at: datetime, now: datetime) -> None:
        """Record a dashboard session of a key by the SHA-256 of its secret id (never the id, so the
        table cannot be replayed); sessions expired at ``now`` are dropped in the same transaction."""
        ...

    def session_key(self, session_hash: str, now: datetime) -> ApiKey | None:
        """The key of a recorded session unexpired at ``now`` whose key still exists, else None
        (asked on every dashboard page: one read by primary key)."""
        ...

    def delete_session(self, session_hash: str) -> bool:
        """End one dashboard session; False when it was not recorded."""
        ...
