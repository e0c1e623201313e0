"""Keyed memories: a memory the caller addresses by a key of its own, as key/value stores do.

Raw memories are deduplicated by their text: storing the same text twice strengthens one memory.
A key/value store (LangGraph's ``BaseStore``, :mod:`hippo.integrations.langgraph`) needs the
opposite: a key holds one memory whatever its text becomes, and two keys may hold the same text.
A keyed memory is an ordinary memory (recalled, strengthened and decayed like any other) whose
identity is its key: the store's dedup hash is :func:`~hippo.core.hashing.key_hash` of the key
(so the one unique index of memories also makes a key unique per agent, and finding a key is
the same indexed lookup as finding a text), and the key itself is kept in its metadata under
:data:`~hippo.core.memories.edits.ITEM_KEY`.

Putting a key again changes that memory in place (:func:`hippo.core.memories.edits.rewrite`): same id and
strength, new text embedded and reindexed, the old text gone from every file.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Mapping

from hippo import limits
from hippo.core import validation as v
from hippo.core.hashing import key_hash
from hippo.core.memories.edits import ITEM_KEY, rewrite
from hippo.errors import InvalidInput
from hippo.types import Chunk, ItemWrite

if TYPE_CHECKING:
    from hippo.core.embedding import EmbeddingService
    from hippo.core.ports.scoped import AgentStore

__all__ = ["ITEM_KEY", "ItemWrite", "check_key", "delete_item", "get_item", "list_items", "put_item"]


def check_key(key: Any) -> str:
    """A key is any non-empty text without NUL, up to ``limits.ITEM_KEY_CHARS`` characters."""
    if not isinstance(key, str):
        raise InvalidInput(f"an item key must be a string, got {type(key).__name__}")
    return v.check_text(key, "item key", max_chars=limits.ITEM_KEY_CHARS)


def _metadata(key: str, metadata: Mapping[str, Any] | None) -> dict[str, Any]:
    checked = v.check_metadata(metadata)  # a JSON object (or None) before anything reads it as one
    if ITEM_KEY in checked:
        raise InvalidInput(f"metadata field {ITEM_KEY!r} is reserved for the item's key")
    return v.check_metadata({**checked, ITEM_KEY: key})


def get_item(store: "AgentStore", key: str) -> Chunk | None:
    """The memory that ``key`` holds, if any."""
    digest = key_hash(check_key(key))
    return store.memories_by_hash([digest]).get(digest)


def put_item(store: "AgentStore", embedding: "EmbeddingService", key: str, content: str, *,
             metadata: Mapping[str, Any] | None, now: datetime, intensity: float, max_chars: int) -> ItemWrite:
    """Make ``key`` hold ``content`` and ``metadata`` (which replaces the old metadata): a new
    memory, or the key's memory changed in place. One transaction; the vector is computed before it."""
    from ulid import ULID  # here: importing it loads importlib.metadata, 20 ms a recall never needs

    key = check_key(key)
    content = v.check_text(content, "content", max_chars=max_chars)
    checked = _metadata(key, metadata)
    intensity = v.check_intensity(intensity)
    digest = key_hash(key)
    vector = embedding.windows([content])[0]
    with store.transaction():
        # Read under the write lock: another writer may have put the same key meanwhile.
        existing = store.memories_by_hash([digest]).get(digest)
        if existing is None:
            chunk = Chunk(
                id=str(ULID()), agent_id=store.agent_id, content=content, kind="memory", metadata=checked,
                running_intensity=intensity, encounter_count=1, access_count=0, last_accessed_at=now,
                created_at=now, content_hash=digest, has_vector=vector is not None, source="agent",
            )
            store.insert_chunks([chunk], [vector])
            return ItemWrite(chunk, "inserted")
        changed = content != existing.content
        rewrite(store, existing, now, content=content if changed else None,
                vector=vector, metadata=checked)
    found = store.get_chunks([existing.id])
    return ItemWrite(found[0] if found else existing, "updated")


def delete_item(store: "AgentStore", key: str) -> Chunk | None:
    """Hard-delete the key's memory (the forget guarantee holds); the memory deleted, if any."""
    chunk = get_item(store, key)
    if chunk is None or not store.delete_chunks([chunk.id]):
        return None
    return chunk


def list_items(store: "AgentStore", limit: int, cursor: str | None = None) -> tuple[list[Chunk], str | None]:
    """The agent's keyed memories, newest first, a page of at most ``limit``; the cursor of the
    next page or None. Browsing: nothing counts as retrieved."""
    found: list[Chunk] = []
    while len(found) < limit:
        rows = store.list_chunks(limit=limits.RESULT_LIMIT, before=cursor, kind="memory")
        for chunk in rows:
            if ITEM_KEY in chunk.metadata:
                found.append(chunk)
                if len(found) == limit:
                    return found, chunk.id
        if len(rows) < limits.RESULT_LIMIT:
            return found, None
        cursor = rows[-1].id
    return found, None
