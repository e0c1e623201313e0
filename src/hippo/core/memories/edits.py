"""Editing what is stored: a memory's text changed in place, a merged wording split back into a
fact of its own, and one agent's memory erased.

All keep the forget guarantee: the old text leaves every file hippo writes, as
after ``forget_memory`` (the store's ``pending_scrub`` says when a reader still
holds an old snapshot).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import TYPE_CHECKING, Any, Mapping

from hippo.core import validation as v
from hippo.core.facts.recognition import same_words
from hippo.core.hashing import content_hash, key_hash
from hippo.core.ports import StrengthUpdate
from hippo.errors import Conflict, InvalidInput, NotFound
from hippo.types import Chunk, Erased, MergedWording

if TYPE_CHECKING:
    import numpy as np

    from hippo.core.embedding import EmbeddingService
    from hippo.core.ports.scoped import AgentStore

__all__ = ["ITEM_KEY", "erase_agent", "rewrite", "split_fact", "update_memory"]

ITEM_KEY = "_item_key"
"""The metadata field that holds a keyed memory's key (see :mod:`hippo.core.memories.items`)."""


def update_memory(store: "AgentStore", embedding: "EmbeddingService", chunk: Chunk, now: datetime, *,
                  content: str | None, metadata: Mapping[str, Any] | None, max_chars: int) -> None:
    """Change ``chunk``'s text and/or metadata in one transaction. New text is embedded again
    (pending when the embedder is down) and reindexed; the id, strength and versions stay.

    A fact's new text takes the wordings merged into it (``fact_history(id).merged``) away with the
    old text, in the same transaction (the store's trigger on ``content``): they were rewordings of
    what the user replaced, so keeping them would keep that text (and ``split_fact`` would revive
    it). The strength those merges added stays, as the rest of the strength does. The same text
    again, or new metadata alone, keeps them.

    A keyed memory (:mod:`hippo.core.memories.items`) keeps its key: it stays in the metadata, and the
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
        same = store.memories_by_hash([content_hash(new_text)]).get(content_hash(new_text))
        if same is not None and same.id != chunk.id:
            raise Conflict(f"memory {same.id} already holds this text; forget one of the two instead")
    vector = embedding.windows([new_text])[0] if new_text is not None else None
    with store.transaction():
        rewrite(store, chunk, now, content=new_text, vector=vector, metadata=checked)


def rewrite(store: "AgentStore", chunk: Chunk, now: datetime, *, content: str | None,
            vector: "np.ndarray | None", metadata: dict[str, Any] | None) -> None:
    """The write of an update, inside the caller's transaction: validated ``content`` (None: the
    text stays) with its ``vector``, and validated ``metadata`` (None: it stays). New text takes the
    chunk's merged wordings with the old one (``Store.update_content``)."""
    if content is not None:
        key = chunk.metadata.get(ITEM_KEY) if chunk.kind == "memory" else None
        digest = key_hash(key) if key is not None else content_hash(content)
        if not store.update_content(chunk.id, content, digest, vector, now):
            raise NotFound(f"no memory {chunk.id} for agent {store.agent_id!r}")
    if metadata is not None and _json(metadata) != _json(chunk.metadata):  # the same again: nothing to scrub
        store.update_metadata(chunk.id, metadata)


def _json(metadata: Mapping[str, Any]) -> str:
    """Metadata as it is stored, compared by its JSON (``True == 1`` in Python, not in JSON)."""
    return json.dumps(metadata, ensure_ascii=False, sort_keys=True)


def erase_agent(store: "AgentStore") -> Erased:
    """Every memory, fact and block of one agent, hard-deleted; other agents are untouched."""
    counts = store.delete_agent()
    note = store.database.pending_scrub()
    return Erased(agent_id=store.agent_id, memories=counts["memories"], facts=counts["facts"], blocks=counts["blocks"],
                  short_term=counts["short_term"], scrubbed=note is None, note=note)


def split_fact(store: "AgentStore", embedding: "EmbeddingService", fact: Chunk, wording: str, *,
               max_chars: int) -> Chunk:
    """Make a wording that recognition merged into ``fact`` a fact of its own again, in one transaction:
    embedded, with the intensity it was said with, learned when it was merged, with the metadata, source,
    session and ``observed_at`` of the call that said it (kept since migration 0023). It leaves ``fact``'s
    merged wordings, and ``fact`` gives back the strength the merge added (one encounter, its share of
    the running intensity, one access). ``wording`` is matched up to case, spacing and final punctuation."""
    from ulid import ULID  # here: importing it loads importlib.metadata, 20 ms a recall never needs

    if fact.kind != "fact":
        raise InvalidInput(f"{fact.id} is a memory, not a fact: only facts hold merged wordings")
    wording = v.check_text(wording, "wording", max_chars=max_chars)
    merged = _merged(store, fact, wording)
    vector = embedding.windows([merged.content])[0]
    with store.transaction():
        # Read both again under the write lock: another writer may have split or deleted them meanwhile.
        current = store.get_chunks([fact.id])
        if not current or merged.id not in {m.id for m in store.merged_wordings([fact.id])}:
            raise Conflict(f"“{merged.content}” was split from fact {fact.id} or deleted meanwhile")
        chunk = Chunk(id=str(ULID()), agent_id=store.agent_id, content=merged.content, kind="fact",
                      metadata=merged.metadata, running_intensity=merged.intensity, encounter_count=1,
                      access_count=0, last_accessed_at=merged.merged_at, created_at=merged.merged_at,
                      observed_at=merged.observed_at, content_hash=content_hash(merged.content),
                      has_vector=vector is not None, source=merged.source or fact.source or "extraction",
                      session_id=merged.session_id)
        store.insert_chunks([chunk], [vector])
        store.remove_merged([merged.id])
        store.update_strength([_unmerged(current[0], merged.intensity)])
    return chunk


def _merged(store: "AgentStore", fact: Chunk, wording: str) -> MergedWording:
    """The wording merged into ``fact`` that reads as ``wording``, or a typed error naming the ones it has."""
    held = store.merged_wordings([fact.id])
    for merged in held:
        if same_words(merged.content, wording):
            return merged
    known = "; ".join(f"“{m.content}”" for m in held[:5]) + ("; ..." if len(held) > 5 else "")
    raise InvalidInput(f"“{wording}” was not merged into fact {fact.id}: "
                       + (f"its merged wordings are {known}" if held else "no wording was merged into it"))


def _unmerged(fact: Chunk, intensity: float) -> StrengthUpdate:
    """``fact``'s strength without one merge of ``intensity`` (the inverse of ``reinforced_intensity``)."""
    n = fact.encounter_count
    running = fact.running_intensity if n <= 1 else (fact.running_intensity * n - intensity) / (n - 1)
    return StrengthUpdate(fact.id, min(max(running, 0.0), 1.0), max(n - 1, 1), max(fact.access_count - 1, 0),
                          fact.last_accessed_at)
