"""What both stores do with the rows of seed 001's experiences and seed 002's inbox: the columns
they read and write, in one order.

A short-term entry is stored as (id, agent, type, content, importance, context, tags, source,
session, observed, created); a long-term record as (id, agent, type, importance, context, user,
room, task, observed, consolidated). Times travel as ISO text (SQLite) or ``timestamptz``
(PostgreSQL); both come back through :func:`when`.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from hippo.clock import from_iso, to_iso, to_utc
from hippo.stores.base import ExperienceRecord, Observed
from hippo.types import Experience

__all__ = ["OBSERVED_COLUMNS", "RECORD_COLUMNS", "SHORT_TERM_COLUMNS", "entry_of", "entry_values", "observed_of",
           "record_of", "record_values", "when"]

SHORT_TERM_COLUMNS = ("id, agent_id, type, content, importance, context, tags, source, session_id, observed_at, "
                      "created_at")
OBSERVED_COLUMNS = "seq, message_id, role, name, content, observed_at"
RECORD_COLUMNS = ("id, agent_id, type, importance, context, user_ref, room_ref, task_ref, observed_at, "
                  "consolidated_at")


def when(value: Any) -> datetime:
    return from_iso(value) if isinstance(value, str) else to_utc(value)


def _time(value: datetime, iso: bool) -> Any:
    """ISO text of fixed width (string order is time order in SQL), or the UTC datetime."""
    return to_iso(value) if iso else to_utc(value)


def entry_values(agent_id: str, entry: Experience, *, iso: bool) -> tuple[Any, ...]:
    return (entry.id, agent_id, entry.type, entry.content, entry.importance,
            json.dumps(entry.context, ensure_ascii=False), json.dumps(entry.tags, ensure_ascii=False),
            entry.source, entry.session_id, _time(entry.observed_at, iso), _time(entry.created_at, iso))


def entry_of(row: tuple[Any, ...]) -> Experience:
    """A short-term entry read back from the database (which makes it durable)."""
    return Experience(id=row[0], agent_id=row[1], type=row[2], content=row[3], importance=float(row[4]),
                      context=_json(row[5]), tags=_json(row[6]), source=row[7], session_id=row[8],
                      observed_at=when(row[9]), created_at=when(row[10]), tier="short_term", durable=True)


def record_values(agent_id: str, record: ExperienceRecord, *, iso: bool) -> tuple[Any, ...]:
    return (record.id, agent_id, record.type, record.importance, json.dumps(record.context, ensure_ascii=False),
            record.user_ref, record.room_ref, record.task_ref, _time(record.observed_at, iso),
            _time(record.consolidated_at, iso))


def record_of(row: tuple[Any, ...]) -> ExperienceRecord:
    return ExperienceRecord(id=row[0], type=row[2], importance=float(row[3]), context=_json(row[4]),
                            user_ref=row[5], room_ref=row[6], task_ref=row[7], observed_at=when(row[8]),
                            consolidated_at=when(row[9]))


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def observed_of(row: tuple[Any, ...]) -> Observed:
    return Observed(seq=int(row[0]), message_id=row[1], role=row[2], name=row[3], content=row[4],
                    observed_at=when(row[5]) if row[5] is not None else None)
