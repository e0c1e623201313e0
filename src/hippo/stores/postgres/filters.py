"""A :class:`ChunkFilter` as a PostgreSQL test on ``chunks c`` (psycopg ``%s`` style): its tags and
metadata through ``jsonb`` containment (the GIN index answers it), its experiences through their
records (the rest: ``stores/sql/filters.py``).

The same meaning as the SQLite translation (``stores/sqlite/filters.py``): JSON types are kept
apart (``true`` is not ``1``: jsonb equality does that), ``ne`` also holds where the field is
missing, ranges compare numbers with numbers and text with text (byte order, as SQLite).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from hippo.core.ports import ChunkFilter
from hippo.stores.sql import filters
from hippo.stores.sql.dialect import POSTGRES
from hippo.stores.sql.filters import JsonTests, experience_tests

__all__ = ["filter_sql", "words_filter_sql"]

def filter_sql(where: ChunkFilter, *, driven_for: str | None = None) -> tuple[str, list[Any]]:
    """A condition (never empty) and its parameters. ``driven_for`` (an agent id): for a statement
    that reads every row that passes (the exact vector scan), that agent's experiences are asked as
    the list of their ids (see ``_experience_sql``)."""
    return filters.filter_sql(POSTGRES, where, json=_JSON,
                              experience=lambda chosen: _experience_sql(chosen, driven_for))


def words_filter_sql(where: ChunkFilter) -> tuple[str, list[Any]] | None:
    """The condition on ``chunk_words c`` (the live chunks' words, kind beside them) when ``where``
    asks for live chunks of some kinds and nothing else; None when it asks what only ``chunk_rows``
    holds (superseded chunks, tags, metadata, time, provenance, session, experiences)."""
    if where.include_superseded or replace(where, kinds=()) != ChunkFilter():
        return None
    return ("c.kind = ANY(%s)", [list(where.kinds)]) if where.kinds else ("true", [])


def _experience_sql(where: ChunkFilter, driven_for: str | None) -> tuple[str, list[Any]]:
    """Experiences only, by the row's own record. As a semi-join the planner may run as a lookup per
    row (a recall's neighbours, the rows an index walk found) or a hash of the agent's records: for
    a scan of every row that passes it took the hash, against a scan of the agent's whole table
    (~300 ms at 100k). ``driven_for``: the agent's ids listed first from the records' own indexes (type,
    importance), then the chunks read by id. (``c.id IN (SELECT ...)`` in every statement hashed
    every agent's records at each use: ~25 ms at 100k, twice per statement that tests two sides.)"""
    assert where.experience is not None
    tests, params = ["x.id = c.id", "x.agent_id = c.agent_id"], []  # type: list[str], list[Any]
    driven_for = driven_for if _records_narrow_most(where) else None
    if driven_for is not None:
        tests, params = ["x.agent_id = %s"], [driven_for]
    wanted, wanted_params = experience_tests(POSTGRES, where.experience, "x")
    tests, params = [*tests, *map(POSTGRES.sql, wanted)], [*params, *wanted_params]
    if driven_for is not None:
        return f"c.id = ANY(ARRAY(SELECT x.id FROM experiences x WHERE {' AND '.join(tests)}))", params
    return f"EXISTS (SELECT 1 FROM experiences x WHERE {' AND '.join(tests)})", params


def _records_narrow_most(where: ChunkFilter) -> bool:
    """Whether the experience records' own indexes (type, importance) are what narrows the rows:
    asked for a type or an importance, and nothing the chunks' indexes answer (tags, time, session,
    provenance, metadata), which then go first, each record looked up for the rows they let through.
    (Experiences alone, the ids of every record would be listed: 100k lookups, 350 ms at 100k.)"""
    wanted = where.experience
    return wanted is not None and bool(wanted.types or wanted.min_importance is not None) and not (
        where.tags or where.since or where.until or where.session_id or where.sources or where.metadata)


def _equal(key: str, values: list[Any]) -> tuple[str, list[Any]]:
    """The field equals one of ``values``, asked as containment (``chunks_metadata``, a GIN index,
    answers it: ``metadata -> key = value`` reads every row's JSON); a list or an object contains
    more than it equals, so those are compared exactly as well."""
    tests = " OR ".join(["c.metadata @> %s::jsonb"] * len(values))
    params: list[Any] = [json.dumps({key: item}) for item in values]
    if any(isinstance(item, (list, dict)) for item in values):
        return f"({tests}) AND c.metadata -> %s = ANY(%s::jsonb[])", [*params, key, [json.dumps(v) for v in values]]
    return f"({tests})", params


_JSON = JsonTests(
    tagged=lambda tag: ("c.metadata -> 'tags' @> %s::jsonb", [json.dumps([tag])]),
    equal=_equal,
    differs=lambda key, value: ("NOT COALESCE(c.metadata -> %s = %s::jsonb, false)", [key, json.dumps(value)]),
    present=lambda key: ("(c.metadata ? %s)", [key]),
    number=lambda key, sign, value: (
        f"jsonb_typeof(c.metadata -> %s) = 'number' AND (c.metadata ->> %s)::double precision {sign} %s",
        [key, key, value]),
    text=lambda key, sign, value: (
        f"jsonb_typeof(c.metadata -> %s) = 'string' AND (c.metadata ->> %s) COLLATE \"C\" {sign} %s",
        [key, key, value]))
