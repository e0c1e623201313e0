"""Translate a :class:`ChunkFilter` into a SQL condition on ``chunks c``."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from hippo.clock import to_iso
from hippo.stores.base import ChunkFilter, ExperienceFilter, MetaCondition

__all__ = ["experience_rowids_sql", "experience_tests", "filter_sql"]


def filter_sql(where: ChunkFilter) -> tuple[str, list[Any]]:
    """A condition (never empty) and its bound parameters."""
    clauses: list[str] = []
    params: list[Any] = []
    if not where.include_superseded:
        clauses.append("c.superseded_by IS NULL")
    if where.kinds:
        clauses.append(f"c.kind IN ({','.join('?' * len(where.kinds))})")
        params.extend(where.kinds)
    if where.sources:
        clauses.append(f"c.source IN ({','.join('?' * len(where.sources))})")
        params.extend(where.sources)
    if where.session_id is not None:
        clauses.append("c.session_id = ?")
        params.append(where.session_id)
    for tag in where.tags:
        clauses.append("EXISTS (SELECT 1 FROM json_each(c.metadata, '$.tags') WHERE value = ?)")
        params.append(tag)
    for condition in where.metadata:
        clause, values = _metadata_sql(condition)
        clauses.append(f"({clause})")
        params.extend(values)
    if where.experience is not None:
        clause, values = _experience_sql(where.experience)
        clauses.append(clause)
        params.extend(values)
    if where.since is not None:
        clauses.append("COALESCE(c.observed_at, c.created_at) >= ?")
        params.append(to_iso(where.since))
    if where.until is not None:
        clauses.append("COALESCE(c.observed_at, c.created_at) < ?")
        params.append(to_iso(where.until))
    return (" AND ".join(clauses) or "1"), params


def experience_tests(wanted: ExperienceFilter, alias: str) -> tuple[list[str], list[Any]]:
    """The type and importance tests of an experience filter on ``experiences`` as ``alias``."""
    tests: list[str] = []
    params: list[Any] = []
    if wanted.types:
        tests.append(f"{alias}.type IN ({','.join('?' * len(wanted.types))})")
        params.extend(wanted.types)
    if wanted.min_importance is not None:
        tests.append(f"{alias}.importance >= ?")
        params.append(wanted.min_importance)
    return tests, params


def _experience_sql(wanted: ExperienceFilter) -> tuple[str, list[Any]]:
    """Experiences only: one primary-key lookup per row tested (an ``IN (SELECT ...)`` list would be
    built again at every use, and recall uses a filter many times)."""
    tests, params = experience_tests(wanted, "x")
    return f"EXISTS (SELECT 1 FROM experiences x WHERE {' AND '.join(['x.id = c.id', *tests])})", params


def experience_rowids_sql(where: ChunkFilter, agent_id: str) -> tuple[str, list[Any]]:
    """The rowids of the agent's chunks that pass ``where`` (its ``experience`` part set), listed
    from the experiences' own index (type, else importance) and joined to their chunks by the
    rowid each record keeps: a pass over the experiences asked for, not over every chunk."""
    wanted = where.experience or ExperienceFilter()
    tests, params = experience_tests(wanted, "x")
    index = "idx_experiences_type_chunk" if wanted.types else "idx_experiences_importance_chunk"
    rest, rest_params = filter_sql(replace(where, experience=None))
    return (f"SELECT c.rowid FROM experiences x INDEXED BY {index} CROSS JOIN chunks c ON c.rowid = x.chunk "
            f"WHERE {' AND '.join(['x.agent_id = ?', *tests])} AND c.agent_id = ? AND {rest}",
            [agent_id, *params, agent_id, *rest_params])


_COMPARE = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}


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
    return (f"json_type(c.metadata, ?) {kinds} AND json_extract(c.metadata, ?) {_COMPARE[op]} ?",
            [path, path, value])
