"""The dashboard's changes: edit a memory in place, delete one, forget by description after a
preview. Every form carries the session's CSRF token (``check_csrf``); each change is the core's
own operation, with its guarantees (the old or forgotten text leaves the database files)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Query, Request, Response
from fastapi.responses import RedirectResponse

from hippo.surfaces.dashboard.pages import MEMORY_ID, Agent
from hippo.surfaces.dashboard.render import PageRoute, page
from hippo.surfaces.dashboard.sessions import check_csrf

__all__ = ["router"]

router = APIRouter(route_class=PageRoute, include_in_schema=False)
Token = Annotated[str, Form(max_length=200)]


def tag_list(text: str) -> list[str]:
    return list(dict.fromkeys(t.strip() for t in text.split(",") if t.strip()))


@router.post("/agents/{agent_id}/memories/{memory_id}/edit")
def edit(request: Request, view: Agent, memory_id: Annotated[str, MEMORY_ID], content: Annotated[str, Form()],
         tags: Annotated[str, Form()] = "", csrf: Token = "") -> Response:
    """New text and tags in place (same id and strength); other metadata is kept."""
    check_csrf(request, view.viewer, csrf)
    chunk = view.mem.get_memory(memory_id)
    metadata = {k: v for k, v in chunk.metadata.items() if k != "tags"}
    if tag_list(tags):
        metadata["tags"] = tag_list(tags)
    view.mem.update_memory(memory_id, content=None if content == chunk.content else content,
                           metadata=metadata if metadata != chunk.metadata else None)
    return RedirectResponse(f"/agents/{view.mem.agent_id}/memories/{memory_id}?saved=1", status_code=303)


@router.post("/agents/{agent_id}/memories/{memory_id}/delete")
def delete(request: Request, view: Agent, memory_id: Annotated[str, MEMORY_ID],
           confirm: Annotated[str, Form()] = "", csrf: Token = "") -> Response:
    """Delete one memory by id, once the confirmation box is ticked."""
    check_csrf(request, view.viewer, csrf)
    if confirm != "yes":
        return page(request, view.viewer, "error.html", 400, agent=view.mem.agent_id,
                    message="tick the confirmation box to delete")
    gone = view.mem.delete_memory(memory_id)
    return page(request, view.viewer, "forgotten.html", agent=view.mem.agent_id, deleted=[gone], changed=False)


@router.get("/agents/{agent_id}/forget")
def forget_preview(request: Request, view: Agent,
                   description: Annotated[str, Query(max_length=4_000)] = "") -> Response:
    """What a forget would delete; nothing is deleted here."""
    found = view.mem.forget_memory(description, preview=True) if description.strip() else None
    return page(request, view.viewer, "forget.html", agent=view.mem.agent_id, description=description,
                found=found, changed=False)


@router.post("/agents/{agent_id}/forget")
def forget(request: Request, view: Agent, description: Annotated[str, Form(max_length=4_000)],
           ids: Annotated[list[str] | None, Form()] = None, csrf: Token = "") -> Response:
    """Forget for good what the preview showed; when the match changed since, show it again."""
    check_csrf(request, view.viewer, csrf)
    again = view.mem.forget_memory(description, preview=True)
    if sorted(f.id for f in again.deleted) != sorted(ids or ()):
        return page(request, view.viewer, "forget.html", agent=view.mem.agent_id, description=description,
                    found=again, changed=True)
    done = view.mem.forget_memory(description)
    return page(request, view.viewer, "forgotten.html", agent=view.mem.agent_id, deleted=done.deleted,
                changed=False)
