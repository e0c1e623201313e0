"""The dashboard's pages: login, browsing, search and one memory's page (the landing page is
:mod:`.landing`'s).

Each route is a few lines: check who is looking, call the core, render. Browsing and search never
count as a retrieval (``list_memories``, ``get_memory``, ``recall_memories(touch=False)``).
"""

from __future__ import annotations

import json
from datetime import date, datetime, time, timezone
from typing import Annotated, Any, Literal
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Form, Path, Query, Request, Response
from fastapi.responses import RedirectResponse
from pydantic import BaseModel, Field

from hippo.core.experiences.importance import EXPERIENCE_TYPES
from hippo.core.memories.browsing import ARCHIVE_SCAN
from hippo.core.memory import Memory
from hippo.core.ports.audit import set_actor
from hippo.core.strength import effective_strength, strength_curve
from hippo.core.validation import AGENT_ID, ULID
from hippo.errors import NotFound
from hippo.interfaces.dashboard.render import PageRoute, cookie_options, page
from hippo.interfaces.dashboard.sessions import (
    CSRF_COOKIE,
    SESSION_COOKIE,
    SESSION_SECONDS,
    Viewer,
    check_csrf,
    end_session,
    new_session,
    viewer_of,
)
from hippo.interfaces.http.service import Service
from hippo.types import Chunk

__all__ = ["router", "act_as", "agent_view", "AgentView", "BrowseQuery", "Seen", "browse_page", "memory_page",
           "persons_keys"]

router = APIRouter(route_class=PageRoute, include_in_schema=False)
AGENT = Path(pattern=AGENT_ID.pattern)
MEMORY_ID = Path(pattern=ULID.pattern)
PAGE_SIZE = 25


class AgentView:
    """One agent's memory as a viewer may see it (their key allows the agent)."""

    def __init__(self, viewer: Viewer, mem: Memory) -> None:
        self.viewer, self.mem = viewer, mem


async def agent_view(request: Request, agent_id: Annotated[str, AGENT]) -> AgentView:
    """Async so that the audit trail's actor (the viewer's key, "dashboard") is set in the request's
    own context, which the page's worker thread copies; the session is read in a worker thread."""
    from starlette.concurrency import run_in_threadpool

    viewer = await run_in_threadpool(viewer_of, request)
    viewer.check_agent(agent_id)
    act_as(viewer)
    service: Service = request.app.state.service
    return AgentView(viewer, service.memory(agent_id))


def act_as(viewer: Viewer) -> None:
    """Record the changes made for the rest of this request's context as the viewer's key (its id;
    ``anonymous`` on a server without keys) through the dashboard."""
    set_actor(viewer.key.id if viewer.key is not None else "anonymous", "dashboard")


Agent = Annotated[AgentView, Depends(agent_view)]
Seen = Annotated[Viewer, Depends(viewer_of)]


def life_chart(mem: Memory, chunk: Chunk) -> dict[str, Any]:
    """The strength curve from creation to now as computed from the stored state, and its events."""
    events = {chunk.created_at: "created", chunk.last_accessed_at: "last access (decay restarts)"}
    if chunk.reinforced_at is not None:  # feedback restarts recency, not decay
        events[chunk.reinforced_at] = f"last reinforcement (feedback {chunk.feedback:+d})"
    curve = strength_curve(chunk.running_intensity, chunk.access_count, [chunk.last_accessed_at], chunk.created_at,
                           max(mem.now(), chunk.created_at), also=tuple(events), decay_lambda=mem.settings.decay_lambda)
    return {"labels": [t.strftime("%Y-%m-%d %H:%M") for t, _ in curve],
            "values": [round(value, 4) for _, value in curve],
            "events": [round(value, 4) if t in events else None for t, value in curve],
            "names": [events.get(t, "") for t, _ in curve]}


def strength_of(mem: Memory, chunk: Chunk) -> float:
    """The strength a recall would use now (decayed since the last access)."""
    return effective_strength(chunk.running_intensity, chunk.access_count, chunk.last_accessed_at, mem.now(),
                              decay_lambda=mem.settings.decay_lambda)


# -- login ------------------------------------------------------------------------------


@router.get("/login")
def login_page(request: Request) -> Response:
    service: Service = request.app.state.service
    if not service.auth_required():
        return RedirectResponse("/", status_code=303)
    return page(request, None, "login.html")


@router.post("/login")
def login(request: Request, key: Annotated[str, Form(max_length=200)],
          csrf: Annotated[str, Form(max_length=200)] = "") -> Response:
    check_csrf(request, None, csrf)
    service: Service = request.app.state.service
    found = service.base.keys.verify(key.strip())
    if found is None:
        return page(request, None, "login.html", 401, failed=True)
    response = RedirectResponse("/", status_code=303)
    response.set_cookie(SESSION_COOKIE, new_session(service.base.keys, found), max_age=SESSION_SECONDS,
                        **cookie_options(request))
    response.delete_cookie(CSRF_COOKIE, path="/")
    return response


@router.post("/logout")
def logout(request: Request, viewer: Seen, csrf: Annotated[str, Form(max_length=200)] = "") -> Response:
    check_csrf(request, viewer, csrf)
    service: Service = request.app.state.service
    end_session(service.base.keys, request.cookies.get(SESSION_COOKIE))  # a copy of the cookie is refused too
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response


# -- browsing, search -------------------------------------------------------------


class BrowseQuery(BaseModel):
    """The browse page's filters and sort, as query parameters (empty fields mean no filter)."""

    sort: Literal["newest", "strength", "last_access", "feedback"] = "newest"
    kind: Literal["fact", "memory", ""] = ""
    tag: str = Field("", max_length=100)
    source: str = Field("", max_length=32)
    session: str = Field("", max_length=200)
    since: str = Field("", max_length=40)
    until: str = Field("", max_length=40)
    current_only: bool = False  # hide superseded facts (shown, marked, by default)
    show_archived: bool = False  # the latest archived memories too, marked
    archived: str = Field("", max_length=400)  # archived memories that match these words too
    type: str = Field("", max_length=20)  # the experience's type (the core checks it)
    offset: int = Field(0, ge=0, le=100_000)


@router.get("/agents/{agent_id}")
def browse(request: Request, view: Agent, q: Annotated[BrowseQuery, Query()]) -> Response:
    """Every fact and memory, filtered and sorted (newest first by default), a page at a time;
    superseded facts and archived memories on request, marked. Above them, the add form."""
    return browse_page(request, view, q)


def browse_page(request: Request, view: AgentView, q: BrowseQuery, status: int = 200, **extra: Any) -> Response:
    """The agent's page; ``extra`` for the template (the add form's error and what was typed)."""
    found = view.mem.browse_memories(
        sort=q.sort, limit=PAGE_SIZE, offset=q.offset, kind=q.kind or None, tags=[q.tag] if q.tag else None,
        source=q.source or None, session_id=q.session or None, since=q.since or None, until=q.until or None,
        superseded=not q.current_only, archived=q.show_archived, archived_matching=q.archived,
        types=q.type or None)
    rows = [(c, strength_of(view.mem, c)) for c in found.items]
    link = {k: v for k, v in q.model_dump().items() if v and k != "offset"}
    return page(request, view.viewer, "browse.html", status, agent=view.mem.agent_id, rows=rows, q=q, found=found,
                query=urlencode(link), types=EXPERIENCE_TYPES, archive_scan=ARCHIVE_SCAN, **extra)


@router.get("/agents/{agent_id}/search")
def search(request: Request, view: Agent, q: Annotated[str, Query(max_length=4_000)] = "",
           kind: Literal["fact", "memory", ""] = "") -> Response:
    """Hybrid recall with each hit's score parts; a look, so not a retrieval (``touch=False``)."""
    found = view.mem.recall_memories(q, 20, kind=kind or None, touch=False) if q.strip() else None
    return page(request, view.viewer, "search.html", agent=view.mem.agent_id, q=q, kind=kind, found=found)


@router.get("/agents/{agent_id}/memories/{memory_id}")
def memory(request: Request, view: Agent, memory_id: Annotated[str, MEMORY_ID]) -> Response:
    """A memory's page: content, metadata, strength, feedback, provenance, history and links; an
    archived memory's page says since when, and offers to restore it."""
    try:
        chunk = view.mem.get_memory(memory_id)
    except NotFound:
        gone = view.mem.get_archived(memory_id)  # NotFound again: neither live nor archived
        return page(request, view.viewer, "archived.html", agent=view.mem.agent_id, gone=gone, chunk=gone.chunk,
                    strength=strength_of(view.mem, gone.chunk))
    said = request.query_params
    day = said.get("as_of") or None
    as_of = end_of_day(day)
    return memory_page(request, view, chunk, saved=said.get("saved"), restored=said.get("restored"),
                       split_from=split_from(request), added=one_of(said.get("added"), "inserted", "strengthened"),
                       feedback=one_of(said.get("feedback"), "reinforced", "demoted"), as_of=as_of,
                       as_of_text=day if as_of is not None else "",
                       as_of_error=f"not a date: {day!r} (YYYY-MM-DD)" if day and as_of is None else None)


def end_of_day(day: str | None) -> datetime | None:
    """The end of a day chosen on the memory page (``YYYY-MM-DD``, UTC): what stood once that day's
    changes were made; None for anything else."""
    try:
        start = date.fromisoformat(day or "")
    except ValueError:
        return None
    return datetime.combine(start, time.max, tzinfo=timezone.utc)


def one_of(value: str | None, *known: str) -> str | None:
    """A query parameter the page names in its note, when it is one the page knows."""
    return value if value in known else None


def split_from(request: Request) -> str | None:
    """The fact a split page came from (``?split_from=``), when it reads as an id (it is shown)."""
    value = request.query_params.get("split_from")
    return value if value is not None and ULID.fullmatch(value) else None


def persons_keys(metadata: dict[str, Any]) -> dict[str, Any]:
    """The metadata a person edits as JSON: neither hippo's own keys (``_`` first) nor the tags,
    which have their own field."""
    return {k: v for k, v in metadata.items() if not k.startswith("_") and k != "tags"}


def memory_page(request: Request, view: AgentView, chunk: Chunk, status: int = 200, **extra: Any) -> Response:
    """A live memory's page; ``extra`` for the template (a form's error and what was typed)."""
    history = view.mem.fact_history(chunk.id) if chunk.kind == "fact" else None
    context = {"content_text": chunk.content, "tags": ", ".join(str(t) for t in chunk.metadata.get("tags") or ()),
               "metadata_text": json.dumps(persons_keys(chunk.metadata), indent=2, ensure_ascii=False), **extra}
    return page(request, view.viewer, "memory.html", status, agent=view.mem.agent_id, chunk=chunk,
                strength=strength_of(view.mem, chunk), history=history, links=view.mem.related(chunk.id),
                hippos={k: v for k, v in chunk.metadata.items() if k.startswith("_")},
                charts={"life": life_chart(view.mem, chunk)}, **context)
