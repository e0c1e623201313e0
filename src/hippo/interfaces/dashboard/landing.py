"""The dashboard's landing page: every agent the viewer may see with its counts and its last
activity, and, while no agent holds anything, how to add a first memory (the form itself and its
one-line equivalents in Python, on the command line and over HTTP).

Reading it changes nothing: counts come from ``stats`` and the last activity from browsing
(``browse_memories`` by last access), the blocks and the short-term buffer, none of which count
as a retrieval.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Form, Query, Request, Response
from fastapi.responses import RedirectResponse

from hippo.core.memory import Memory
from hippo.core.validation import check_agent_id
from hippo.errors import InvalidInput
from hippo.interfaces.dashboard.edits import add_memory, added_url
from hippo.interfaces.dashboard.pages import Seen, act_as
from hippo.interfaces.dashboard.render import PageRoute, page
from hippo.interfaces.dashboard.sessions import Viewer, check_csrf
from hippo.interfaces.http.service import Service
from hippo.types import Stats

__all__ = ["AGENTS_PER_PAGE", "router", "AgentRow", "agent_row", "last_activity"]

AGENTS_PER_PAGE = 50  # each row reads an agent's counts: ~50 ms for an agent of 100k memories

router = APIRouter(route_class=PageRoute, include_in_schema=False)
EXAMPLE = "We chose SQLite for the first release"


@dataclass(frozen=True, slots=True)
class AgentRow:
    """One agent on the landing page: its counts and when it last did something, and what."""

    agent_id: str
    stats: Stats
    last: datetime | None
    last_what: str


def last_activity(mem: Memory) -> tuple[datetime | None, str]:
    """The latest of: a fact or memory stored or accessed (its last access, which storing sets),
    a block written, an experience recorded in short-term memory. Browsing: nothing is touched."""
    seen: list[tuple[datetime, str]] = []
    latest = mem.browse_memories(sort="last_access", limit=1).items
    if latest:
        chunk = latest[0]
        seen.append((chunk.last_accessed_at, "stored" if chunk.last_accessed_at == chunk.created_at else "accessed"))
    seen += [(b.updated_at, f"block {b.key} written") for b in mem.memory_blocks()]
    recent = mem.short_term()
    if recent:
        seen.append((max(e.created_at for e in recent), "experience recorded"))
    if not seen:
        return None, ""
    return max(seen, key=lambda event: event[0])


def agent_row(mem: Memory) -> AgentRow:
    when, what = last_activity(mem)
    return AgentRow(mem.agent_id, mem.stats(), when, what)


def visible_agents(service: Service, viewer: Viewer) -> tuple[list[str], list[str]]:
    """The agents holding anything that the viewer may see (sorted), and the other agents their
    key names (nothing stored yet)."""
    holding = set(service.base.agent_ids()) | set(service.base.short_term_agents())
    if viewer.key is None or viewer.key.admin:
        return sorted(holding), []
    return sorted(a for a in holding if viewer.allows(a)), sorted(set(viewer.key.agents) - holding)


def landing(request: Request, viewer: Viewer, status: int = 200, *, after: str | None = None,
            **extra: Any) -> Response:
    """A page of at most ``AGENTS_PER_PAGE`` agents (each row reads the agent's counts), those
    after ``after`` in order, with a link to the next page."""
    service: Service = request.app.state.service
    holding, named = visible_agents(service, viewer)
    shown = [a for a in holding if after is None or a > after]
    rows = [agent_row(service.memory(a)) for a in shown[:AGENTS_PER_PAGE]]
    following = rows[-1].agent_id if len(shown) > AGENTS_PER_PAGE else None
    context: dict[str, Any] = {"rows": rows, "named": named if following is None else [], "now": service.base.now(),
                               "following": following, "paged": after is not None}
    if not rows and after is None:
        context.update(first_steps(request, service, viewer, named))
    return page(request, viewer, "agents.html", status, **context, **extra)


def first_steps(request: Request, service: Service, viewer: Viewer, named: list[str]) -> dict[str, Any]:
    """The empty state: the agent the form suggests, and the same store in Python, CLI and HTTP.
    The database's location only for whoever may read the server's files (keyless or admin)."""
    restricted = viewer.key is not None and not viewer.key.admin
    agent = named[0] if named else service.base.agent_id
    shown = not restricted
    database = service.base.database if shown else "DATABASE"
    example = {"tags": ["decisions"]}
    python = (f"import hippo; hippo.open({json.dumps(database)}, agent_id={json.dumps(agent)})"
              f".store_memory({json.dumps(EXAMPLE)}, {json.dumps(example)})")
    cli = (f"hippo --db {shlex.quote(database)} --agent {shlex.quote(agent)} store {shlex.quote(EXAMPLE)} "
           "--tag decisions")
    auth = " -H 'authorization: Bearer YOUR_KEY'" if viewer.key is not None else ""
    body = json.dumps({"content": EXAMPLE, "metadata": example})
    http = (f"curl -s {str(request.base_url).rstrip('/')}/v1/agents/{agent}/memories{auth} "
            f"-H 'content-type: application/json' -d {shlex.quote(body)}")
    return {"first_agent": agent, "agent_choices": named if restricted else None, "database_shown": shown,
            "lines": {"Python": python, "Command line": cli, "HTTP": http}}


@router.get("/")
def agents(request: Request, viewer: Seen, after: Annotated[str | None, Query(max_length=200)] = None) -> Response:
    """Each agent with its counts and last activity, a page at a time; with none, how to add a first
    memory."""
    return landing(request, viewer, after=after)


@router.post("/memories")
def add_first(request: Request, viewer: Seen, agent_id: Annotated[str, Form(max_length=200)],
              content: Annotated[str, Form()] = "", tags: Annotated[str, Form(max_length=4_000)] = "",
              metadata: Annotated[str, Form(max_length=200_000)] = "",
              intensity: Annotated[str, Form(max_length=20)] = "",
              csrf: Annotated[str, Form(max_length=200)] = "") -> Response:
    """The empty state's form: store a memory for the agent it names (one the viewer may see).
    A bad entry shows the page again with the error and what was typed; nothing is stored then."""
    check_csrf(request, viewer, csrf)
    service: Service = request.app.state.service
    typed = {"typed": {"agent_id": agent_id, "content": content, "tags": tags, "metadata": metadata,
                       "intensity": intensity}}
    try:
        agent = check_agent_id(agent_id.strip())
        viewer.check_agent(agent)
        act_as(viewer)  # a sync route: its body runs in one context, which the core's calls read
        mem = service.memory(agent)
        result = add_memory(mem, content, tags, metadata, intensity)
    except InvalidInput as exc:
        return landing(request, viewer, 400, add_error=exc.message, typed=typed["typed"])
    return RedirectResponse(added_url(mem, result), status_code=303)
