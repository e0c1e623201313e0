"""Translate a :class:`ChunkFilter` into a SQL condition on ``chunks c``."""

from __future__ import annotations

from typing import Any

from hippo.clock import to_iso
from hippo.stores.base import ChunkFilter

__all__ = ["filter_sql"]


def filter_sql(where: ChunkFilter) -> tuple[str, list[Any]]:
    """A condition (never empty) and its bound parameters."""
    clauses: list[str] = []
    params: list[Any] = []
    if not where.include_superseded:
        clauses.append("c.superseded_by IS NULL")
    if where.kinds:
        clauses.append(f"c.kind IN ({','.join('?' * len(where.kinds))})")
        params.extend(where.kinds)
    for tag in where.tags:
        clauses.append("EXISTS (SELECT 1 FROM json_each(c.metadata, '$.tags') WHERE value = ?)")
        params.append(tag)
    for key, value in where.metadata.items():
        path = '$."' + key + '"'  # keys are validated: no quotes or backslashes
        if value is None:
            clauses.append("json_type(c.metadata, ?) = 'null'")
            params.append(path)
        elif isinstance(value, bool):
            clauses.append("json_type(c.metadata, ?) = ?")
            params.extend([path, "true" if value else "false"])
        elif isinstance(value, (int, float)):
            # JSON true/false come back from json_extract as 1/0: compare numbers only.
            clauses.append("json_type(c.metadata, ?) IN ('integer', 'real') AND json_extract(c.metadata, ?) = ?")
            params.extend([path, path, value])
        else:
            clauses.append("json_extract(c.metadata, ?) = ?")
            params.extend([path, value])
    if where.since is not None:
        clauses.append("COALESCE(c.observed_at, c.created_at) >= ?")
        params.append(to_iso(where.since))
    if where.until is not None:
        clauses.append("COALESCE(c.observed_at, c.created_at) < ?")
        params.append(to_iso(where.until))
    return (" AND ".join(clauses) or "1"), params
