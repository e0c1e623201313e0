"""Experiences: their seven types, ``calculateImportance``, and the context ids.

An experience is something the agent lived through. It enters the short-term buffer
(:mod:`hippo.core.experiences.short_term`) with an importance, :func:`calculate_importance` unless the
caller gives one; consolidation (:mod:`hippo.core.experiences.consolidation`) writes the important ones to
long-term memory, where the importance is the memory's starting strength (docs/guide/experiences.md)
and the type, importance and context are kept beside the memory (``ExperienceRecord``).

The context is a JSON object of the caller's. Its ``userId``, ``roomId`` and ``taskId``
(``senderId`` for the user of a chat), or their snake_case forms, are indexed for
:meth:`Memory.recall_related`. Its flags ``mentionedMe``, ``userDirectMessage``, ``actionTaken``
and ``errorRecovered`` (or snake_case) raise the computed importance.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Mapping, Sequence

from hippo import limits
from hippo.core import validation as v
from hippo.core.ports import ExperienceRecord
from hippo.errors import InvalidInput
from hippo.types import Chunk, Experience

__all__ = ["ADJUSTMENTS", "EXPERIENCE_TYPES", "TYPE_WEIGHTS", "calculate_importance", "check_type", "context_refs",
           "long_term", "new_entry", "record_of", "refs_asked"]

# The importance of an experience by its type.
TYPE_WEIGHTS: dict[str, float] = {
    "chat": 0.6, "observation": 0.4, "task": 0.7, "decision": 0.8, "tool-use": 0.7, "error": 0.9, "insight": 0.85,
}
EXPERIENCE_TYPES = tuple(TYPE_WEIGHTS)
# What a context flag adds to the computed importance, each flag with its snake_case spelling.
ADJUSTMENTS: dict[tuple[str, str], float] = {
    ("mentionedMe", "mentioned_me"): 0.2,
    ("userDirectMessage", "user_direct_message"): 0.15,
    ("actionTaken", "action_taken"): 0.1,
    ("errorRecovered", "error_recovered"): 0.15,
}
# The context keys of the ids recall_related finds experiences by, in the order they are read.
_REF_KEYS: dict[str, tuple[str, ...]] = {
    "user": ("userId", "user_id", "senderId", "sender_id"),
    "room": ("roomId", "room_id"),
    "task": ("taskId", "task_id"),
}
_MAX_REF_CHARS = limits.NAME_CHARS


def check_type(value: Any) -> str:
    """One of the seven types (``tool_use`` is read as ``tool-use``); InvalidInput otherwise."""
    name = value.strip().lower().replace("_", "-") if isinstance(value, str) else None
    if name not in TYPE_WEIGHTS:
        raise InvalidInput(f"unknown experience type {v.shown(value)}; one of: {', '.join(EXPERIENCE_TYPES)}")
    return name


def calculate_importance(type: str, context: Mapping[str, Any] | None = None) -> float:
    """``calculateImportance``: the type's weight, plus each adjustment whose context
    flag is set (truthy), clamped to [0, 1]."""
    score = TYPE_WEIGHTS.get(check_type(type), 0.5)
    context = context or {}
    for names, bonus in ADJUSTMENTS.items():
        if any(context.get(name) for name in names):
            score += bonus
    return max(0.0, min(1.0, round(score, 10)))


def context_refs(context: Mapping[str, Any]) -> dict[str, str]:
    """The user, room and task ids a context names (the first key of each that is set)."""
    refs: dict[str, str] = {}
    for ref, keys in _REF_KEYS.items():
        for key in keys:
            value = context.get(key)
            if value is None or value == "":
                continue
            refs[ref] = _ref_text(value, key)
            break
    return refs


def refs_asked(user_id: Any = None, room_id: Any = None, task_id: Any = None) -> dict[str, str]:
    """The ids ``recall_related`` was asked for; at least one (InvalidInput otherwise)."""
    asked = {ref: _ref_text(value, f"{ref}_id") for ref, value in
             (("user", user_id), ("room", room_id), ("task", task_id)) if value is not None}
    if not asked:
        raise InvalidInput("recall_related needs user_id, room_id or task_id")
    return asked


def _ref_text(value: Any, name: str) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(v.check_int(value, name, -limits.INTEGER, limits.INTEGER))
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be a string or an integer, got {v.shown(value)}")
    if not value or len(value) > _MAX_REF_CHARS:
        raise InvalidInput(f"{name} must be 1 to {_MAX_REF_CHARS} characters")
    return v.check_text(value, name, max_chars=_MAX_REF_CHARS)


def check_tags(tags: Any, name: str = "tags") -> list[str]:
    """A tag or a list of tags (strings), as metadata keeps them; InvalidInput otherwise."""
    if tags is None:
        return []
    if isinstance(tags, str):
        tags = [tags]
    if not isinstance(tags, (list, tuple)):
        raise InvalidInput(f"{name} must be a string or a list of strings, got {v.shown(tags)}")
    return list(v.check_metadata({"tags": list(tags)})["tags"])


def new_entry(agent_id: str, type_: Any, content: Any, now: datetime, *, context: Any, importance: Any,
              tags: Sequence[str] | str, source: Any, session_id: Any, observed_at: Any,
              max_chars: int) -> Experience:
    """A checked short-term entry (InvalidInput names what is wrong; nothing is kept then)."""
    from ulid import ULID  # here: importing it loads importlib.metadata, 20 ms a recall never needs

    kind = check_type(type_)
    text = v.check_text(content, "content", max_chars=max_chars)
    if context is not None and not isinstance(context, Mapping):
        raise InvalidInput(f"context must be a JSON object, got {type(context).__name__}")
    ctx = v.check_metadata({"context": dict(context or {})})["context"]  # JSON-safe, within the size limit
    context_refs(ctx)  # its ids must be usable
    tag_list = check_tags(tags)
    weight = calculate_importance(kind, ctx) if importance is None else v.check_intensity(importance, "importance")
    when = v.check_datetime(observed_at, "observed_at") or now
    return Experience(id=str(ULID()), agent_id=agent_id, type=kind, content=text, importance=weight, context=ctx,
                      tags=list(tag_list), observed_at=when, created_at=now, tier="short_term", durable=False,
                      source=v.check_source(source if source is not None else "agent"),
                      session_id=v.check_session_id(session_id))


def record_of(entry: Experience, chunk_id: str, now: datetime) -> ExperienceRecord:
    """What long-term memory keeps of a consolidated entry beside its chunk."""
    refs = context_refs(entry.context)
    return ExperienceRecord(id=chunk_id, type=entry.type, importance=entry.importance, context=entry.context,
                            user_ref=refs.get("user"), room_ref=refs.get("room"), task_ref=refs.get("task"),
                            observed_at=entry.observed_at, consolidated_at=now)


def long_term(chunk: Chunk, record: ExperienceRecord, relevance: float | None = None) -> Experience:
    """A long-term experience: its memory and what was kept beside it."""
    return Experience(id=chunk.id, agent_id=chunk.agent_id, type=record.type, content=chunk.content,
                      importance=record.importance, context=record.context,
                      tags=list(chunk.metadata.get("tags") or ()), observed_at=record.observed_at,
                      created_at=chunk.created_at, tier="long_term", durable=True, source=chunk.source,
                      session_id=chunk.session_id, consolidated_at=record.consolidated_at,
                      strength=chunk.running_intensity, relevance=relevance)
