"""The dashboard's memory blocks (view and edit, with their character limits) and statistics
(counts and a strength histogram, drawn by the vendored Chart.js)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Path, Request, Response
from fastapi.responses import RedirectResponse

from hippo.core.validation import BLOCK_KEY
from hippo.errors import InvalidInput
from hippo.surfaces.dashboard.pages import Agent, strength_of
from hippo.surfaces.dashboard.render import PageRoute, page
from hippo.surfaces.dashboard.sessions import check_csrf
from hippo.types import UNCHANGED

__all__ = ["router", "histogram"]

router = APIRouter(route_class=PageRoute, include_in_schema=False)
KEY = Path(pattern=BLOCK_KEY.pattern)
SAMPLE = 2_000  # the newest memories the strength histogram is drawn from (two pages of the listing)
BINS = 10


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


@router.get("/agents/{agent_id}/stats")
def stats(request: Request, view: Agent) -> Response:
    found = view.mem.stats()
    strengths: list[float] = []
    cursor = None
    while len(strengths) < SAMPLE:
        listed = view.mem.list_memories(limit=1_000, cursor=cursor)
        strengths += [strength_of(view.mem, c) for c in listed.items if c.superseded_by is None]
        cursor = listed.next_cursor
        if cursor is None:
            break
    kinds = {"facts": found.facts, "superseded facts": found.superseded_facts,
             "memories": found.memories - found.experiences, "experiences": found.experiences,
             "archived": found.archived, "short-term": found.short_term}
    charts = {
        "kinds": {"labels": list(kinds), "values": list(kinds.values())},
        "strength": {"labels": [f"{i / BINS:.1f}–{(i + 1) / BINS:.1f}" for i in range(BINS)],
                     "values": histogram(strengths)},
    }
    shown_bytes = found.database_bytes if view.viewer.key is None or view.viewer.key.admin else None
    return page(request, view.viewer, "stats.html", agent=view.mem.agent_id, stats=found, charts=charts,
                sampled=len(strengths), sample=SAMPLE, database_bytes=shown_bytes)
