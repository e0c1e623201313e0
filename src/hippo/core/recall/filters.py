"""Metadata filters of recall: checked once here, then handed to the store as conditions.

A filter is a JSON object. A plain value means equality (``{"project": "hippo"}``);
an object of operators tests the field otherwise (``{"priority": {"$gte": 2}}``,
``{"status": {"$in": ["open", "blocked"]}}``, ``{"due": {"$exists": true}}``).
Operators as in MongoDB and mem0: ``$eq $ne $in $gt $gte $lt $lte $exists``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from hippo.core import validation as v
from hippo.core.ports import ChunkFilter, MetaCondition
from hippo.errors import InvalidInput
from hippo.types import Chunk

__all__ = ["OPERATORS", "metadata_conditions", "passes", "recall_filter"]

OPERATORS = {"$eq": "eq", "$ne": "ne", "$in": "in", "$gt": "gt", "$gte": "gte", "$lt": "lt", "$lte": "lte",
             "$exists": "exists"}
_PLAIN = (str, int, float, bool, type(None))
_MAX_IN = 100


def recall_filter(*, kind: Any = None, tags: Any = None, metadata: Any = None, since: Any = None, until: Any = None,
                  source: Any = None, session_id: Any = None, as_of: datetime | None = None) -> ChunkFilter:
    """The store's filter for recall's keyword arguments, each checked (InvalidInput names the bad one)."""
    if not all(isinstance(x, (str, list, tuple, type(None))) for x in (kind, tags, source)):
        raise InvalidInput("kind, tags and source filters must be a string or a list of strings")
    kinds = (kind,) if isinstance(kind, str) else tuple(kind or ())
    if any(k not in ("fact", "memory") for k in kinds):
        raise InvalidInput(f"kind must be 'fact' or 'memory', got {v.shown(kind)}")
    if isinstance(tags, str):
        tags = [tags]
    tag_list = v.check_metadata({"tags": list(tags)})["tags"] if tags else []
    sources = (source,) if isinstance(source, str) else tuple(source or ())
    return ChunkFilter(
        kinds=kinds, tags=tuple(tag_list), metadata=metadata_conditions(metadata),
        since=v.check_datetime(since, "since"), until=v.check_datetime(until, "until"),
        sources=tuple(v.check_source(s) for s in sources), session_id=v.check_session_id(session_id), as_of=as_of,
    )


def passes(chunk: Chunk, where: ChunkFilter) -> bool:
    """Whether a chunk read outside the store's search (an archived one) passes a filter's kind,
    tags, provenance and time; metadata conditions are for the store to test. At an ``as_of`` date,
    it must have been stored by then (a superseded one still never passes: see the recall guide)."""
    when = chunk.observed_at or chunk.created_at
    return ((not where.kinds or chunk.kind in where.kinds)
            and all(tag in (chunk.metadata.get("tags") or ()) for tag in where.tags)
            and (not where.sources or chunk.source in where.sources)
            and (where.session_id is None or chunk.session_id == where.session_id)
            and (where.since is None or when >= where.since) and (where.until is None or when < where.until)
            and (where.include_superseded or chunk.superseded_by is None)
            and (where.as_of is None or chunk.created_at <= where.as_of))


def metadata_conditions(value: Any) -> tuple[MetaCondition, ...]:
    """The conditions a metadata filter states; InvalidInput, naming the field, for anything else."""
    if value is None:
        return ()
    if not isinstance(value, dict):
        raise InvalidInput(f"a metadata filter must be a JSON object (dict), got {type(value).__name__}")
    v.check_json_value(value, "metadata filter")
    conditions = []
    for key, test in value.items():
        v.check_metadata({key: None})  # the same rule for keys as stored metadata
        tests = test.items() if isinstance(test, dict) else [("$eq", test)]
        if not tests:
            raise InvalidInput(f"metadata filter {key!r}: an empty object tests nothing")
        conditions += [_condition(key, op, operand) for op, operand in tests]
    return tuple(conditions)


def _condition(key: str, op: Any, operand: Any) -> MetaCondition:
    where = f"metadata filter {key!r}"
    if op not in OPERATORS:
        raise InvalidInput(f"{where}: unknown operator {v.shown(op)}; known: {', '.join(OPERATORS)}")
    name = OPERATORS[op]
    if name in ("eq", "ne") and not isinstance(operand, _PLAIN):
        raise InvalidInput(f"{where}: {op} compares a plain value (text, number, boolean, null)")
    if name == "in":
        if not isinstance(operand, list) or not 0 < len(operand) <= _MAX_IN \
                or not all(isinstance(x, _PLAIN) for x in operand):
            raise InvalidInput(f"{where}: $in takes a list of 1 to {_MAX_IN} plain values")
        operand = tuple(operand)
    if name in ("gt", "gte", "lt", "lte") and (isinstance(operand, bool) or not isinstance(operand, (int, float, str))):
        raise InvalidInput(f"{where}: {op} compares a number or a text")
    if name == "exists" and not isinstance(operand, bool):
        raise InvalidInput(f"{where}: $exists takes true or false")
    return MetaCondition(key, name, operand)  # type: ignore[arg-type]  # name is a value of OPERATORS
