"""Translate a :class:`ChunkFilter` into a PostgreSQL condition on ``chunks c`` (psycopg ``%s`` style).

The same meaning as the SQLite translation (``stores/sqlite/filters.py``): JSON types are kept
apart (``true`` is not ``1``: jsonb equality does that), ``ne`` also holds where the field is
missing, ranges compare numbers with numbers and text with text (byte order, as SQLite).
"""

from __future__ import annotations

import json
from typing import Any

from hippo.stores.base import ChunkFilter, MetaCondition

__all__ = ["filter_sql"]

_COMPARE = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}


def filter_sql(where: ChunkFilter) -> tuple[str, list[Any]]:
    """A condition (never empty) and its parameters."""
    clauses: list[str] = []
    params: list[Any] = []
    if not where.include_superseded:
        clauses.append("c.superseded_by IS NULL")
    if where.kinds:
        clauses.append("c.kind = ANY(%s)")
        params.append(list(where.kinds))
    if where.sources:
        clauses.append("c.source = ANY(%s)")
        params.append(list(where.sources))
    if where.session_id is not None:
        clauses.append("c.session_id = %s")
        params.append(where.session_id)
    for tag in where.tags:
        clauses.append("c.metadata -> 'tags' @> %s::jsonb")
        params.append(json.dumps([tag]))
    for condition in where.metadata:
        clause, values = _metadata_sql(condition)
        clauses.append(f"({clause})")
        params.extend(values)
    if where.experience is not None:
        # Experiences only, by the row's own record: a semi-join the planner may run as a lookup
        # per row (a recall's neighbours, the rows an index scan found) or a hash of the agent's
        # records (an exact scan). ``c.id IN (SELECT id FROM experiences ...)`` hashed every
        # agent's records at each use: ~25 ms at 100k, twice per statement that tests two sides.
        tests = ["x.id = c.id", "x.agent_id = c.agent_id"]
        if where.experience.types:
            tests.append("x.type = ANY(%s)")
            params.append(list(where.experience.types))
        if where.experience.min_importance is not None:
            tests.append("x.importance >= %s")
            params.append(where.experience.min_importance)
        clauses.append(f"EXISTS (SELECT 1 FROM experiences x WHERE {' AND '.join(tests)})")
    if where.since is not None:
        clauses.append("COALESCE(c.observed_at, c.created_at) >= %s")
        params.append(where.since)
    if where.until is not None:
        clauses.append("COALESCE(c.observed_at, c.created_at) < %s")
        params.append(where.until)
    return (" AND ".join(clauses) or "true"), params


def _metadata_sql(condition: MetaCondition) -> tuple[str, list[Any]]:
    key, op, value = condition.key, condition.op, condition.value
    if op == "eq":
        return "c.metadata -> %s = %s::jsonb", [key, json.dumps(value)]
    if op == "ne":
        return "NOT COALESCE(c.metadata -> %s = %s::jsonb, false)", [key, json.dumps(value)]
    if op == "in":
        return "c.metadata -> %s = ANY(%s::jsonb[])", [key, [json.dumps(item) for item in value]]
    if op == "exists":
        return ("" if value else "NOT ") + "(c.metadata ? %s)", [key]
    if isinstance(value, (int, float)):
        return (f"jsonb_typeof(c.metadata -> %s) = 'number' AND (c.metadata ->> %s)::double precision "
                f"{_COMPARE[op]} %s", [key, key, value])
    return (f"jsonb_typeof(c.metadata -> %s) = 'string' AND (c.metadata ->> %s) COLLATE \"C\" {_COMPARE[op]} %s",
            [key, key, value])
