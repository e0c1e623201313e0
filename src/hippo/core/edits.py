"""Editing what is stored: a memory's text changed in place, and one agent's memory erased.

Both keep the forget guarantee: the old text leaves every file hippo writes, as
after ``forget_memory`` (the store's ``pending_scrub`` says when a reader still
holds an old snapshot).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Mapping

from hippo.core import validation as v
from hippo.core.hashing import content_hash, key_hash
from hippo.errors import Conflict, InvalidInput, NotFound
from hippo.types import Chunk, Erased

if TYPE_CHECKING:
    import numpy as np

    from hippo.core.embedding import EmbeddingService
    from hippo.stores.base import Store

__all__ = ["ITEM_KEY", "erase_agent", "rewrite", "update_memory"]

ITEM_KEY = "_item_key"
"""The metadata field that holds a keyed memory's key (see :mod:`hippo.core.items`)."""


def update_memory(store: "Store", embedding: "EmbeddingService", agent_id: str, chunk: Chunk, now: datetime, *,
                  content: str | None, metadata: Mapping[str, Any] | None, max_chars: int) -> None:
    """Change ``chunk``'s text and/or metadata in one transaction. New text is embedded again
    (pending when the embedder is down) and reindexed; the id, strength and history stay.

    A keyed memory (:mod:`hippo.core.items`) keeps its key: it stays in the metadata, and the
    memory is still found by it, whatever its new text."""
    if content is None and metadata is None:
        raise InvalidInput("nothing to update: give content, metadata or both")
    if content is not None:
        content = v.check_text(content, "content", max_chars=max_chars)
    checked = v.check_metadata(metadata) if metadata is not None else None
    key = chunk.metadata.get(ITEM_KEY) if chunk.kind == "memory" else None
    if checked is not None and key is not None:
        checked[ITEM_KEY] = key
    new_text = content if content is not None and content != chunk.content else None
    if new_text is not None and key is None and chunk.kind == "memory":
        same = store.memories_by_hash(agent_id, [content_hash(new_text)]).get(content_hash(new_text))
        if same is not None and same.id != chunk.id:
            raise Conflict(f"memory {same.id} already holds this text; forget one of the two instead")
    vector = embedding.documents([new_text])[0] if new_text is not None else None
    with store.transaction():
        rewrite(store, agent_id, chunk, now, content=new_text, vector=vector, metadata=checked)


def rewrite(store: "Store", agent_id: str, chunk: Chunk, now: datetime, *, content: str | None,
            vector: "np.ndarray | None", metadata: dict[str, Any] | None) -> None:
    """The write of an update, inside the caller's transaction: validated ``content`` (None: the
    text stays) with its ``vector``, and validated ``metadata`` (None: it stays)."""
    if content is not None:
        key = chunk.metadata.get(ITEM_KEY) if chunk.kind == "memory" else None
        digest = key_hash(key) if key is not None else content_hash(content)
        if not store.update_content(agent_id, chunk.id, content, digest, vector, now):
            raise NotFound(f"no memory {chunk.id} for agent {agent_id!r}")
    if metadata is not None:
        store.update_metadata(agent_id, chunk.id, metadata)


def erase_agent(store: "Store", agent_id: str) -> Erased:
    """Every memory, fact and block of one agent, hard-deleted; other agents are untouched."""
    counts = store.delete_agent(agent_id)
    note = store.pending_scrub()
    return Erased(agent_id=agent_id, **counts, scrubbed=note is None, note=note)
