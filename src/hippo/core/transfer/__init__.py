"""Export and import of one agent's memory as records: a header, then its chunks and blocks.

Records are JSON-ready dicts (a surface writes one per line: JSON Lines). The
header names the format and version, the agent, and the embedding model the
vectors were made with. A chunk record carries every stored field, strength
included; with vectors, the vector as base64 of little-endian float32; a fact's,
the wordings merged into it (``merged``, see ``transfer/merged.py``). A block
record carries key, value, character limit and last update.

Import validates every record before it writes anything, keeps ids and
strength fields, and is idempotent: a chunk whose id the agent already has is
skipped (its merged wordings with it), as is a memory whose text the agent
already stores; a fact's merged wordings are written in the transaction that
inserts it (chunks go in batches of one transaction each); a block is
written only when the file's version is newer than the agent's. An id that
belongs to another agent of the same database gets a derived id (same time
part, randomness from a hash of the agent and the old id), so importing twice
still finds it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Iterator, Sequence

from hippo.core.transfer.merged import MergedRecord, merged_records, restore_merged
from hippo.core.transfer.reading import parse_records
from hippo.core.transfer.records import (
    FORMAT,
    VERSION,
    BlockRecord,
    ChunkRecord,
    ExportRecord,
    HeaderRecord,
    ImportPlan,
    block_record,
    chunk_record,
    derived_id,
    header_record,
)
from hippo.types import Chunk, ImportResult

if TYPE_CHECKING:
    from hippo.core.embedding import EmbeddingService
    from hippo.core.memories.reembed import Progress
    from hippo.core.ports import Store
    from hippo.core.ports.scoped import AgentStore

__all__ = [
    "FORMAT", "VERSION", "BlockRecord", "ChunkRecord", "ExportRecord", "HeaderRecord", "ImportPlan", "MergedRecord",
    "block_record", "chunk_record", "derived_id", "export_records", "header_record", "parse_records", "run_import",
]


def export_records(store: "AgentStore", vectors: bool, now: datetime,
                   batch_size: int = 500) -> Iterator[ExportRecord]:
    """The header, every chunk (newest first, superseded facts included; a fact with the wordings
    merged into it), then every block."""
    counts = store.counts()
    model = store.database.embedder_record()
    total = counts["facts"] + counts["superseded_facts"] + counts["memories"]
    yield header_record(store.agent_id, model, vectors=vectors, now=now, chunks=total, blocks=counts["blocks"])
    cursor: str | None = None
    while True:
        page = store.list_chunks(limit=batch_size, before=cursor)
        if not page:
            break
        found = store.get_vectors([c.id for c in page]) if vectors and model else {}
        merged = merged_records(store, page)
        for chunk in page:
            yield chunk_record(chunk, found.get(chunk.id), merged.get(chunk.id, ()))
        cursor = page[-1].id
    for block in store.list_blocks():
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


def _owned(store: "AgentStore", ids: Sequence[str]) -> dict[str, bool]:
    found: dict[str, bool] = {}
    for start in range(0, len(ids), 500):
        found.update(store.known_ids(ids[start:start + 500]))
    return found


def run_import(store: "AgentStore", embedding: "EmbeddingService", plan: ImportPlan, *,
               progress: "Progress | None" = None, batch_size: int = 256) -> ImportResult:
    """Write a validated export into the scope's agent: chunks in batches (one transaction each, a fact's
    merged wordings in its batch's), then blocks."""
    if not _file_vectors_usable(plan.header, embedding, store.database):
        plan.vectors.clear()
    referenced = list(dict.fromkeys([c.id for c in plan.chunks] + [c.superseded_by for c in plan.chunks
                                                                    if c.superseded_by]))
    renamed = {i: derived_id(i, store.agent_id) for i, mine in _owned(store, referenced).items() if not mine}
    plan.remap(renamed)
    total, done, counts = len(plan), 0, Counter[str]()
    seen: set[str] = set()  # memory texts written by this import
    if progress:
        progress(0, total)
    for batch in batches(plan.chunks, batch_size):
        counts.update(_import_batch(store, embedding, plan, batch, seen))
        done += len(batch)
        if progress:
            progress(done, total)
    written = 0
    for block in plan.blocks:
        existing = store.get_block(block.key)
        if existing is None or block.updated_at > existing.updated_at:
            store.put_block(block.key, block.value, block.updated_at, char_limit=block.char_limit)
            written += 1
    if progress:
        progress(total, total)
    return ImportResult(agent_id=store.agent_id, source_agent=plan.header["agent_id"], inserted=counts["inserted"],
                        skipped=len(plan.chunks) - counts["inserted"], renamed=counts["renamed"],
                        embedded=counts["embedded"], pending=counts["pending"], blocks_written=written,
                        blocks_skipped=len(plan.blocks) - written, merged=counts["merged"])


def _import_batch(store: "AgentStore", embedding: "EmbeddingService", plan: ImportPlan,
                  batch: Sequence[Chunk], seen: set[str]) -> Counter[str]:
    """Insert the chunks of ``batch`` the agent lacks; embed those without a usable vector from the file."""
    present = _owned(store, [c.id for c in batch])
    hashes = store.memories_by_hash([c.content_hash for c in batch if c.kind == "memory" and c.content_hash])
    new = [c for c in batch if c.id not in present
           and not (c.kind == "memory" and (c.content_hash in hashes or c.content_hash in seen))]
    seen.update(c.content_hash for c in new if c.kind == "memory" and c.content_hash)
    fresh = iter(embedding.windows([c.content for c in new if c.id not in plan.vectors]))
    vectors = [plan.vectors[c.id] if c.id in plan.vectors else next(fresh) for c in new]
    with store.transaction():
        if plan.vectors and new and store.database.embedder_record() is None:
            store.database.set_embedder_record(plan.header["embedder"] or "", plan.header["dimension"])
        store.insert_chunks([replace(c, has_vector=vec is not None) for c, vec in zip(new, vectors)],
                            vectors)
        merged = restore_merged(store, [w for c in new for w in plan.merged.get(c.id, ())], derived_id)
    return Counter(inserted=len(new), renamed=sum(c.id in plan.renamed for c in new), merged=merged,
                   pending=sum(vec is None for vec in vectors),
                   embedded=sum(vec is not None and c.id not in plan.vectors for c, vec in zip(new, vectors)))


def batches(items: Sequence[Chunk], size: int) -> Iterator[Sequence[Chunk]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]
