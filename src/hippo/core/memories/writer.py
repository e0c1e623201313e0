"""The one writer of raw memories: check each input, deduplicate by hash, embed once, then insert
the new and strengthen the known (reinforcement) in one transaction.

Every path that stores a raw memory goes through :func:`write`: ``store_memory``, the importers,
capture and compaction. Provenance (``source``, ``session_id``) is set when a memory is
first stored; storing the same text again strengthens it and keeps where it first came from.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable, Mapping, NamedTuple

from hippo.core import validation as v
from hippo.core.facts.offline import non_latin_share
from hippo.core.hashing import content_hash
from hippo.core.memories.edits import ITEM_KEY
from hippo.core.ports import ChunkFilter, SearchQuery, StrengthUpdate
from hippo.core.strength import reinforced_intensity
from hippo.errors import InvalidInput
from hippo.types import Chunk, StoreResult

if TYPE_CHECKING:
    from hippo.core.embedding import EmbeddingService
    from hippo.core.ports.scoped import AgentStore

__all__ = ["ANSWERS", "SOURCE_IDS", "SOURCE_PATTERN", "Checked", "MemoryInput", "Prepared", "apply", "check", "prepare",
           "write"]

SOURCE_PATTERN = r"^[a-z][a-z0-9_-]{0,31}$"
SOURCE_IDS = "_source_ids"  # metadata: the ids of the messages a captured memory came from
ANSWERS = "_answers"  # metadata: the id of the message a captured answer or decision answered


@dataclass(frozen=True, slots=True)
class MemoryInput:
    """One item of :meth:`Memory.store_memories`. ``source`` is its provenance (agent,
    extraction, conversation, migration, compaction, or a word of your own); ``session_id`` the
    session it came from."""

    content: str
    metadata: Mapping[str, Any] | None = None
    intensity: float = 0.5
    observed_at: datetime | str | None = None
    source: str | None = None
    session_id: str | None = None


class Checked(NamedTuple):
    content: str
    digest: str
    metadata: dict[str, Any]
    intensity: float
    observed_at: datetime | None
    source: str
    session_id: str | None


def check(item: MemoryInput | str, *, max_chars: int, source: str = "agent") -> Checked:
    """A validated input (InvalidInput otherwise); ``source`` when the item names none."""
    if isinstance(item, str):
        item = MemoryInput(item)
    elif not isinstance(item, MemoryInput):
        raise InvalidInput(f"expected a string or MemoryInput, got {type(item).__name__}")
    content = v.check_text(item.content, "content", max_chars=max_chars)
    return Checked(content, content_hash(content), v.check_metadata(item.metadata), v.check_intensity(item.intensity),
                   v.check_datetime(item.observed_at, "observed_at"),
                   v.check_source(item.source if item.source is not None else source),
                   v.check_session_id(item.session_id))


def write(store: "AgentStore", embedding: "EmbeddingService", inputs: list[Checked],
          clock: Callable[[], datetime], *, merge_near: bool = False) -> list[StoreResult]:
    """Store checked inputs with one embedding call and one transaction. With ``merge_near``, a
    memory nearly the same as a stored one (cosine at least the embedder's duplicate band) strengthens
    it instead of being added, as a verbatim one does."""
    if not inputs:
        return []
    prepared = prepare(store, embedding, inputs, merge_near=merge_near)
    return apply(store, prepared, clock())


@dataclass(frozen=True, slots=True)
class Prepared:
    """What :func:`prepare` decides before the write transaction: the vectors of the texts not held
    (each text's windows, ``(windows, dimension)``: a long text has several), and ``near`` (digest ->
    the id of the stored memory each input nearly repeats)."""

    inputs: list[Checked]
    vectors: dict[str, Any]
    near: dict[str, str]
    embeds: bool  # keyword-only memory has no vector to wait for


def prepare(store: "AgentStore", embedding: "EmbeddingService", inputs: list[Checked], *,
            merge_near: bool = False) -> Prepared:
    """The model's part of a write (the embedding, the near-duplicate searches), outside any
    transaction: it takes seconds on a local model, and a write lock held that long stops every
    other writer (issue 32: ``observe`` in another process got ``database is locked``)."""
    known = store.memories_by_hash([item.digest for item in inputs]) if inputs else {}
    to_embed = list(dict.fromkeys(i.content for i in inputs if i.digest not in known or not known[i.digest].has_vector))
    vectors = dict(zip(to_embed, embedding.windows(to_embed)))
    near = _near_twins(store, embedding, inputs, known, vectors) if merge_near else {}
    return Prepared(inputs, vectors, near, embedding.embedder is not None)


def apply(store: "AgentStore", prepared: Prepared, now: datetime) -> list[StoreResult]:
    """Write what :func:`prepare` decided in one transaction (the caller's, when the writes must
    commit with more). Only bounded reads by hash and id happen in it, to check again what may have
    changed since :func:`prepare` looked."""
    if not prepared.inputs:
        return []
    with store.transaction():
        # Read again under the write lock: another writer may have stored the same text, or
        # deleted, superseded or keyed the near twin found before the transaction.
        known = store.memories_by_hash([item.digest for item in prepared.inputs])
        twins = {c.id: c for c in store.get_chunks(list(set(prepared.near.values())))}
        for digest, twin_id in prepared.near.items():
            if digest not in known and twin_id in twins and _plain(twins[twin_id]):
                known[digest] = twins[twin_id]
        return [_write_one(store, known, now, prepared.vectors.get(item.content), item, prepared.embeds)
                for item in prepared.inputs]


def _plain(chunk: Chunk) -> bool:
    """A memory a near twin may strengthen: not a fact, a key's memory or a superseded chunk."""
    return chunk.kind == "memory" and chunk.superseded_by is None and ITEM_KEY not in chunk.metadata


def _near_twins(store: "AgentStore", embedding: "EmbeddingService", inputs: list[Checked],
                known: dict[str, Chunk], vectors: dict[str, Any]) -> dict[str, str]:
    """digest -> id of the stored memory each new input nearly repeats (capture's dedup, at the
    embedder's duplicate band; a model that cannot read the script merges nothing). Only a plain
    memory may be strengthened: not a fact, a key's memory or a superseded chunk. The searches are
    unfiltered (a filtered one costs more) and the few nearest are checked afterwards."""
    thresholds = embedding.thresholds
    nearest: dict[str, list[tuple[str, float]]] = {}
    for item in inputs:
        windows = vectors.get(item.content)
        if item.digest in known or item.digest in nearest or windows is None:
            continue
        if thresholds.latin_only and non_latin_share(item.content) > 0.5:
            continue
        # The whole text's own vector: a near twin is the same text, not one that holds a part of it.
        found = store.search(SearchQuery(windows[0], (), ChunkFilter(), 3, score_all=False,
                                                   near_duplicates=True))
        close = [(i, sim) for i, sim in found.similarity.items() if sim >= thresholds.duplicate]
        if close:
            nearest[item.digest] = sorted(close, key=lambda pair: -pair[1])
    held = {c.id: c for c in store.get_chunks(list({i for pairs in nearest.values() for i, _ in pairs}))}
    plain = {i for i, c in held.items() if _plain(c)}
    return {digest: next(i for i, _ in pairs if i in plain) for digest, pairs in nearest.items()
            if any(i in plain for i, _ in pairs)}


def _write_one(store: "AgentStore", known: dict[str, Chunk], now: datetime, vector: Any,
               item: Checked, embeds: bool) -> StoreResult:
    from ulid import ULID  # here: importing it loads importlib.metadata, 20 ms a recall never needs

    existing = known.get(item.digest)
    if existing is not None:
        update = StrengthUpdate(
            existing.id, reinforced_intensity(existing.running_intensity, existing.encounter_count, item.intensity),
            existing.encounter_count + 1, existing.access_count + 1, now,
        )
        store.update_strength([update])
        if not existing.has_vector and vector is not None:
            store.set_vectors({existing.id: vector})
        metadata = _with_sources(existing.metadata, item.metadata)
        if metadata is not existing.metadata:
            store.update_metadata(existing.id, metadata, adds_only=True)  # more sources: nothing removed
        chunk = replace(
            existing, running_intensity=update.running_intensity, encounter_count=update.encounter_count,
            access_count=update.access_count, last_accessed_at=now, metadata=metadata,
            has_vector=existing.has_vector or vector is not None,
        )
        known[item.digest] = chunk
        return StoreResult(chunk.id, "strengthened", chunk, vector_pending=embeds and not chunk.has_vector)
    chunk = Chunk(
        id=str(ULID()), agent_id=store.agent_id, content=item.content, kind="memory", metadata=item.metadata,
        running_intensity=item.intensity, encounter_count=1, access_count=0, last_accessed_at=now, created_at=now,
        observed_at=item.observed_at, content_hash=item.digest, has_vector=vector is not None, source=item.source,
        session_id=item.session_id,
    )
    store.insert_chunks([chunk], [vector])
    known[item.digest] = chunk
    return StoreResult(chunk.id, "inserted", chunk, vector_pending=embeds and vector is None)


def _with_sources(held: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """A strengthened memory also comes from the new input's source messages (capture's
    ``source_ids``): the union, in order; the held metadata itself when nothing is added."""
    added = [i for i in new.get(SOURCE_IDS) or () if i not in (held.get(SOURCE_IDS) or ())]
    return {**held, SOURCE_IDS: [*(held.get(SOURCE_IDS) or ()), *added]} if added else held
