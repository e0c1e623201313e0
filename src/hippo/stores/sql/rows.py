"""What both stores do with their rows: the columns of a chunk, an experience, a short-term entry
and an observed message, in one order, and the values read back from them.

A short-term entry is stored as (id, agent, type, content, importance, context, tags, source,
session, observed, created); a long-term record as (id, agent, type, importance, context, user,
room, task, observed, consolidated). Times travel as ISO text (SQLite) or ``timestamptz``
(PostgreSQL); both come back through :func:`when`.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Sequence

from hippo.clock import from_iso, to_iso, to_utc
from hippo.core.ports import ExperienceRecord, Observed, Standing
from hippo.stores.sql.dialect import Dialect
from hippo.types import Chunk, Experience

__all__ = ["OBSERVED_COLUMNS", "RECORD_COLUMNS", "SHORT_TERM_COLUMNS", "chunk_columns", "chunk_of", "entry_of",
           "entry_values", "observed_of", "record_of", "record_values", "standing_of", "time_of", "when"]

SHORT_TERM_COLUMNS = ("id, agent_id, type, content, importance, context, tags, source, session_id, observed_at, "
                      "created_at")
OBSERVED_COLUMNS = "seq, message_id, role, name, content, observed_at"
RECORD_COLUMNS = ("id, agent_id, type, importance, context, user_ref, room_ref, task_ref, observed_at, "
                  "consolidated_at")


def chunk_columns(d: Dialect, counters: str | None = None, *, vector: str = "c.embedding IS NOT NULL") -> str:
    """A chunk's columns as :func:`chunk_of` reads them, from ``c`` and its counters (``counters``:
    the alias they are read from, the dialect's by default); ``vector``: whether it has one."""
    s = counters or d.counters
    return (f"c.id, c.agent_id, c.content, c.content_hash, c.metadata, c.kind, {s}.running_intensity, "
            f"{s}.encounter_count, {s}.access_count, {s}.last_accessed_at, c.superseded_by, c.created_at, "
            f"c.observed_at, {vector}, c.feedback, c.reinforced_at, c.source, c.session_id")


def chunk_of(d: Dialect, row: tuple[Any, ...]) -> Chunk:
    """A chunk read with :func:`chunk_columns`."""
    return Chunk(id=row[0], agent_id=row[1], content=row[2], content_hash=row[3], metadata=d.read_json(row[4]) or {},
                 kind=row[5], running_intensity=row[6], encounter_count=row[7], access_count=row[8],
                 last_accessed_at=time_of(d, row[9]), superseded_by=row[10],
                 created_at=time_of(d, row[11]), observed_at=d.read_time(row[12]),
                 has_vector=bool(row[13]), feedback=row[14], reinforced_at=d.read_time(row[15]), source=row[16],
                 session_id=row[17])


def standing_of(row: Sequence[Any]) -> Standing:
    """A candidate's standing as both stores' searches read it: id, intensity, accesses, last access
    and creation (seconds since the epoch), what superseded it, whether it has a vector, feedback."""
    return Standing(row[0], row[1], row[2], row[3], row[4], row[5], bool(row[6]), row[7])


def time_of(d: Dialect, value: Any) -> datetime:
    """A time read from a column that is never NULL."""
    found = d.read_time(value)
    assert found is not None, "a NOT NULL time column read as NULL"
    return found


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
