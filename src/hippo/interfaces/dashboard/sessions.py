"""Who is looking: dashboard sessions and their CSRF tokens.

A key is entered once on the login page. The session cookie then holds
``<key id>.<expiry>.<session>.<signature>``: never the key itself. The session is a
secret id the database records (hashed, through :class:`KeyRing`), so any server
that shares the database can check it, logging out ends it on all of them (a
copied cookie is refused from then on), and deleting the key ends every session
made with it. The signature is an HMAC under a secret derived from the key's stored
hash; the CSRF token of a session is another HMAC of its id under the same secret:
forms carry it, and a mutating request without it is refused.

On a keyless server (loopback only, as the API) there is no login; forms then
carry a random token that must equal the one in a cookie (double submit), which
a page on another site can neither read nor set.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass

from fastapi import Request

from hippo.core.keys import KeyRing
from hippo.interfaces.http.service import Service
from hippo.types import ApiKey

__all__ = ["SESSION_COOKIE", "CSRF_COOKIE", "Viewer", "LoginRequired", "Refused", "end_session", "new_session",
           "viewer_of"]

SESSION_COOKIE = "hippo_session"
CSRF_COOKIE = "hippo_csrf"
SESSION_SECONDS = 12 * 3600


class LoginRequired(Exception):
    """The page needs a session: the browser is sent to the login page."""


class Refused(Exception):
    """A request the dashboard will not answer (403): another agent's page, a missing CSRF token."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True, slots=True)
class Viewer:
    """The person behind a request: their key (None on a keyless server) and the CSRF token
    their forms must carry."""

    key: ApiKey | None
    csrf: str
    keyless: bool = False

    def allows(self, agent_id: str) -> bool:
        return self.key is None or self.key.allows(agent_id)

    def check_agent(self, agent_id: str) -> None:
        if not self.allows(agent_id):
            raise Refused("this key may not see this agent")


def _secret(key: ApiKey) -> bytes:
    return hmac.new(key.secret_hash.encode(), b"hippo dashboard session v1", hashlib.sha256).digest()


def _mac(secret: bytes, message: str) -> str:
    digest = hmac.new(secret, message.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def new_session(keys: KeyRing, key: ApiKey, *, now: float | None = None) -> str:
    """A signed session token for ``key``, valid for SESSION_SECONDS or until logout."""
    expires = int((time.time() if now is None else now) + SESSION_SECONDS)
    body = f"{key.id}.{expires}.{keys.open_session(key, seconds=SESSION_SECONDS)}"
    return f"{body}.{_mac(_secret(key), body)}"


def session_key(keys: KeyRing, token: str | None, *, now: float | None = None) -> tuple[ApiKey, str] | None:
    """The live key of an open session token, with the session's CSRF token; None otherwise."""
    parts = (token or "").split(".")
    if len(parts) != 4 or not parts[1].isdigit():
        return None
    key_id, expires, nonce, signature = parts
    if int(expires) < (time.time() if now is None else now):
        return None
    key = keys.session_key(nonce)  # None once logged out, expired or the key deleted, on any server
    if key is None or key.id != key_id:
        return None
    secret = _secret(key)
    if not hmac.compare_digest(_mac(secret, f"{key_id}.{expires}.{nonce}"), signature):
        return None
    return key, _mac(secret, f"csrf.{nonce}")


def end_session(keys: KeyRing, token: str | None) -> None:
    """Log out: the session of a token :func:`session_key` accepted ends on every server."""
    parts = (token or "").split(".")
    if len(parts) == 4:
        keys.close_session(parts[2])


def viewer_of(request: Request) -> Viewer:
    """The viewer of a request; LoginRequired when the server needs keys and there is no session."""
    service: Service = request.app.state.service
    if not service.auth_required():
        token = request.cookies.get(CSRF_COOKIE) or ""
        return Viewer(None, token, keyless=True)
    found = session_key(service.base.keys, request.cookies.get(SESSION_COOKIE))
    if found is None:
        raise LoginRequired()
    return Viewer(*found)


def check_csrf(request: Request, viewer: Viewer | None, submitted: str | None) -> None:
    """Refuse a mutating request whose token is missing or wrong, or that another origin sent."""
    origin = request.headers.get("origin")
    if origin and origin != f"{request.url.scheme}://{request.url.netloc}":
        raise Refused("this request came from another site")
    expected = viewer.csrf if viewer is not None else request.cookies.get(CSRF_COOKIE) or ""
    if not expected or not submitted or not hmac.compare_digest(expected, submitted):
        raise Refused("the form's security token is missing or out of date: reload the page and try again")


def anonymous_token(request: Request) -> str:
    """The double-submit token of a keyless server or the login form: the cookie's, or a new one."""
    return request.cookies.get(CSRF_COOKIE) or secrets.token_urlsafe(24)
