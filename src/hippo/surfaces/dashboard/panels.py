"""The dashboard's memory blocks (view and edit, with their character limits) and statistics
(counts, a strength histogram, memories and last accesses per day, consolidation counts and the
database's size against its cap, drawn by the vendored Chart.js)."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta, timezone
from typing import Annotated, Any

from fastapi import APIRouter, Form, Path, Request, Response
from fastapi.responses import RedirectResponse

from hippo.core.validation import BLOCK_KEY
from hippo.errors import InvalidInput
from hippo.surfaces.dashboard.pages import Agent, AgentView, strength_of
from hippo.surfaces.dashboard.render import PageRoute, page
from hippo.surfaces.dashboard.sessions import check_csrf
from hippo.surfaces.dashboard.short_term import COUNTERS
from hippo.types import UNCHANGED, Chunk

__all__ = ["router", "histogram", "per_day"]

router = APIRouter(route_class=PageRoute, include_in_schema=False)
KEY = Path(pattern=BLOCK_KEY.pattern)
SAMPLE = 2_000  # the newest memories the strength histogram is drawn from (two pages of the listing)
BINS = 10
MAX_DAYS = 90  # the per-day charts show at most the last 90 days of the sample


@router.get("/agents/{agent_id}/blocks")
def blocks(request: Request, view: Agent) -> Response:
    return page(request, view.viewer, "blocks.html", agent=view.mem.agent_id, blocks=view.mem.memory_blocks(),
                default_limit=view.mem.settings.block_char_limit, saved=request.query_params.get("saved"))


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


def histogram(values: list[float], bins: int = BINS) -> list[int]:
    """How many values fall in each of ``bins`` equal steps of [0, 1] (1.0 in the last)."""
    counts = [0] * bins
    for value in values:
        counts[min(bins - 1, max(0, int(value * bins)))] += 1
    return counts


def per_day(times: list[datetime]) -> dict[str, list[Any]]:
    """How many of ``times`` fell on each day (UTC), oldest first, days with none included."""
    counts = Counter(t.astimezone(timezone.utc).date() for t in times)
    if not counts:
        return {"labels": [], "values": []}
    first, last = min(counts), max(counts)
    days = [first + timedelta(days=i) for i in range((last - first).days + 1)][-MAX_DAYS:]
    return {"labels": [d.isoformat() for d in days], "values": [counts.get(d, 0) for d in days]}


def _sample(view: AgentView) -> list[Chunk]:
    """The newest chunks, superseded ones included, up to SAMPLE (two pages of the listing)."""
    chunks: list[Chunk] = []
    cursor = None
    while len(chunks) < SAMPLE:
        listed = view.mem.list_memories(limit=1_000, cursor=cursor)
        chunks += listed.items
        cursor = listed.next_cursor
        if cursor is None:
            break
    return chunks


@router.get("/agents/{agent_id}/stats")
def stats(request: Request, view: Agent) -> Response:
    found = view.mem.stats()
    chunks = _sample(view)
    kinds = {"facts": found.facts, "superseded facts": found.superseded_facts,
             "memories": found.memories - found.experiences, "experiences": found.experiences,
             "archived": found.archived, "short-term": found.short_term}
    counters = {name: int(found.consolidation.get(name, 0)) for name in COUNTERS}
    charts = {
        "kinds": {"labels": list(kinds), "values": list(kinds.values())},
        "strength": {"labels": [f"{i / BINS:.1f}–{(i + 1) / BINS:.1f}" for i in range(BINS)],
                     "values": histogram([strength_of(view.mem, c) for c in chunks if c.superseded_by is None])},
        "created": per_day([c.created_at for c in chunks]),
        "accessed": per_day([c.last_accessed_at for c in chunks if c.access_count > 0]),
        "consolidation": {"labels": list(counters), "values": list(counters.values())},
    }
    admin = view.viewer.key is None or view.viewer.key.admin
    cap = view.mem.settings.max_db_bytes
    if admin:
        charts["size"] = {"labels": ["used", "cap"] if cap else ["used"],
                          "values": [found.database_bytes, cap] if cap else [found.database_bytes]}
    return page(request, view.viewer, "stats.html", agent=view.mem.agent_id, stats=found, charts=charts,
                sampled=len(chunks), sample=SAMPLE, database_bytes=found.database_bytes if admin else None,
                cap=cap if admin else None)
