"""A :class:`ChunkFilter` as a SQL test on ``chunks c``: the parts both stores write alike (kinds,
sources, session, time, superseded chunks), around the parts each writes its own way (a tag, a
metadata condition, an experience: SQLite's JSON functions and its filters' own indexes,
PostgreSQL's ``jsonb`` operators and its GIN index).

The test comes back in the backend's own parameter style (psycopg's ``%s`` for PostgreSQL): the
backend's parts are written in it (PostgreSQL's ``jsonb ? key`` would not survive
:meth:`~hippo.stores.sql.dialect.Dialect.sql`), so the shared parts are converted one by one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from hippo.core.ports import ChunkFilter, ExperienceFilter, MetaCondition
from hippo.stores.sql.dialect import Dialect

__all__ = ["COMPARE", "JsonTests", "Part", "as_of_sql", "experience_tests", "filter_sql", "metadata_sql"]

COMPARE = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}

Part = tuple[str, list[Any]]  # a test and its parameters


@dataclass(frozen=True)
class JsonTests:
    """How a backend tests ``c.metadata``, a JSON object, in its own parameter style. Keys are
    validated (no quotes, no backslashes); JSON types stay apart (``true`` is not ``1``)."""

    tagged: Callable[[str], Part]  # its ``tags`` list holds the tag
    equal: Callable[[str, list[Any]], Part]  # (key, values): the field equals one of the values
    differs: Callable[[str, Any], Part]  # (key, value): it does not, also where the field is missing
    present: Callable[[str], Part]  # the field is there (JSON null included)
    number: Callable[[str, str, Any], Part]  # (key, comparison, value): a number field compares so
    text: Callable[[str, str, Any], Part]  # a text field compares so (byte order)


def metadata_sql(tests: JsonTests, condition: MetaCondition) -> Part:
    """One metadata condition as a test, through the backend's ``tests``."""
    key, op, value = condition.key, condition.op, condition.value
    if op == "eq":
        return tests.equal(key, [value])
    if op == "ne":
        return tests.differs(key, value)
    if op == "in":
        return tests.equal(key, list(value)) if value else ("false", [])
    if op == "exists":
        clause, params = tests.present(key)
        return (clause if value else f"NOT ({clause})"), params
    ranged = tests.number if isinstance(value, (int, float)) else tests.text
    return ranged(key, COMPARE[op], value)


def filter_sql(d: Dialect, where: ChunkFilter, *, json: JsonTests,
               experience: Callable[[ChunkFilter], Part]) -> Part:
    """A test (never empty) that ``c`` passes ``where``, and its parameters; ``json`` and
    ``experience`` write the tags, the metadata and the experience in the backend's style."""
    parts: list[Part] = []
    if where.as_of is not None:
        parts += as_of_sql(d, where)
    elif not where.include_superseded:
        parts.append((d.sql("c.superseded_by IS NULL"), []))
    for column, values in (("c.kind", where.kinds), ("c.source", where.sources)):
        if values:
            among, params = d.among(column, values)
            parts.append((d.sql(among), params))
    if where.session_id is not None:
        parts.append((d.sql("c.session_id = ?"), [where.session_id]))
    parts += [json.tagged(name) for name in where.tags]
    parts += [(f"({clause})", params) for clause, params in (metadata_sql(json, m) for m in where.metadata)]
    if where.experience is not None:
        parts.append(experience(where))
    if where.since is not None:
        parts.append((d.sql("COALESCE(c.observed_at, c.created_at) >= ?"), [d.time(where.since)]))
    if where.until is not None:
        parts.append((d.sql("COALESCE(c.observed_at, c.created_at) < ?"), [d.time(where.until)]))
    return " AND ".join(clause for clause, _ in parts) or "true", [p for _, params in parts for p in params]


def as_of_sql(d: Dialect, where: ChunkFilter) -> list[Part]:
    """The tests of ``where.as_of``: stored by then, and (unless every version is asked for) current
    then: not superseded, or superseded by a successor stored after that time. The successor is read
    by its primary key, so the test costs one lookup per superseded row, none per live one."""
    when = d.time(where.as_of)
    parts: list[Part] = [(d.sql("c.created_at <= ?"), [when])]
    if not where.include_superseded:
        parts.append((d.sql(f"(c.superseded_by IS NULL OR EXISTS (SELECT 1 FROM {d.rows} n "
                            "WHERE n.id = c.superseded_by AND n.created_at > ?))"), [when]))
    return parts


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
