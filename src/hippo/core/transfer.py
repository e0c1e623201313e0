"""Export and import of one agent's memory as records: a header, then its chunks and blocks.

Records are JSON-ready dicts (a surface writes one per line: JSON Lines). The
header names the format and version, the agent, and the embedding model the
vectors were made with. A chunk record carries every stored field, strength
included; with vectors, the vector as base64 of little-endian float32. A block
record carries key, value, character limit and last update.

Import validates every record before it writes anything, keeps ids and
strength fields, and is idempotent: a chunk whose id the agent already has is
skipped, as is a memory whose text the agent already stores; a block is
written only when the file's version is newer than the agent's. An id that
belongs to another agent of the same database gets a derived id (same time
part, randomness from a hash of the agent and the old id), so importing twice
still finds it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import math
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Literal, Mapping, Sequence, TypedDict, Union

from ulid import ULID

from hippo.clock import to_iso
from hippo.core import validation as v
from hippo.core.hashing import content_hash
from hippo.errors import InvalidInput
from hippo.types import Block, Chunk, ImportResult

if TYPE_CHECKING:
    import numpy as np

    from hippo.core.embedding import EmbeddingService
    from hippo.core.reembed import Progress
    from hippo.stores.base import Store

__all__ = [
    "FORMAT", "VERSION", "BlockRecord", "ChunkRecord", "ExportRecord", "HeaderRecord", "ImportPlan",
    "block_record", "chunk_record", "derived_id", "export_records", "header_record", "parse_records", "run_import",
]

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
    feedback: int  # seed 003's curation fields: absent in exports from before them
    reinforced_at: str | None
    source: str | None
    session_id: str | None
    vector: str  # only in exports made with vectors, and only for chunks that have one


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


def chunk_record(chunk: Chunk, vector: "np.ndarray | None" = None) -> ChunkRecord:
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
    return record


def block_record(block: Block) -> BlockRecord:
    return BlockRecord(type="block", key=block.key, value=block.value, char_limit=block.char_limit,
                       updated_at=to_iso(block.updated_at))


def derived_id(chunk_id: str, agent_id: str) -> str:
    """A stable new id for ``chunk_id`` under ``agent_id``: the same time part, hashed randomness."""
    digest = hashlib.blake2b(f"{agent_id}\x00{chunk_id}".encode(), digest_size=10).digest()
    return str(ULID.from_bytes(ULID.from_str(chunk_id).bytes[:6] + digest))


@dataclass(slots=True)
class ImportPlan:
    """A validated export: its header, chunks (with the file's vectors, if any) and blocks."""

    header: HeaderRecord
    chunks: list[Chunk] = field(default_factory=list)
    vectors: dict[str, "np.ndarray"] = field(default_factory=dict)
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
        self.renamed = set(ids.values()) & {c.id for c in self.chunks}


def parse_records(records: Iterable[Mapping[str, Any]], agent_id: str, *, max_chars: int) -> ImportPlan:
    """Validate a whole export for ``agent_id``; the first problem raises InvalidInput naming its record."""
    if isinstance(records, (str, bytes, Mapping)) or not isinstance(records, Iterable):
        raise InvalidInput(f"an import takes a list of records (dicts), got {type(records).__name__}")
    it: Iterator[Mapping[str, Any]] = iter(records)
    first = next(it, None)
    if first is None:
        raise InvalidInput("the export is empty: expected a header record first")
    plan = ImportPlan(_header(first))
    ids: set[str] = set()
    keys: set[str] = set()
    for number, record in enumerate(it, start=2):
        try:
            v.check_json_value(record, "the record")
            kind = record.get("type") if isinstance(record, Mapping) else None
            if kind == "chunk":
                chunk, vector = _chunk(record, agent_id, plan.header, max_chars)
                if chunk.id in ids:
                    raise InvalidInput(f"chunk id {chunk.id} appears twice")
                ids.add(chunk.id)
                plan.chunks.append(chunk)
                if vector is not None:
                    plan.vectors[chunk.id] = vector
            elif kind == "block":
                block = _block(record, max_chars)
                if block.key in keys:
                    raise InvalidInput(f"block {block.key!r} appears twice")
                keys.add(block.key)
                plan.blocks.append(block)
            else:
                raise InvalidInput(f"expected a record of type 'chunk' or 'block', got {v.shown(kind)}")
        except InvalidInput as exc:
            raise InvalidInput(f"record {number}: {exc.message}") from None
    return plan


def _header(record: Any) -> HeaderRecord:
    if not isinstance(record, Mapping) or record.get("type") != "header" or record.get("format") != FORMAT:
        raise InvalidInput(f"record 1: not a hippo export (expected a header with format {FORMAT!r})")
    version = record.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise InvalidInput(f"record 1: invalid export version {v.shown(version)}")
    if version > VERSION:
        raise InvalidInput(f"record 1: export version {version} is newer than this hippo reads ({VERSION})")
    embedder, dimension = record.get("embedder"), record.get("dimension")
    if embedder is not None and not isinstance(embedder, str):
        raise InvalidInput("record 1: 'embedder' must be a model id or null")
    if dimension is not None and (not isinstance(dimension, int) or isinstance(dimension, bool) or dimension < 1):
        raise InvalidInput("record 1: 'dimension' must be a positive integer or null")
    return HeaderRecord(type="header", format=FORMAT, version=version,
                        agent_id=str(record.get("agent_id", "")), embedder=embedder, dimension=dimension,
                        vectors=bool(record.get("vectors")) and embedder is not None and dimension is not None,
                        exported_at=str(record.get("exported_at", "")), chunks=_informative(record, "chunks"),
                        blocks=_informative(record, "blocks"))


def _informative(record: Mapping[str, Any], name: str) -> int:
    """A count the header gives for information only (progress); anything odd reads as 0."""
    value = record.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _required_datetime(record: Mapping[str, Any], name: str) -> datetime:
    value = v.check_datetime(record.get(name), name)
    if value is None:
        raise InvalidInput(f"{name} is missing")
    return value


def _count(record: Mapping[str, Any], name: str, least: int) -> int:
    value = record.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise InvalidInput(f"{name} must be an integer of at least {least}, got {v.shown(value)}")
    return value


def _feedback(record: Mapping[str, Any]) -> int:
    value = record.get("feedback", 0)
    if isinstance(value, bool) or not isinstance(value, int) or abs(value) > 10**9:
        raise InvalidInput(f"feedback must be a whole number, got {v.shown(value)}")
    return value


def _chunk(record: Mapping[str, Any], agent_id: str, header: HeaderRecord,
           max_chars: int) -> tuple[Chunk, "np.ndarray | None"]:
    chunk_id = v.check_chunk_id(record.get("id"))
    kind = record.get("kind")
    if kind not in ("fact", "memory"):
        raise InvalidInput(f"kind must be 'fact' or 'memory', got {v.shown(kind)}")
    content = v.check_text(record.get("content"), "content", max_chars=max_chars)
    superseded_by = record.get("superseded_by")
    if superseded_by is not None:
        superseded_by = v.check_chunk_id(superseded_by)
    chunk = Chunk(
        id=chunk_id, agent_id=agent_id, content=content, kind=kind, metadata=v.check_metadata(record.get("metadata")),
        running_intensity=v.check_intensity(record.get("running_intensity"), "running_intensity"),
        encounter_count=_count(record, "encounter_count", 1), access_count=_count(record, "access_count", 0),
        last_accessed_at=_required_datetime(record, "last_accessed_at"),
        created_at=_required_datetime(record, "created_at"),
        observed_at=v.check_datetime(record.get("observed_at"), "observed_at"), superseded_by=superseded_by,
        # Recomputed, not trusted: deduplication relies on it matching the text.
        content_hash=content_hash(content), has_vector=False, feedback=_feedback(record),
        reinforced_at=v.check_datetime(record.get("reinforced_at"), "reinforced_at"),
        source=v.check_source(record["source"]) if record.get("source") is not None else None,
        session_id=v.check_session_id(record.get("session_id")),
    )
    encoded = record.get("vector")
    if encoded is None or not header["vectors"]:
        return chunk, None
    return chunk, _vector(encoded, header["dimension"])


def _vector(encoded: Any, dimension: int | None) -> "np.ndarray":
    import numpy as np

    try:
        raw = base64.b64decode(encoded, validate=True) if isinstance(encoded, str) else None
    except (binascii.Error, ValueError):
        raw = None
    if raw is None or len(raw) % 4:
        raise InvalidInput("vector must be base64 of little-endian float32 values")
    vector = np.frombuffer(raw, dtype="<f4").astype(np.float32)
    if len(vector) != dimension:
        raise InvalidInput(f"vector has {len(vector)} dimensions; the header says {dimension}")
    norm = float(np.linalg.norm(vector))
    if not math.isfinite(norm) or norm == 0.0:
        raise InvalidInput("vector is zero or not finite")
    # Stored vectors are unit length already; leave them bit for bit unless someone edited them.
    return vector if abs(norm - 1.0) < 1e-4 else (vector / norm).astype(np.float32)


def _block(record: Mapping[str, Any], max_chars: int) -> Block:
    key = v.check_block_key(record.get("key"))
    value = v.check_text(record.get("value"), "value", max_chars=max_chars, allow_empty=True)
    char_limit = record.get("char_limit")
    if char_limit is not None:
        if isinstance(char_limit, bool) or not isinstance(char_limit, int) or char_limit < 1:
            raise InvalidInput(f"char_limit must be a positive integer or null, got {v.shown(char_limit)}")
        if len(value) > char_limit:
            raise InvalidInput(f"block {key!r} is {len(value)} characters; its limit is {char_limit}")
    return Block(key, value, _required_datetime(record, "updated_at"), char_limit)


def export_records(store: "Store", agent_id: str, *, vectors: bool, now: datetime,
                   batch_size: int = 500) -> Iterator[ExportRecord]:
    """The header, every chunk (newest first, superseded facts included), then every block."""
    counts = store.counts(agent_id)
    model = store.embedder_record()
    total = counts["facts"] + counts["superseded_facts"] + counts["memories"]
    yield header_record(agent_id, model, vectors=vectors, now=now, chunks=total, blocks=counts["blocks"])
    cursor: str | None = None
    while True:
        page = store.list_chunks(agent_id, limit=batch_size, before=cursor)
        if not page:
            break
        found = store.get_vectors(agent_id, [c.id for c in page]) if vectors and model else {}
        for chunk in page:
            yield chunk_record(chunk, found.get(chunk.id))
        cursor = page[-1].id
    for block in store.list_blocks(agent_id):
        yield block_record(block)


def _file_vectors_usable(header: HeaderRecord, embedding: "EmbeddingService", store: "Store") -> bool:
    """The file's vectors are kept only when they come from the model this database embeds with."""
    model = embedding.embedder
    if not header["vectors"] or model is None or header["embedder"] != model.model_id:
        return False
    if model.dimension is not None and model.dimension != header["dimension"]:
        return False
    recorded = store.embedder_record()
    return recorded is None or (recorded[0] == model.model_id and recorded[1] in (None, header["dimension"]))


def _owned(store: "Store", agent_id: str, ids: Sequence[str]) -> dict[str, bool]:
    found: dict[str, bool] = {}
    for start in range(0, len(ids), 500):
        found.update(store.known_ids(agent_id, ids[start:start + 500]))
    return found


def run_import(store: "Store", embedding: "EmbeddingService", agent_id: str, plan: ImportPlan, *,
               progress: "Progress | None" = None, batch_size: int = 256) -> ImportResult:
    """Write a validated export into ``agent_id``: chunks in batches (one transaction each), then blocks."""
    if not _file_vectors_usable(plan.header, embedding, store):
        plan.vectors.clear()
    referenced = list(dict.fromkeys([c.id for c in plan.chunks] + [c.superseded_by for c in plan.chunks
                                                                    if c.superseded_by]))
    renamed = {i: derived_id(i, agent_id) for i, mine in _owned(store, agent_id, referenced).items() if not mine}
    plan.remap(renamed)
    total, done, counts = len(plan), 0, Counter[str]()
    seen: set[str] = set()  # memory texts written by this import
    if progress:
        progress(0, total)
    for batch in batches(plan.chunks, batch_size):
        counts.update(_import_batch(store, embedding, agent_id, plan, batch, seen))
        done += len(batch)
        if progress:
            progress(done, total)
    written = 0
    for block in plan.blocks:
        existing = store.get_block(agent_id, block.key)
        if existing is None or block.updated_at > existing.updated_at:
            store.put_block(agent_id, block.key, block.value, block.updated_at, char_limit=block.char_limit)
            written += 1
    if progress:
        progress(total, total)
    return ImportResult(agent_id=agent_id, source_agent=plan.header["agent_id"], inserted=counts["inserted"],
                        skipped=len(plan.chunks) - counts["inserted"], renamed=counts["renamed"],
                        embedded=counts["embedded"], pending=counts["pending"], blocks_written=written,
                        blocks_skipped=len(plan.blocks) - written)


def _import_batch(store: "Store", embedding: "EmbeddingService", agent_id: str, plan: ImportPlan,
                  batch: Sequence[Chunk], seen: set[str]) -> Counter[str]:
    """Insert the chunks of ``batch`` the agent lacks; embed those without a usable vector from the file."""
    present = _owned(store, agent_id, [c.id for c in batch])
    hashes = store.memories_by_hash(agent_id, [c.content_hash for c in batch if c.kind == "memory" and c.content_hash])
    new = [c for c in batch if c.id not in present
           and not (c.kind == "memory" and (c.content_hash in hashes or c.content_hash in seen))]
    seen.update(c.content_hash for c in new if c.kind == "memory" and c.content_hash)
    fresh = iter(embedding.documents([c.content for c in new if c.id not in plan.vectors]))
    vectors = [plan.vectors[c.id] if c.id in plan.vectors else next(fresh) for c in new]
    if plan.vectors and new and store.embedder_record() is None:
        store.set_embedder_record(plan.header["embedder"] or "", plan.header["dimension"])
    store.insert_chunks(agent_id, [replace(c, has_vector=vec is not None) for c, vec in zip(new, vectors)], vectors)
    return Counter(inserted=len(new), renamed=sum(c.id in plan.renamed for c in new),
                   pending=sum(vec is None for vec in vectors),
                   embedded=sum(vec is not None and c.id not in plan.vectors for c, vec in zip(new, vectors)))


def batches(items: Sequence[Chunk], size: int) -> Iterator[Sequence[Chunk]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]
