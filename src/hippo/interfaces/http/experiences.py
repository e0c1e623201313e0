"""The experience routes under ``/v1/agents/{agent_id}/``: record, recall across both
tiers, the short-term buffer, recall by context, and consolidation on demand. Each is a few lines
over the core, as in :mod:`hippo.interfaces.http.app`, whose ``create_app`` includes this router."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Query

from hippo.interfaces.http.models import ExperienceBody, ExperienceList, ExperienceRecallBody
from hippo.interfaces.http.service import Mem, base_path
from hippo.types import Consolidation, Experience

__all__ = ["router"]

router = APIRouter(tags=["experiences"])

REF = Query(min_length=1, max_length=256)


@router.post(f"{base_path}/experiences", response_model=Experience, status_code=201)
def record_experience(mem: Mem, body: ExperienceBody) -> Experience:
    """Record something the agent lived through. It enters short-term memory, searchable at once; an
    important one (0.7 or more), or a buffer over 80% full, consolidates (then `tier` is `long_term`).
    `durable` says whether a crash could still lose it."""
    return mem.record_experience(body.type, body.content, context=body.context, importance=body.importance,
                                 tags=body.tags, source=body.source, session_id=body.session_id,
                                 observed_at=body.observed_at)


@router.get(f"{base_path}/experiences", response_model=ExperienceList)
def recall_experiences(
    mem: Mem,
    q: Annotated[str | None, Query(min_length=1, max_length=4_000,
                                   description="Search text: by relevance; omit for the latest first")] = None,
    types: Annotated[list[str] | None, Query(alias="type", description="Only these types (repeatable: any)")] = None,
    tags: Annotated[list[str] | None, Query(alias="tag", description="Only with all these tags")] = None,
    min_importance: Annotated[float | None, Query(ge=0, le=1)] = None,
    since: Annotated[datetime | None, Query(description="Observed at or after (ISO 8601)")] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 10,
) -> ExperienceList:
    """Experiences from short-term and long-term memory together, deduplicated. A look that changes
    nothing; `POST experiences/recall` is the recall whose long-term results count as retrieved."""
    return ExperienceList(items=mem.recall(types=types, tags=tags, min_importance=min_importance, since=since,
                                           limit=limit, query=q, touch=False))


@router.post(f"{base_path}/experiences/recall", response_model=ExperienceList)
def recall_experiences_counted(mem: Mem, body: ExperienceRecallBody) -> ExperienceList:
    """Experiences from both tiers, as `GET experiences`; the long-term results count as retrieved
    (access count, last access, +0.02 strength)."""
    return ExperienceList(items=mem.recall(types=body.types, tags=body.tags, min_importance=body.min_importance,
                                           since=body.since, limit=body.limit, query=body.query))


@router.get(f"{base_path}/experiences/short-term", response_model=ExperienceList)
def short_term(mem: Mem) -> ExperienceList:
    """The short-term buffer, newest first (browsing: nothing counts as retrieved)."""
    return ExperienceList(items=mem.short_term())


@router.get(f"{base_path}/experiences/related", response_model=ExperienceList)
def related_experiences(
    mem: Mem,
    user_id: Annotated[str | None, REF] = None,
    room_id: Annotated[str | None, REF] = None,
    task_id: Annotated[str | None, REF] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 100,
) -> ExperienceList:
    """Experiences whose context names this user (`userId`/`senderId`), room or task (all of those
    given; at least one), latest first, from both tiers."""
    return ExperienceList(items=mem.recall_related(user_id=user_id, room_id=room_id, task_id=task_id, limit=limit))


@router.post(f"{base_path}/consolidate", response_model=Consolidation)
def consolidate(mem: Mem) -> Consolidation:
    """Move the short-term buffer's important experiences to long-term memory now, then prune it."""
    return mem.consolidate()
