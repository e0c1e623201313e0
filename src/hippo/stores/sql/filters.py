"""A :class:`ChunkFilter` as a SQL test on ``chunks c``: the parts both stores write alike (kinds,
sources, session, time, superseded chunks), around the parts each writes its own way (a tag, a
metadata condition, an experience: SQLite's JSON functions and its filters' own indexes,
PostgreSQL's ``jsonb`` operators and its GIN index).

The test comes back in the backend's own parameter style (psycopg's ``%s`` for PostgreSQL): the
backend's parts are written in it (PostgreSQL's ``jsonb ? key`` would not survive
:meth:`~hippo.stores.sql.dialect.Dialect.sql`), so the shared parts are converted one by one.
"""

from __future__ import annotations

from typing import Any, Callable

from hippo.stores.base import ChunkFilter, ExperienceFilter, MetaCondition
from hippo.stores.sql.dialect import Dialect

__all__ = ["COMPARE", "Part", "experience_tests", "filter_sql"]

COMPARE = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}

Part = tuple[str, list[Any]]  # a test and its parameters


def filter_sql(d: Dialect, where: ChunkFilter, *, tag: Callable[[str], Part],
               metadata: Callable[[MetaCondition], Part], experience: Callable[[ChunkFilter], Part]) -> Part:
    """A test (never empty) that ``c`` passes ``where``, and its parameters; ``tag``, ``metadata``
    and ``experience`` write those parts in the backend's style."""
    parts: list[Part] = []
    if not where.include_superseded:
        parts.append((d.sql("c.superseded_by IS NULL"), []))
    for column, values in (("c.kind", where.kinds), ("c.source", where.sources)):
        if values:
            among, params = d.among(column, values)
            parts.append((d.sql(among), params))
    if where.session_id is not None:
        parts.append((d.sql("c.session_id = ?"), [where.session_id]))
    parts += [tag(name) for name in where.tags]
    parts += [(f"({clause})", params) for clause, params in map(metadata, where.metadata)]
    if where.experience is not None:
        parts.append(experience(where))
    if where.since is not None:
        parts.append((d.sql("COALESCE(c.observed_at, c.created_at) >= ?"), [d.time(where.since)]))
    if where.until is not None:
        parts.append((d.sql("COALESCE(c.observed_at, c.created_at) < ?"), [d.time(where.until)]))
    return " AND ".join(clause for clause, _ in parts) or "true", [p for _, params in parts for p in params]


def experience_tests(d: Dialect, wanted: ExperienceFilter, alias: str) -> tuple[list[str], list[Any]]:
    """The type and importance tests of an experience filter on ``experiences`` as ``alias``, written
    as shared statements are (``?``: :meth:`Dialect.sql` converts them)."""
    tests: list[str] = []
    params: list[Any] = []
    if wanted.types:
        among, values = d.among(f"{alias}.type", wanted.types)
        tests.append(among)
        params.extend(values)
    if wanted.min_importance is not None:
        tests.append(f"{alias}.importance >= ?")
        params.append(wanted.min_importance)
    return tests, params
