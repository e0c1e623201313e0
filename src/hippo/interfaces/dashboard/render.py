"""Rendering the dashboard's pages: the Jinja2 templates, and errors as pages rather than JSON.

Every dashboard route uses :class:`PageRoute`, which turns hippo's errors into an HTML page with
the status of the HTTP API's one error table (``status_of``), a missing session into a redirect
to the login page, and a refusal into a 403 page.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Coroutine

from fastapi import Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.routing import APIRoute
from fastapi.templating import Jinja2Templates

from hippo.errors import HippoError
from hippo.interfaces.dashboard.sessions import CSRF_COOKIE, LoginRequired, Refused, Viewer, anonymous_token
from hippo.interfaces.http.errors import status_of

__all__ = ["POLICY", "PageRoute", "ago", "headline", "page", "templates", "cookie_options"]

HERE = Path(__file__).parent
templates = Jinja2Templates(directory=str(HERE / "templates"))


def _when(value: datetime | None) -> str:
    if value is None:
        return ""
    return value.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M")


def _moment(value: datetime | None) -> str:
    """A time to the second (UTC): the audit trail's records, several a minute."""
    return "" if value is None else value.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def headline(text: str, limit: int = 70) -> str:
    """A memory's text as a title: on one line, cut at a word before ``limit`` characters with an
    ellipsis when longer (within the last word when it is one long word)."""
    line = " ".join(text.split())
    if len(line) <= limit:
        return line
    cut = line[:limit - 1]
    space = cut.rfind(" ")
    if line[limit - 1] != " " and space >= limit // 2:  # the cut falls inside a word: drop that word
        cut = cut[:space]
    return cut.rstrip(" ,;:.-–—") + "…"


def ago(value: datetime | None, now: datetime) -> str:
    """How long before ``now``, in its largest whole unit ("3 days ago", "just now")."""
    if value is None:
        return ""
    seconds = (now - value).total_seconds()
    if seconds < 60:
        return "just now"
    unit, size = next((u, s) for u, s in (("day", 86400), ("hour", 3600), ("minute", 60)) if seconds >= s)
    count = int(seconds // size)
    return f"{count} {unit}{'' if count == 1 else 's'} ago"


templates.env.filters["when"] = _when
templates.env.filters["moment"] = _moment
templates.env.filters["headline"] = headline
templates.env.filters["ago"] = ago
templates.env.filters["num"] = lambda value, digits=3: "" if value is None else f"{value:.{digits}f}"


def cookie_options(request: Request) -> dict[str, Any]:
    """HTTP-only, SameSite=Strict, Secure when the page came over HTTPS."""
    return {"httponly": True, "samesite": "strict", "secure": request.url.scheme == "https", "path": "/"}


def page(request: Request, viewer: Viewer | None, name: str, status: int = 200, **context: Any) -> HTMLResponse:
    """A template rendered for ``viewer``; a keyless viewer without a token gets one in a cookie."""
    fresh = None
    if viewer is None or (viewer.keyless and not viewer.csrf):
        fresh = anonymous_token(request)
        viewer = replace(viewer, csrf=fresh) if viewer is not None else None
    csrf = viewer.csrf if viewer is not None else fresh
    response = templates.TemplateResponse(request, name, {"viewer": viewer, "csrf": csrf, **context},
                                          status_code=status)
    if fresh is not None and request.cookies.get(CSRF_COOKIE) != fresh:
        response.set_cookie(CSRF_COOKIE, fresh, **cookie_options(request))
    return response


# Defence in depth behind the templates' escaping: a page runs only the scripts and styles of
# /dashboard-assets (no inline script, handler or style), loads nothing from elsewhere, posts its
# forms only to this server and is framed by no other page.
POLICY = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; "
          "frame-ancestors 'none'; base-uri 'none'")


class PageRoute(APIRoute):
    """A route whose errors are pages: hippo's error table for statuses, the login page for no session;
    every answer carries the dashboard's Content-Security-Policy (``POLICY``)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def answer(request: Request) -> Response:
            try:
                return await handler(request)
            except LoginRequired:
                return RedirectResponse("/login", status_code=303)
            except Refused as exc:
                return page(request, None, "error.html", 403, message=exc.message)
            except HippoError as exc:
                return page(request, None, "error.html", status_of(exc), message=exc.message)

        async def handle(request: Request) -> Response:
            response = await answer(request)
            response.headers["Content-Security-Policy"] = POLICY
            return response

        return handle
