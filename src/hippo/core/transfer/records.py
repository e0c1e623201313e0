"""The records of an export (see ``hippo.core.transfer``) and the validated plan an import writes."""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, Mapping, Sequence, TypedDict, Union

from hippo.clock import to_iso
from hippo.core.transfer.merged import MergedRecord
from hippo.types import Block, Chunk, MergedWording

if TYPE_CHECKING:
    import numpy as np

__all__ = ["FORMAT", "VERSION", "BlockRecord", "ChunkRecord", "ExportRecord", "HeaderRecord", "ImportPlan",
           "block_record", "chunk_record", "derived_id", "header_record"]

FORMAT = "hippo-export"
VERSION = 1


class HeaderRecord(TypedDict):
    type: Literal["header"]
    format: str
    version: int
    agent_id: str
    embedder: str | None  # the model the vectors were made with, as the database records it
    dimension: int | None
    vectors: bool
    exported_at: str
    chunks: int
    blocks: int


class ChunkRecord(TypedDict, total=False):
    type: Literal["chunk"]
    id: str
    kind: str
    content: str
    metadata: dict[str, Any]
    running_intensity: float
    encounter_count: int
    access_count: int
    last_accessed_at: str
    created_at: str
    observed_at: str | None
    superseded_by: str | None
    content_hash: str | None
    feedback: int  # curation's fields: absent in exports from before them
    reinforced_at: str | None
    source: str | None
    session_id: str | None
    vector: str  # only in exports made with vectors, and only for chunks that have one
    merged: list[MergedRecord]  # only for facts with merged wordings (absent in exports from before them)


class BlockRecord(TypedDict):
    type: Literal["block"]
    key: str
    value: str
    char_limit: int | None
    updated_at: str


ExportRecord = Union[HeaderRecord, ChunkRecord, BlockRecord]


def header_record(agent_id: str, model: tuple[str, int | None] | None, *, vectors: bool, now: datetime,
                  chunks: int, blocks: int) -> HeaderRecord:
    return HeaderRecord(type="header", format=FORMAT, version=VERSION, agent_id=agent_id,
                        embedder=model[0] if model else None, dimension=model[1] if model else None,
                        vectors=vectors and model is not None, exported_at=to_iso(now), chunks=chunks, blocks=blocks)


def chunk_record(chunk: Chunk, vector: "np.ndarray | None" = None,
                 merged: Sequence[MergedRecord] = ()) -> ChunkRecord:
    record = ChunkRecord(
        type="chunk", id=chunk.id, kind=chunk.kind, content=chunk.content, metadata=chunk.metadata,
        running_intensity=chunk.running_intensity, encounter_count=chunk.encounter_count,
        access_count=chunk.access_count, last_accessed_at=to_iso(chunk.last_accessed_at),
        created_at=to_iso(chunk.created_at), observed_at=to_iso(chunk.observed_at) if chunk.observed_at else None,
        superseded_by=chunk.superseded_by, content_hash=chunk.content_hash, feedback=chunk.feedback,
        reinforced_at=to_iso(chunk.reinforced_at) if chunk.reinforced_at else None, source=chunk.source,
        session_id=chunk.session_id,
    )
    if vector is not None:
        import numpy as np

        record["vector"] = base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")
    if merged:
        record["merged"] = list(merged)
    return record


def block_record(block: Block) -> BlockRecord:
    return BlockRecord(type="block", key=block.key, value=block.value, char_limit=block.char_limit,
                       updated_at=to_iso(block.updated_at))


def derived_id(chunk_id: str, agent_id: str) -> str:
    """A stable new id for ``chunk_id`` under ``agent_id``: the same time part, hashed randomness."""
    from ulid import ULID  # here: importing it loads importlib.metadata, 20 ms a recall never needs

    digest = hashlib.blake2b(f"{agent_id}\x00{chunk_id}".encode(), digest_size=10).digest()
    return str(ULID.from_bytes(ULID.from_str(chunk_id).bytes[:6] + digest))


@dataclass(slots=True)
class ImportPlan:
    """A validated export: its header, chunks (with the file's vectors, if any, and the wordings
    merged into its facts, by fact id) and blocks."""

    header: HeaderRecord
    chunks: list[Chunk] = field(default_factory=list)
    vectors: dict[str, "np.ndarray"] = field(default_factory=dict)
    merged: dict[str, list[MergedWording]] = field(default_factory=dict)
    blocks: list[Block] = field(default_factory=list)
    renamed: set[str] = field(default_factory=set)  # the derived ids given by remap

    def __len__(self) -> int:
        return len(self.chunks) + len(self.blocks)

    def remap(self, ids: Mapping[str, str]) -> None:
        """Give chunks new ids (and point ``superseded_by`` at them)."""
        if not ids:
            return
        self.chunks = [replace(c, id=ids.get(c.id, c.id),
                               superseded_by=ids.get(c.superseded_by, c.superseded_by) if c.superseded_by else None)
                       for c in self.chunks]
        self.vectors = {ids.get(k, k): vec for k, vec in self.vectors.items()}
        self.merged = {ids.get(k, k): [replace(w, fact_id=ids.get(k, k)) for w in wordings]
                       for k, wordings in self.merged.items()}
        self.renamed = set(ids.values()) & {c.id for c in self.chunks}
