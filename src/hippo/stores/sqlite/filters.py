"""A :class:`ChunkFilter` as a SQLite test on ``chunks c``: its tags and metadata through SQLite's
JSON functions, its experiences through their records (the rest: ``stores/sql/filters.py``)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable

from hippo.core.ports import ChunkFilter, ExperienceFilter
from hippo.stores.sql import filters
from hippo.stores.sql.dialect import SQLITE
from hippo.stores.sql.filters import JsonTests, Part, experience_tests

__all__ = ["experience_rowids_sql", "filter_sql"]


def filter_sql(where: ChunkFilter) -> tuple[str, list[Any]]:
    """A condition (never empty) and its bound parameters."""
    return filters.filter_sql(SQLITE, where, json=_JSON,
                              experience=lambda chosen: _experience_sql(chosen.experience or ExperienceFilter()))


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


def _path(key: str) -> str:
    return '$."' + key + '"'  # keys are validated: no quotes or backslashes


def _equals(path: str, value: Any) -> Part:
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


def _any_equals(key: str, values: list[Any]) -> Part:
    parts = [_equals(_path(key), item) for item in values]
    return " OR ".join(f"({c})" for c, _ in parts), [p for _, ps in parts for p in ps]


def _not_equals(key: str, value: Any) -> Part:
    clause, params = _equals(_path(key), value)
    return f"NOT COALESCE(({clause}), 0)", params


def _typed(types: str) -> Callable[[str, str, Any], Part]:
    """A comparison of a field whose JSON type is among ``types``."""
    return lambda key, sign, value: (
        f"json_type(c.metadata, ?) IN ({types}) AND json_extract(c.metadata, ?) {sign} ?",
        [_path(key), _path(key), value])


_JSON = JsonTests(
    tagged=lambda tag: ("EXISTS (SELECT 1 FROM json_each(c.metadata, '$.tags') WHERE value = ?)", [tag]),
    equal=_any_equals, differs=_not_equals,
    present=lambda key: ("json_type(c.metadata, ?) IS NOT NULL", [_path(key)]),
    number=_typed("'integer', 'real'"), text=_typed("'text'"))
