"""HTTP API keys: created once, shown once, stored hashed, each scoped to the agents it may reach.

A key reads ``hippo_<id>_<secret>``. The database keeps the public ``id`` and
the SHA-256 of the 256-bit random ``secret``; with that much entropy a fast hash
is enough (a slow password hash protects guessable secrets, and these are not).
Verification compares digests in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from datetime import datetime, timedelta
from typing import Sequence

from hippo.clock import Clock, system_clock
from hippo.core.ports import KeyStore
from hippo.core.ports.audit import operation
from hippo.core.validation import check_agent_id
from hippo.errors import InvalidInput, NotFound
from hippo.types import ApiKey

__all__ = ["KeyRing", "create_key", "delete_key", "verify_key"]

_TOKEN = re.compile(r"^hippo_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$")


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def create_key(store: KeyStore, agents: Sequence[str], *, admin: bool = False, label: str | None = None,
               now: datetime) -> tuple[str, ApiKey]:
    """A new key for ``agents`` (an admin key reaches every agent); returns the token, shown only now."""
    if isinstance(agents, str):
        agents = [agents]
    agents = tuple(dict.fromkeys(check_agent_id(a) for a in agents))
    if not agents and not admin:
        raise InvalidInput("a key needs at least one agent (--agent ID) or --admin")
    if label is not None and (not isinstance(label, str) or len(label) > 200):
        raise InvalidInput("a key label is text of at most 200 characters")
    key_id, secret = secrets.token_hex(6), secrets.token_urlsafe(32)
    record = ApiKey(id=key_id, secret_hash=_digest(secret), agents=agents, admin=admin, created_at=now, label=label)
    store.put_api_key(record)
    return f"hippo_{key_id}_{secret}", record


def verify_key(store: KeyStore, token: str) -> ApiKey | None:
    """The key a bearer token belongs to, or None for anything that is not a live key."""
    match = _TOKEN.fullmatch(token or "")
    if not match:
        return None
    record = store.get_api_key(match.group(1))
    if record is None:
        return None
    return record if hmac.compare_digest(record.secret_hash, _digest(match.group(2))) else None


def delete_key(store: KeyStore, key_id: str) -> None:
    if not store.delete_api_key(key_id):
        raise NotFound(f"no API key {key_id!r}")


class KeyRing:
    """The API keys of one database (database-wide, not one agent's): what the HTTP surfaces
    and ``hippo keys`` use, so that no surface reaches the store. ``hippo.open_keys(db)`` opens
    one without an embedder; ``Memory.keys`` is the one of an open memory."""

    def __init__(self, store: KeyStore, *, clock: Clock = system_clock, owns_store: bool = False) -> None:
        self._store = store
        self._clock = clock
        self._owns_store = owns_store

    def create(self, agents: Sequence[str], *, admin: bool = False, label: str | None = None) -> tuple[str, ApiKey]:
        with operation("create_key", clock=self._clock):  # the audit trail's database chain "*"
            return create_key(self._store, agents, admin=admin, label=label, now=self._clock())

    def verify(self, token: str) -> ApiKey | None:
        return verify_key(self._store, token)

    def get(self, key_id: str) -> ApiKey | None:
        """The stored key with this public id (its hash, never a token), or None."""
        return self._store.get_api_key(key_id) if isinstance(key_id, str) else None

    def delete(self, key_id: str) -> None:
        """Delete a key; every session made with it ends at once."""
        with operation("delete_key", clock=self._clock):
            delete_key(self._store, key_id)

    # A dashboard session lives in the database, not only in its signed cookie, so that logging out
    # on one server ends it on every server sharing the database (a copied cookie is refused).

    def open_session(self, key: ApiKey, *, seconds: int) -> str:
        """Start a session of ``key`` lasting ``seconds``: returns its secret id; the database keeps
        only its SHA-256 (a copy of the table opens no session)."""
        session, now = secrets.token_urlsafe(24), self._clock()
        self._store.put_session(_digest(session), key.id, now + timedelta(seconds=seconds), now)
        return session

    def session_key(self, session: str) -> ApiKey | None:
        """The key of an open session; None once it was closed, expired, or its key deleted."""
        if not isinstance(session, str) or not session:
            return None
        return self._store.session_key(_digest(session), self._clock())

    def close_session(self, session: str) -> None:
        """End a session on every server (logout); closing an unknown one does nothing."""
        if isinstance(session, str) and session:
            self._store.delete_session(_digest(session))

    def list(self) -> list[ApiKey]:
        return self._store.list_api_keys()

    def any(self) -> bool:
        """Whether the database holds any key (requests then need one)."""
        return self._store.has_api_keys()

    def close(self) -> None:
        if self._owns_store:
            self._store.close()

    def __enter__(self) -> "KeyRing":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
