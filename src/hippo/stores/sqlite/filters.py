"""A :class:`ChunkFilter` as a SQLite test on ``chunks c``: its tags and metadata through SQLite's
JSON functions, its experiences through their records (the rest: ``stores/sql/filters.py``)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from hippo.stores.base import ChunkFilter, ExperienceFilter, MetaCondition
from hippo.stores.sql import filters
from hippo.stores.sql.dialect import SQLITE
from hippo.stores.sql.filters import COMPARE, experience_tests

__all__ = ["experience_rowids_sql", "filter_sql"]


def filter_sql(where: ChunkFilter) -> tuple[str, list[Any]]:
    """A condition (never empty) and its bound parameters."""
    return filters.filter_sql(SQLITE, where, tag=_tag, metadata=_metadata_sql,
                              experience=lambda chosen: _experience_sql(chosen.experience or ExperienceFilter()))


def _tag(tag: str) -> tuple[str, list[Any]]:
    return "EXISTS (SELECT 1 FROM json_each(c.metadata, '$.tags') WHERE value = ?)", [tag]


def _experience_sql(wanted: ExperienceFilter) -> tuple[str, list[Any]]:
    """Experiences only: one primary-key lookup per row tested (an ``IN (SELECT ...)`` list would be
    built again at every use, and recall uses a filter many times)."""
    tests, params = experience_tests(SQLITE, wanted, "x")
    return f"EXISTS (SELECT 1 FROM experiences x WHERE {' AND '.join(['x.id = c.id', *tests])})", params


def experience_rowids_sql(where: ChunkFilter, agent_id: str) -> tuple[str, list[Any]]:
    """The rowids of the agent's chunks that pass ``where`` (its ``experience`` part set), listed
    from the experiences' own index (type, else importance) and joined to their chunks by the
    rowid each record keeps: a pass over the experiences asked for, not over every chunk."""
    wanted = where.experience or ExperienceFilter()
    tests, params = experience_tests(SQLITE, wanted, "x")
    index = "idx_experiences_type_chunk" if wanted.types else "idx_experiences_importance_chunk"
    rest, rest_params = filter_sql(replace(where, experience=None))
    return (f"SELECT c.rowid FROM experiences x INDEXED BY {index} CROSS JOIN chunks c ON c.rowid = x.chunk "
            f"WHERE {' AND '.join(['x.agent_id = ?', *tests])} AND c.agent_id = ? AND {rest}",
            [agent_id, *params, agent_id, *rest_params])


def _equals(path: str, value: Any) -> tuple[str, list[Any]]:
    """The field holds exactly ``value`` (JSON types kept apart: true is not 1)."""
    if value is None:
        return "json_type(c.metadata, ?) = 'null'", [path]
    if isinstance(value, bool):
        return "json_type(c.metadata, ?) = ?", [path, "true" if value else "false"]
    if isinstance(value, (int, float)):
        # JSON true/false come back from json_extract as 1/0: compare numbers only.
        return ("json_type(c.metadata, ?) IN ('integer', 'real') AND json_extract(c.metadata, ?) = ?",
                [path, path, value])
    return "json_type(c.metadata, ?) = 'text' AND json_extract(c.metadata, ?) = ?", [path, path, value]


def _metadata_sql(condition: MetaCondition) -> tuple[str, list[Any]]:
    path = '$."' + condition.key + '"'  # keys are validated: no quotes or backslashes
    op, value = condition.op, condition.value
    if op == "eq":
        return _equals(path, value)
    if op == "ne":  # also true where the field is missing
        clause, params = _equals(path, value)
        return f"NOT COALESCE(({clause}), 0)", params
    if op == "in":
        parts = [_equals(path, item) for item in value]
        return " OR ".join(f"({c})" for c, _ in parts), [p for _, ps in parts for p in ps]
    if op == "exists":
        return f"json_type(c.metadata, ?) IS {'NOT ' if value else ''}NULL", [path]
    kinds = "IN ('integer', 'real')" if isinstance(value, (int, float)) else "= 'text'"
    return (f"json_type(c.metadata, ?) {kinds} AND json_extract(c.metadata, ?) {COMPARE[op]} ?",
            [path, path, value])
