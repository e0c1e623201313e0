"""The dashboard's changes: add a memory, reinforce or demote one, edit one in place (text, tags,
metadata), split a merged wording back into a fact of its own, restore an archived one, delete
one, forget by description after a preview. Every form carries the session's CSRF token
(``check_csrf``); each change is the core's own operation, with its guarantees (the old or
forgotten text leaves the database files)."""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Form, Query, Request, Response
from fastapi.responses import RedirectResponse

from hippo.core.memory import Memory
from hippo.errors import Conflict, InvalidInput
from hippo.interfaces.dashboard.pages import MEMORY_ID, Agent, BrowseQuery, browse_page, memory_page, persons_keys
from hippo.interfaces.dashboard.render import PageRoute, page
from hippo.interfaces.dashboard.sessions import check_csrf
from hippo.types import StoreResult

__all__ = ["router", "add_memory", "added_url"]

SOURCE = "dashboard"  # the provenance of what a person adds here (the API's default is "agent")

router = APIRouter(route_class=PageRoute, include_in_schema=False)
Token = Annotated[str, Form(max_length=200)]


def tag_list(text: str) -> list[str]:
    return list(dict.fromkeys(t.strip() for t in text.split(",") if t.strip()))


def add_memory(mem: Memory, content: str, tags: str, metadata: str, intensity: str) -> StoreResult:
    """Store what the add form holds through the core's ``store_memory`` (what ``POST
    /v1/agents/{id}/memories`` calls), with its checks; the same text again strengthens the memory
    that holds it."""
    wanted = person_metadata(metadata, nothing="nothing was stored")
    if tag_list(tags):
        wanted["tags"] = tag_list(tags)
    return mem.store_memory(content.replace("\r\n", "\n"), wanted or None, starting_strength(intensity),
                            source=SOURCE)


def starting_strength(text: str) -> float:
    """The form's starting strength: a number from 0 to 1 (empty: the API's default, 0.5)."""
    if not text.strip():
        return 0.5
    try:
        value = float(text)
    except ValueError:
        raise InvalidInput(f"the starting strength is a number from 0 to 1, not {text.strip()[:20]!r}; "
                           "nothing was stored") from None
    if not 0.0 <= value <= 1.0:
        raise InvalidInput(f"the starting strength is a number from 0 to 1, not {value:g}; nothing was stored")
    return value


def added_url(mem: Memory, result: StoreResult) -> str:
    """The page of the memory just stored, saying whether it is new or was there and strengthened."""
    return f"/agents/{mem.agent_id}/memories/{result.id}?added={result.action}"


@router.post("/agents/{agent_id}/memories")
def add(request: Request, view: Agent, content: Annotated[str, Form()] = "",
        tags: Annotated[str, Form(max_length=4_000)] = "", metadata: Annotated[str, Form(max_length=200_000)] = "",
        intensity: Annotated[str, Form(max_length=20)] = "", csrf: Token = "") -> Response:
    """The agent page's add form: store a memory and show its page. A bad entry shows the agent's
    page again with the error and what was typed; nothing is stored then."""
    check_csrf(request, view.viewer, csrf)
    try:
        result = add_memory(view.mem, content, tags, metadata, intensity)
    except InvalidInput as exc:
        typed = {"content": content, "tags": tags, "metadata": metadata, "intensity": intensity}
        return browse_page(request, view, BrowseQuery.model_validate({}), 400, add_error=exc.message, typed=typed)
    return RedirectResponse(added_url(view.mem, result), status_code=303)


@router.post("/agents/{agent_id}/memories/{memory_id}/reinforce")
def reinforce(request: Request, view: Agent, memory_id: Annotated[str, MEMORY_ID], csrf: Token = "") -> Response:
    """The memory helped: the core's ``reinforce_memory`` (feedback up, recency restarted)."""
    check_csrf(request, view.viewer, csrf)
    view.mem.reinforce_memory(memory_id)
    return RedirectResponse(f"/agents/{view.mem.agent_id}/memories/{memory_id}?feedback=reinforced", status_code=303)


@router.post("/agents/{agent_id}/memories/{memory_id}/demote")
def demote(request: Request, view: Agent, memory_id: Annotated[str, MEMORY_ID], csrf: Token = "") -> Response:
    """The memory is stale, wrong or irrelevant: the core's ``demote_memory`` (feedback down,
    nothing deleted)."""
    check_csrf(request, view.viewer, csrf)
    view.mem.demote_memory(memory_id)
    return RedirectResponse(f"/agents/{view.mem.agent_id}/memories/{memory_id}?feedback=demoted", status_code=303)


@router.post("/agents/{agent_id}/memories/{memory_id}/edit")
def edit(request: Request, view: Agent, memory_id: Annotated[str, MEMORY_ID], content: Annotated[str, Form()],
         tags: Annotated[str, Form()] = "", metadata: Annotated[str | None, Form(max_length=200_000)] = None,
         with_metadata: Annotated[str, Form(max_length=1)] = "", csrf: Token = "") -> Response:
    """New text, tags and metadata in place (same id and strength) through the core's update, with
    its checks; hippo's own metadata (keys starting with ``_``) is kept as stored. A bad edit shows
    the page again with the error and what was typed; nothing changes then."""
    check_csrf(request, view.viewer, csrf)
    chunk = view.mem.get_memory(memory_id)
    if metadata is None and with_metadata:  # the form's box, emptied (an empty field arrives as none)
        metadata = ""
    try:
        wanted = edited_metadata(chunk.metadata, tags, metadata)
        new_text = None if content == chunk.content else content
        if new_text is not None or wanted != chunk.metadata:
            view.mem.update_memory(memory_id, content=new_text, metadata=wanted if wanted != chunk.metadata else None)
    except (InvalidInput, Conflict) as exc:
        typed = {"content_text": content, "tags": tags}
        if metadata is not None:
            typed["metadata_text"] = metadata
        return memory_page(request, view, chunk, 409 if isinstance(exc, Conflict) else 400,
                           edit_error=exc.message, **typed)
    return RedirectResponse(f"/agents/{view.mem.agent_id}/memories/{memory_id}?saved=1", status_code=303)


def edited_metadata(stored: dict[str, Any], tags: str, text: str | None) -> dict[str, Any]:
    """The metadata an edit asks for: hippo's own keys as stored, the person's keys from the form's
    JSON object (as stored when the form sent none), the tags from their own field."""
    own = persons_keys(stored) if text is None else person_metadata(text)
    wanted = {**own, **{k: v for k, v in stored.items() if k.startswith("_")}}
    if tag_list(tags):
        wanted["tags"] = tag_list(tags)
    return wanted


def person_metadata(text: str, *, nothing: str = "nothing was changed") -> dict[str, Any]:
    """The form's metadata: a JSON object (empty text: none) without hippo's own keys or the tags;
    ``nothing`` ends an error's message (what the refused form did not do)."""
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"metadata is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}; "
                           f"{nothing}") from None
    if not isinstance(value, dict):
        kind = "a list" if isinstance(value, list) else "a single value"
        raise InvalidInput(f'metadata must be a JSON object such as {{"project": "hippo"}}, not {kind}; '
                           f"{nothing}")
    forged = sorted(k for k in value if k.startswith("_"))
    if forged:
        raise InvalidInput(f"keys starting with _ are hippo's own and are kept as they are: remove "
                           f"{', '.join(forged)}; {nothing}")
    if "tags" in value:
        raise InvalidInput(f'the tags have their own field: remove "tags" from the metadata; {nothing}')
    return value


@router.post("/agents/{agent_id}/memories/{memory_id}/split")
def split(request: Request, view: Agent, memory_id: Annotated[str, MEMORY_ID],
          wording: Annotated[str, Form(max_length=200_000)], csrf: Token = "") -> Response:
    """Split a wording merged into this fact back into a fact of its own (the core's ``split_fact``)
    and show the new fact; a wording that is not merged there shows the page again, nothing changed."""
    check_csrf(request, view.viewer, csrf)
    try:
        new = view.mem.split_fact(memory_id, wording)
    except (InvalidInput, Conflict) as exc:
        return memory_page(request, view, view.mem.get_memory(memory_id), 409 if isinstance(exc, Conflict) else 400,
                           split_error=exc.message)
    return RedirectResponse(f"/agents/{view.mem.agent_id}/memories/{new.id}?split_from={memory_id}", status_code=303)


@router.post("/agents/{agent_id}/memories/{memory_id}/restore")
def restore(request: Request, view: Agent, memory_id: Annotated[str, MEMORY_ID], csrf: Token = "") -> Response:
    """Bring an archived memory back into recall: the core's ``restore_memory`` (same id, embedded
    again; when a live memory holds the same text meanwhile, that one stays and the copy goes)."""
    check_csrf(request, view.viewer, csrf)
    live = view.mem.restore_memory(memory_id)
    return RedirectResponse(f"/agents/{view.mem.agent_id}/memories/{live.id}?restored=1", status_code=303)


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
