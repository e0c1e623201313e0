"""The dashboard's short-term memory: the agent's buffer of recent experiences, the
consolidation counters (``stats().consolidation``), and a "consolidate
now" button (a CSRF-checked form posting to the core's own ``consolidate``)."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Form, Request, Response

from hippo.interfaces.dashboard.pages import Agent
from hippo.interfaces.dashboard.render import PageRoute, page
from hippo.interfaces.dashboard.sessions import check_csrf

__all__ = ["router"]

router = APIRouter(route_class=PageRoute, include_in_schema=False)
Counter = Literal["recorded", "evicted", "consolidated", "merged", "pruned", "archived", "runs"]
COUNTERS: tuple[Counter, ...] = ("recorded", "evicted", "consolidated", "merged", "pruned", "archived", "runs")


@router.get("/agents/{agent_id}/short-term")
def short_term(request: Request, view: Agent) -> Response:
    """The buffer, newest first, and what consolidation has done so far."""
    return _page(request, view)


@router.post("/agents/{agent_id}/consolidate")
def consolidate(request: Request, view: Agent, csrf: Annotated[str, Form(max_length=200)] = "") -> Response:
    """Move the buffer's important experiences to long-term memory now; show what it did."""
    check_csrf(request, view.viewer, csrf)
    return _page(request, view, done=view.mem.consolidate())


def _page(request: Request, view: Agent, done: object = None) -> Response:
    counts = view.mem.stats().consolidation
    return page(request, view.viewer, "short_term.html", agent=view.mem.agent_id, entries=view.mem.short_term(),
                counters={name: counts[name] for name in COUNTERS},
                rate=counts["consolidation_rate"], capacity=counts["capacity"],
                threshold=view.mem.settings.consolidation_threshold, done=done)
