"""The capture, surfacing and compaction routes under ``/v1/agents/{agent_id}/``:
observe a session's messages, process what was observed, surface memories for a conversation,
and compact a session. Each is a few lines over the core, as in :mod:`hippo.interfaces.http.app`,
whose ``create_app`` includes this router; errors go through its one table."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Request

from hippo.core.memory import Memory
from hippo.interfaces.http.models import CompactBody, ObserveBody, SurfaceBody
from hippo.interfaces.http.service import Mem, Service, base_path
from hippo.types import Captured, Compaction, Observation, Surfaced

__all__ = ["router"]

router = APIRouter(tags=["capture"])

SESSION = Path(min_length=1, max_length=256, description="The conversation's session id.")


@router.post(f"{base_path}/sessions/{{session_id}}/messages", response_model=Observation, status_code=202)
def observe(mem: Mem, session_id: Annotated[str, SESSION], body: ObserveBody) -> Observation:
    """Take a session's messages in: durable when this answers, turned into memories later (`POST
    process`, or `hippo serve` every `capture_every` seconds). A message id the session already has
    is skipped, so a transcript may be sent again; system prompts and tool outputs are left out."""
    return mem.observe(body.messages, session_id=session_id)


def _service(request: Request) -> Service:
    service: Service = request.app.state.service
    return service


@router.post(f"{base_path}/process", response_model=Captured)
async def process(mem: Mem, request: Request) -> Captured:
    """Turn what this agent observed into memories now: windows, the gate, extraction, dedup."""
    return await _service(request).heavy(mem.process_pending)


@router.post(f"{base_path}/sessions/{{session_id}}/surface", response_model=Surfaced)
def surface(mem: Mem, session_id: Annotated[str, SESSION], body: SurfaceBody) -> Surfaced:
    """Memories relevant to the last few messages that this session was not shown yet, as a context
    block within `max_tokens`; `text` is empty when nothing is relevant."""
    return mem.surface(body.messages, session_id=session_id, max_tokens=body.max_tokens)


@router.post(f"{base_path}/compact", response_model=Compaction)
async def compact(mem: Mem, body: CompactBody, request: Request) -> Compaction:
    """Compaction of a session: the `summary`, what became of each message (`entries`)
    and the `stats`. With `session_id`, what is compressed or reduced to a pointer is stored as
    memories of that session (idempotent) and each line carries its id; without, nothing is stored."""
    return await _service(request).heavy(lambda: _compacted(mem, body))


def _compacted(mem: Memory, body: CompactBody) -> Compaction:
    if body.session_id is None:
        from hippo.core.compaction.compact import compact as summarize

        return summarize(body.messages, body.config, previous_summary=body.previous_summary)
    return mem.compact(body.messages, session_id=body.session_id, config=body.config,
                       previous_summary=body.previous_summary)
