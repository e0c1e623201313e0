"""The dashboard's audit trail page: the agent's records newest first (when, who, through which way
in, the operation, the ids it touched, counts), filtered by operation, time and memory id, a page
at a time by the trail's cursor, and the chain checked on request.

The trail holds no text, and neither does this page: a touched id links to its memory's page when
that memory is still there (live or archived), read with ``get_memory`` and ``get_archived``,
which do not count as a retrieval; the memory's text is never fetched into the page.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request, Response
from pydantic import BaseModel, Field

from hippo.core.memory import Memory
from hippo.core.validation import ULID
from hippo.errors import InvalidInput, NotFound
from hippo.interfaces.dashboard.pages import Agent, AgentView
from hippo.interfaces.dashboard.render import PageRoute, page
from hippo.types import AuditRecord

__all__ = ["IDS_SHOWN", "PAGE_SIZE", "router", "Row", "Touched", "TrailQuery"]

router = APIRouter(route_class=PageRoute, include_in_schema=False)
PAGE_SIZE = 25
IDS_SHOWN = 8  # a delete_all touches every id: a record shows its first few, and how many more
# Suggestions for the operation filter (any operation's name is accepted): the changes people look for.
OPERATIONS = ("store_memory", "store_memories", "remember_facts", "update_memory", "update_metadata",
              "delete_memory", "forget_memory", "delete_all", "reinforce_memory", "demote_memory", "split_fact",
              "restore_memory", "import_records", "set_memory_block", "append_memory_block",
              "replace_memory_block", "record_experience", "consolidate", "process_pending", "compact",
              "maintain", "trim_audit")


class TrailQuery(BaseModel):
    """The page's filters and cursor, as query parameters (empty fields mean no filter).
    ``verify`` checks the agent's chain: on request, since it reads the whole trail (10,000
    records in 0.16 s on SQLite, so 1.6 s at 100,000: too slow for every look at the page)."""

    operation: str = Field("", max_length=100)
    since: str = Field("", max_length=40)
    until: str = Field("", max_length=40)
    id: str = Field("", max_length=40)
    cursor: str = Field("", max_length=20)
    verify: bool = False


@dataclass(frozen=True, slots=True)
class Touched:
    """An id a record touched, its digest, and the page to open it on (None: it is gone)."""

    id: str
    digest: str | None
    href: str | None


@dataclass(frozen=True, slots=True)
class Row:
    """One record as the page shows it: the ids it touched (the first ``IDS_SHOWN``), how many more."""

    record: AuditRecord
    touched: list[Touched]
    more: int


def day_start(text: str, name: str) -> datetime | None:
    """The start (UTC) of a day chosen in a date field; None for an empty field."""
    if not text.strip():
        return None
    try:
        day = date.fromisoformat(text.strip())
    except ValueError:
        raise InvalidInput(f"{name} is a date (YYYY-MM-DD), not {text.strip()[:40]!r}") from None
    return datetime.combine(day, time.min, tzinfo=timezone.utc)


def day_after(text: str, name: str) -> datetime | None:
    """The end of a day chosen as the last one shown: the next day's start (the trail's ``until``
    is exclusive)."""
    start = day_start(text, name)
    if start is None:
        return None
    if start.date() == date.max:
        return None  # the last day there is: no bound
    return start + timedelta(days=1)


def _still_there(mem: Memory, chunk_id: str) -> bool:
    """Whether a memory of this agent holds the id, live or archived (neither is a retrieval)."""
    for look in (mem.get_memory, mem.get_archived):
        try:
            look(chunk_id)
            return True
        except NotFound:
            pass
    return False


def rows_of(mem: Memory, records: list[AuditRecord]) -> list[Row]:
    """The page's records with their touched ids, each linked when what it names is still there."""
    agent, blocks = mem.agent_id, {b.key for b in mem.memory_blocks()}
    known: dict[str, str | None] = {}

    def href(touched: str) -> str | None:
        if touched not in known:
            if touched.startswith("block:"):
                known[touched] = f"/agents/{agent}/blocks#block-{touched[6:]}" if touched[6:] in blocks else None
            elif ULID.fullmatch(touched) and _still_there(mem, touched):
                known[touched] = f"/agents/{agent}/memories/{touched}"
            else:
                known[touched] = None
        return known[touched]

    rows = []
    for record in records:
        shown = list(record.touched.items())[:IDS_SHOWN]
        rows.append(Row(record, [Touched(i, d, href(i)) for i, d in shown], len(record.touched) - len(shown)))
    return rows


@router.get("/agents/{agent_id}/audit")
def trail(request: Request, view: Agent, q: Annotated[TrailQuery, Query()]) -> Response:
    """The agent's audit records, newest first, filtered, a page at a time; the chain on request.
    A filter that does not read shows the page again with the error and no records."""
    try:
        found = view.mem.audit(since=day_start(q.since, "since"), until=day_after(q.until, "until"),
                               operation=q.operation.strip() or None, chunk_id=q.id.strip() or None,
                               limit=PAGE_SIZE, cursor=q.cursor.strip() or None)
    except InvalidInput as exc:
        return _page(request, view, q, 400, rows=[], next_cursor=None, error=exc.message)
    return _page(request, view, q, rows=rows_of(view.mem, found.items), next_cursor=found.next_cursor,
                 report=view.mem.verify_audit() if q.verify else None)


def _page(request: Request, view: AgentView, q: TrailQuery, status: int = 200, **context: Any) -> Response:
    filters = {k: v.strip() for k, v in q.model_dump(include={"operation", "since", "until", "id"}).items()
               if v.strip()}
    return page(request, view.viewer, "audit.html", status, agent=view.mem.agent_id, q=q, filters=filters,
                query=urlencode(filters), operations=OPERATIONS, ids_shown=IDS_SHOWN, **context)
