"""Reading an export: every record checked, before anything is written, into an ``ImportPlan``."""

from __future__ import annotations

import base64
import binascii
import math
from datetime import datetime
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping

from hippo.core import validation as v
from hippo.core.hashing import content_hash
from hippo.core.transfer.merged import parse_merged
from hippo.core.transfer.records import FORMAT, VERSION, HeaderRecord, ImportPlan
from hippo.errors import InvalidInput
from hippo.types import Block, Chunk

if TYPE_CHECKING:
    import numpy as np

__all__ = ["parse_records"]


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
    merge_ids: set[str] = set()
    keys: set[str] = set()
    for number, record in enumerate(it, start=2):
        try:
            v.check_json_value(record, "the record")
            kind = record.get("type") if isinstance(record, Mapping) else None
            if kind == "chunk":
                _add_chunk(plan, record, agent_id, max_chars, ids, merge_ids)
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


def _add_chunk(plan: ImportPlan, record: Mapping[str, Any], agent_id: str, max_chars: int,
               ids: set[str], merge_ids: set[str]) -> None:
    chunk, vector = _chunk(record, agent_id, plan.header, max_chars)
    if chunk.id in ids:
        raise InvalidInput(f"chunk id {chunk.id} appears twice")
    merged = parse_merged(record.get("merged"), chunk, max_chars=max_chars)
    for wording in merged:
        if wording.id in merge_ids:
            raise InvalidInput(f"merged wording id {wording.id} appears twice")
        merge_ids.add(wording.id)
    ids.add(chunk.id)
    plan.chunks.append(chunk)
    if vector is not None:
        plan.vectors[chunk.id] = vector
    if merged:
        plan.merged[chunk.id] = merged


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
