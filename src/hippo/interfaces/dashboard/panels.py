"""The dashboard's memory blocks (view and edit, with their character limits) and statistics:
counts by kind and by experience type, a strength histogram, and per day memories stored,
retrievals and recalls, consolidation and pruning, and last accesses; the consolidation totals and
the database's size against its cap. Counted whole by the store (``Memory.memory_summary``), not
sampled, so they are true at any size; drawn by the vendored Chart.js."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Form, Path, Request, Response
from fastapi.responses import RedirectResponse

from hippo.core.memories.summary import BINS
from hippo.core.validation import BLOCK_KEY
from hippo.errors import InvalidInput
from hippo.interfaces.dashboard.pages import Agent
from hippo.interfaces.dashboard.render import PageRoute, page
from hippo.interfaces.dashboard.sessions import check_csrf
from hippo.interfaces.dashboard.short_term import COUNTERS
from hippo.types import UNCHANGED

__all__ = ["router"]

router = APIRouter(route_class=PageRoute, include_in_schema=False)
KEY = Path(pattern=BLOCK_KEY.pattern)
DAYS = 90  # the per-day charts show at most the last 90 days


@router.get("/agents/{agent_id}/blocks")
def blocks(request: Request, view: Agent) -> Response:
    return page(request, view.viewer, "blocks.html", agent=view.mem.agent_id, blocks=view.mem.memory_blocks(),
                default_limit=view.mem.settings.block_char_limit, saved=request.query_params.get("saved"))


@router.post("/agents/{agent_id}/blocks")
def new_block(request: Request, view: Agent, key: Annotated[str, Form(max_length=64)] = "",
              value: Annotated[str, Form()] = "", char_limit: Annotated[str, Form(max_length=12)] = "",
              csrf: Annotated[str, Form()] = "") -> Response:
    """Write the block the form names (the new-block form: its address needs no script to build)."""
    return set_block(request, view, key, value, char_limit, csrf)


@router.post("/agents/{agent_id}/blocks/{key}")
def set_block(request: Request, view: Agent, key: Annotated[str, KEY], value: Annotated[str, Form()] = "",
              char_limit: Annotated[str, Form(max_length=12)] = "", csrf: Annotated[str, Form()] = "") -> Response:
    """Write a block's whole text; an empty limit keeps the block's own."""
    check_csrf(request, view.viewer, csrf)
    limit: int | None = UNCHANGED
    if char_limit.strip():
        if not char_limit.strip().isdigit():
            raise InvalidInput("the character limit is a whole number")
        limit = int(char_limit)
    view.mem.set_memory_block(key, value.replace("\r\n", "\n"), char_limit=limit)
    return RedirectResponse(f"/agents/{view.mem.agent_id}/blocks?saved={key}", status_code=303)


@router.get("/agents/{agent_id}/stats")
def stats(request: Request, view: Agent) -> Response:
    """Counts, strength, types and the last 90 days, counted whole by the store (``memory_summary``)."""
    found, summary = view.mem.stats(), view.mem.memory_summary(days=DAYS)
    kinds = {"facts": found.facts, "superseded facts": found.superseded_facts,
             "memories": found.memories - found.experiences, "experiences": found.experiences,
             "archived": found.archived, "short-term": found.short_term}
    counters = {name: found.consolidation[name] for name in COUNTERS}
    days, daily = summary.days, summary.daily
    charts: dict[str, Any] = {
        "kinds": {"labels": list(kinds), "values": list(kinds.values())},
        "types": {"labels": list(summary.types), "values": list(summary.types.values())},
        "strength": {"labels": [f"{i / BINS:.1f}–{(i + 1) / BINS:.1f}" for i in range(BINS)],
                     "values": summary.strength},
        "created": {"labels": days, "values": daily["stored"]},
        "retrievals": {"labels": days, "series": {"memories retrieved": daily["retrievals"],
                                                  "recalls": daily["recalls"]}},
        "pruning": {"labels": days, "series": {"consolidated": daily["consolidated"], "merged": daily["merged"],
                                               "pruned (short-term)": daily["pruned"],
                                               "archived": daily["archived"]}},
        "accessed": {"labels": days, "values": daily["last_accessed"]},
        "consolidation": {"labels": list(counters), "values": list(counters.values())},
    }
    admin = view.viewer.key is None or view.viewer.key.admin
    cap = view.mem.settings.max_db_bytes
    if admin:
        charts["size"] = {"labels": ["used", "cap"] if cap else ["used"],
                          "values": [found.database_bytes, cap] if cap else [found.database_bytes]}
    return page(request, view.viewer, "stats.html", agent=view.mem.agent_id, stats=found, charts=charts, days=DAYS,
                database_bytes=found.database_bytes if admin else None, cap=cap if admin else None)
