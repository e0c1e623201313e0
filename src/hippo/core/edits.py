"""Editing what is stored: a memory's text changed in place, and one agent's memory erased.

Both keep the forget guarantee: the old text leaves every file hippo writes, as
after ``forget_memory`` (the store's ``pending_scrub`` says when a reader still
holds an old snapshot).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Mapping

from hippo.core import validation as v
from hippo.core.hashing import content_hash
from hippo.errors import Conflict, InvalidInput, NotFound
from hippo.types import Chunk, Erased

if TYPE_CHECKING:
    from hippo.core.embedding import EmbeddingService
    from hippo.stores.base import Store

__all__ = ["erase_agent", "update_memory"]


def update_memory(store: "Store", embedding: "EmbeddingService", agent_id: str, chunk: Chunk, now: datetime, *,
                  content: str | None, metadata: Mapping[str, Any] | None, max_chars: int) -> None:
    """Change ``chunk``'s text and/or metadata in one transaction. New text is embedded again
    (pending when the embedder is down) and reindexed; the id, strength and history stay."""
    if content is None and metadata is None:
        raise InvalidInput("nothing to update: give content, metadata or both")
    if content is not None:
        content = v.check_text(content, "content", max_chars=max_chars)
    checked = v.check_metadata(metadata) if metadata is not None else None
    changed = content is not None and content != chunk.content
    digest = content_hash(content) if changed else ""
    if changed and chunk.kind == "memory":
        same = store.memories_by_hash(agent_id, [digest]).get(digest)
        if same is not None and same.id != chunk.id:
            raise Conflict(f"memory {same.id} already holds this text; forget one of the two instead")
    vector = embedding.documents([content])[0] if changed else None
    with store.transaction():
        if changed and not store.update_content(agent_id, chunk.id, content, digest, vector, now):
            raise NotFound(f"no memory {chunk.id} for agent {agent_id!r}")
        if checked is not None:
            store.update_metadata(agent_id, chunk.id, checked)


def erase_agent(store: "Store", agent_id: str) -> Erased:
    """Every memory, fact and block of one agent, hard-deleted; other agents are untouched."""
    counts = store.delete_agent(agent_id)
    note = store.pending_scrub()
    return Erased(agent_id=agent_id, **counts, scrubbed=note is None, note=note)
