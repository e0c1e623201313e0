"""What every part of a store shares, and the database-wide parts.

Every per-agent method of a store takes the agent's id first and never returns or changes another
agent's rows. Write methods called inside ``with store.transaction():`` join that one transaction;
called alone, each is its own transaction. API keys belong to the database, not to an agent.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import ContextManager, Protocol

from hippo.types import ApiKey

__all__ = ["Database", "KeyStore", "StoreCapabilities"]


@dataclass(frozen=True, slots=True)
class StoreCapabilities:
    """Declared once per backend and checked by the core, never probed."""

    supports_ann: bool = False
    secure_delete: bool = True
    conversation: bool = True
    # Several processes share the database (servers on PostgreSQL): state they must all see, such
    # as the short-term buffer, lives in the database, never in one process.
    shared: bool = False


class Database(Protocol):
    """What every part of a store shares: where it is, its transaction, closing it."""

    capabilities: StoreCapabilities
    location: str
    """Where the database is, as it may be shown: a file path, or a URL with its password masked."""

    def close(self) -> None: ...

    def transaction(self) -> ContextManager[None]:
        """One write transaction (SQLite: ``BEGIN IMMEDIATE``); re-entrant. Calls of any part
        made inside it join it."""
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
