"""Merged wordings in an export: what recognition merged into each fact as a duplicate.

A fact's chunk record lists them under ``merged``, oldest first, each with its ``id``, ``content``,
``merged_at``, ``similarity`` (the two texts' cosine, or null), ``intensity``, and the ``metadata``,
``source``, ``session_id`` and ``observed_at`` of the call that said it: every column the database
keeps (``MergedWording``). A fact without merged wordings has no ``merged`` field, so an export
without any reads as before, and a file from before merged wordings imports unchanged; an entry
without the four provenance fields (an export from before they were kept) reads them as empty.

Import restores a fact's wordings only with the fact itself, in the transaction that inserts it: a
fact the agent already has is skipped whole (a wording split from it since stays split). A wording
id another agent of the database holds gets a derived id, as a chunk's does; one already there under
that derived id is not written twice.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence, TypedDict

from hippo.clock import to_iso
from hippo.core import validation as v
from hippo.errors import InvalidInput
from hippo.types import Chunk, MergedWording

if TYPE_CHECKING:
    from hippo.core.ports.scoped import AgentStore

__all__ = ["MergedRecord", "merged_records", "parse_merged", "restore_merged"]

_PAGE = 500  # ids per lookup: far under SQLite's bound-parameter limit


class MergedRecord(TypedDict):
    id: str
    content: str
    merged_at: str
    similarity: float | None
    intensity: float
    metadata: dict[str, Any]
    source: str | None
    session_id: str | None
    observed_at: str | None


def merged_records(store: "AgentStore", chunks: Sequence[Chunk]) -> dict[str, list[MergedRecord]]:
    """The wordings merged into the facts among ``chunks``, as records, by fact id (oldest first)."""
    found: dict[str, list[MergedRecord]] = defaultdict(list)
    facts = [c.id for c in chunks if c.kind == "fact"]
    for start in range(0, len(facts), _PAGE):
        for w in store.merged_wordings(facts[start:start + _PAGE]):
            found[w.fact_id].append(MergedRecord(
                id=w.id, content=w.content, merged_at=to_iso(w.merged_at), similarity=w.similarity,
                intensity=w.intensity, metadata=w.metadata, source=w.source, session_id=w.session_id,
                observed_at=to_iso(w.observed_at) if w.observed_at else None))
    return found


def parse_merged(value: Any, fact: Chunk, *, max_chars: int) -> list[MergedWording]:
    """A chunk record's ``merged`` list, checked: absent or null reads as none; only a fact holds any."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise InvalidInput(f"merged must be a list of merged wordings, got {v.shown(value)}")
    if value and fact.kind != "fact":
        raise InvalidInput("merged: only facts hold merged wordings, this chunk is a memory")
    wordings: list[MergedWording] = []
    for index, entry in enumerate(value):
        try:
            wordings.append(_wording(entry, fact.id, max_chars))
        except InvalidInput as exc:
            raise InvalidInput(f"merged[{index}]: {exc.message}") from None
    return wordings


def _wording(entry: Any, fact_id: str, max_chars: int) -> MergedWording:
    if not isinstance(entry, Mapping):
        raise InvalidInput(f"a merged wording must be an object, got {v.shown(entry)}")
    merged_at = v.check_datetime(entry.get("merged_at"), "merged_at")
    if merged_at is None:
        raise InvalidInput("merged_at is missing")
    try:
        wording_id = v.check_chunk_id(entry.get("id"))
    except InvalidInput:
        raise InvalidInput(f"id must be a 26-character ULID, got {v.shown(entry.get('id'))}") from None
    return MergedWording(id=wording_id, fact_id=fact_id,
                         content=v.check_text(entry.get("content"), "content", max_chars=max_chars),
                         merged_at=merged_at, similarity=_similarity(entry.get("similarity")),
                         intensity=v.check_intensity(entry.get("intensity")),
                         metadata=v.check_metadata(entry.get("metadata")),
                         source=v.check_source(entry["source"]) if entry.get("source") is not None else None,
                         session_id=v.check_session_id(entry.get("session_id")),
                         observed_at=v.check_datetime(entry.get("observed_at"), "observed_at"))


def _similarity(value: Any) -> float | None:
    """A cosine or null; float32 arithmetic may put a cosine a hair past 1."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or abs(value) > 1 + 1e-6:
        raise InvalidInput(f"similarity must be a number from -1 to 1 or null, got {v.shown(value)}")
    return float(value)


def restore_merged(store: "AgentStore", wordings: Sequence[MergedWording],
                   derive: Callable[[str, str], str]) -> int:
    """Keep ``wordings`` (their facts just inserted), inside the caller's transaction; returns how
    many were written. A taken id gets ``derive(id, agent_id)``; one taken under that too is skipped."""
    if not wordings:
        return 0
    taken = _known(store, [w.id for w in wordings])
    renamed = [replace(w, id=derive(w.id, store.agent_id)) for w in wordings if w.id in taken]
    again = _known(store, [w.id for w in renamed])
    fresh = [w for w in wordings if w.id not in taken] + [w for w in renamed if w.id not in again]
    store.add_merged(fresh)
    return len(fresh)


def _known(store: "AgentStore", ids: Sequence[str]) -> set[str]:
    found: set[str] = set()
    for start in range(0, len(ids), _PAGE):
        found.update(store.known_merge_ids(ids[start:start + _PAGE]))
    return found
