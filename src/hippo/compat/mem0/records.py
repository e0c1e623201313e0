"""mem0's result shapes made of hippo's, and mem0's filters in hippo's terms.

The shapes are mem0 2.2.1's (``mem0/memory/main.py``, ``mem0/memory/storage.py``): a memory item
``{"id", "memory", "hash", "metadata", "score", "created_at", "updated_at"}`` with the payload
fields mem0 promotes beside it (``user_id``, ``agent_id``, ``run_id``, ``actor_id``, ``role``, ...)
when the memory has them; an add event ``{"id", "memory", "event"}``; a history entry ``{"id",
"memory_id", "old_memory", "new_memory", "event", "created_at", "updated_at", "is_deleted",
"actor_id", "role"}``. ``hash`` is the MD5 of the text, as mem0's; times are ISO-8601 in UTC.
"""

from __future__ import annotations

import hashlib
import uuid
from datetime import datetime, timezone
from typing import Any, Callable, Mapping

from hippo.core import validation as v
from hippo.core.curation.importers.mem0 import IDENTITY, PROMOTED, Scope, check_id
from hippo.errors import InvalidInput
from hippo.types import Chunk, FactHistory, RememberResult

__all__ = ["EDITS", "add_events", "edited", "history", "item", "metadata_filter", "own_metadata", "scope_of"]

EDITS = "_mem0_edits"  # metadata: when update() changed the memory, ISO-8601, oldest first
MAX_EDITS = 100
_OPERATORS = ("eq", "ne", "in", "gt", "gte", "lt", "lte")
_NO_SCORE = object()


def _iso(when: datetime) -> str:
    return when.astimezone(timezone.utc).isoformat()


def _created(chunk: Chunk) -> str:
    """When the memory was made: when it was observed (an import keeps mem0's ``created_at``), else stored."""
    return _iso(chunk.observed_at or chunk.created_at)


def _updated(chunk: Chunk) -> str:
    edits = chunk.metadata.get(EDITS) or []
    return edits[-1] if edits else _created(chunk)


def item(chunk: Chunk, score: Any = _NO_SCORE) -> dict[str, Any]:
    """A memory as mem0 shows it: with ``score`` (``search``; ``get`` passes None) or without
    (``get_all``). The fields mem0 keeps beside the metadata are taken out of it; hippo's own
    (``_``-prefixed) are left out."""
    meta = chunk.metadata
    extra = {k: x for k, x in meta.items() if k not in PROMOTED and not k.startswith("_")}
    found: dict[str, Any] = {"id": chunk.id, "memory": chunk.content,
                             "hash": hashlib.md5(chunk.content.encode("utf-8")).hexdigest(),
                             "metadata": extra or None}
    if score is not _NO_SCORE:
        found["score"] = score
    found.update(created_at=_created(chunk), updated_at=_updated(chunk))
    # Stored through hippo's own API, a memory has no ids in its metadata: what its agent says.
    known = {**Scope.of_agent(chunk.agent_id, chunk.session_id).identity(), **meta}
    found.update({k: known[k] for k in PROMOTED if k in known})
    return found


def add_events(result: RememberResult, text_of: Callable[[str], str]) -> list[dict[str, Any]]:
    """mem0's events for what ``remember_facts`` did: a new fact is ``ADD``; one that supersedes
    another is ``UPDATE`` (with ``previous_memory``), and any further fact it supersedes ``DELETE``;
    a fact already known (it strengthened the one held) is ``NONE``, with the held memory's id."""
    events: list[dict[str, Any]] = []
    for fact in result.facts:
        if fact.action == "duplicate":
            events.append({"id": fact.id, "memory": fact.matched_content or fact.fact, "event": "NONE"})
        elif fact.action == "supersedes":
            events.append({"id": fact.id, "memory": fact.fact, "event": "UPDATE",
                           "previous_memory": fact.matched_content})
            events += [{"id": old, "memory": text_of(old), "event": "DELETE"} for old in fact.superseded[1:]]
        else:
            events.append({"id": fact.id, "memory": fact.fact, "event": "ADD"})
    return events


def history(found: FactHistory) -> list[dict[str, Any]]:
    """mem0's history of a memory, from hippo's: every version of the fact (``ADD`` for the first,
    ``UPDATE`` from the one each supersedes, under its own id), and each ``update()`` of a
    version (``UPDATE`` without ``old_memory``: an edit keeps no earlier text). Oldest first."""
    entries: list[dict[str, Any]] = []
    for version in found.versions:
        edits = list(version.metadata.get(EDITS) or [])
        first = None if edits else version.content  # an edited version's first text is gone
        before: list[Chunk | None] = [p for p in found.versions if p.superseded_by == version.id]
        for old in before or [None]:
            entries.append(_entry(version, "UPDATE" if old else "ADD", old.content if old else None, first,
                                  _created(version), len(entries)))
        for n, at in enumerate(edits):
            entries.append(_entry(version, "UPDATE", None, version.content if n == len(edits) - 1 else None, at,
                                  len(entries)))
    return sorted(entries, key=lambda e: e["updated_at"])


def _entry(version: Chunk, event: str, old: str | None, new: str | None, at: str, number: int) -> dict[str, Any]:
    return {"id": str(uuid.uuid5(uuid.NAMESPACE_URL, f"hippo:{version.id}:{number}")), "memory_id": version.id,
            "old_memory": old, "new_memory": new, "event": event, "created_at": _created(version),
            "updated_at": at, "is_deleted": False, "actor_id": version.metadata.get("actor_id"),
            "role": version.metadata.get("role")}


def edited(metadata: Mapping[str, Any], now: datetime) -> list[str]:
    """The edit times with one more (the last ``MAX_EDITS``)."""
    return [*(metadata.get(EDITS) or []), _iso(now)][-MAX_EDITS:]


def own_metadata(metadata: Any) -> dict[str, Any]:
    """The caller's metadata: a JSON object; the ids are the call's, never the metadata's (as
    mem0, which drops them), and ``_`` keys are hippo's own."""
    if metadata is None:
        return {}
    if not isinstance(metadata, dict):
        raise InvalidInput(f"metadata must be a JSON object (dict), got {type(metadata).__name__}")
    if any(isinstance(k, str) and k.startswith("_") for k in metadata):
        raise InvalidInput("metadata keys starting with _ are hippo's own: name yours otherwise")
    return v.check_metadata({k: x for k, x in metadata.items() if k not in IDENTITY})


def scope_of(user_id: Any, agent_id: Any, run_id: Any, filters: Any) -> Scope:
    """The scope of a read: the ids given as arguments (mem0 1.x) or in ``filters`` (mem0 2.x),
    the same id not given twice with two values; InvalidInput when none is given."""
    if filters is not None and not isinstance(filters, dict):
        raise InvalidInput(f"filters must be a JSON object (dict), got {type(filters).__name__}")
    ids = []
    for name, given in zip(IDENTITY, (user_id, agent_id, run_id)):
        listed = (filters or {}).get(name)
        if given is not None and listed is not None and check_id(given, name) != check_id(listed, name):
            raise InvalidInput(f"{name} is given twice, with two values: {v.shown(given)} and {v.shown(listed)}")
        ids.append(given if given is not None else listed)
    return Scope.of(*ids)


def metadata_filter(filters: Any) -> dict[str, Any] | None:
    """mem0's metadata filters as hippo's (:mod:`hippo.core.recall.filters`): a value is equality,
    ``"*"`` any value, ``{"eq"|"ne"|"in"|"gt"|"gte"|"lt"|"lte": ...}`` (with or without ``$``) a
    test. ``nin``, ``contains``, ``icontains`` and ``AND``/``OR``/``NOT`` are refused (InvalidInput)."""
    found: dict[str, Any] = {}
    for key, test in (filters or {}).items():
        if key in IDENTITY:
            continue
        if key in ("AND", "OR", "NOT"):
            raise InvalidInput(f"filters: hippo has no {key}; its tests of several fields all hold at once")
        if test == "*":
            found[key] = {"$exists": True}
        elif isinstance(test, dict):
            found[key] = {f"${_operator(key, op)}": operand for op, operand in test.items()}
        else:
            found[key] = test
    return found or None


def _operator(key: str, op: Any) -> str:
    name = op[1:] if isinstance(op, str) and op.startswith("$") else op
    if name not in _OPERATORS:
        raise InvalidInput(f"filters {key!r}: hippo has no {v.shown(op)}; it has {', '.join(_OPERATORS)} and '*'")
    return str(name)
