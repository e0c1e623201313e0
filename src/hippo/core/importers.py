"""Importers from other memory systems (seed 003 "Migration"): ``import_from(path, format=...)``.

Every format becomes raw memories with ``source="migration"`` (blocks stay blocks), written by the
one raw-memory writer. Importing is idempotent: a memory whose text the agent already holds is
skipped, not strengthened, and a block whose text is already there is left alone, so a second run
imports nothing new. ``dry_run`` reads and reports without writing. Whatever cannot be read is
skipped with where and why, never a traceback.

- ``markdown``: a ``MEMORY.md`` file, or a folder with ``MEMORY.md`` and ``memory/*.md``: one
  memory per bullet (with its indented continuation lines) or paragraph; the headings above it
  become tags; fenced code stays whole.
- ``mcp-memory``: the JSON Lines file of the official MCP memory server: one memory per
  observation (``"Name (type): observation"``), one per relation, and a ``relation`` link between
  the two entities' first memories. Malformed lines (two objects on one line, a line cut short by
  concurrent writes) are split or skipped and reported.
- ``mem0``: mem0's ``get_all`` output (``{"results": [...]}`` or a list): ``memory`` as the text,
  ``created_at`` as the time of observation, metadata and categories kept.
- ``letta``: the memory blocks of a Letta agent file (``.af``), as memory blocks with their limits.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

from hippo.core import writer
from hippo.core.hashing import content_hash
from hippo.errors import HippoError, InvalidInput
from hippo.types import ImportReport, Skipped

if TYPE_CHECKING:
    from hippo.core.memory import Memory

__all__ = ["FORMATS", "import_from"]

FORMATS = ("markdown", "mcp-memory", "mem0", "letta")
SOURCE = "migration"


@dataclass
class _Item:
    content: str
    where: str
    tags: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    observed_at: str | None = None


@dataclass
class _Read:
    items: list[_Item] = field(default_factory=list)
    blocks: list[tuple[str, str, int | None]] = field(default_factory=list)  # label, value, limit
    relations: list[tuple[str, str]] = field(default_factory=list)  # entity names to link
    skipped: list[Skipped] = field(default_factory=list)


def import_from(mem: "Memory", path: str | Path, format: str, *, dry_run: bool = False,
                progress: Callable[[int, int], None] | None = None) -> ImportReport:
    if format not in FORMATS:
        raise InvalidInput(f"format must be one of {', '.join(FORMATS)}, got {format!r}")
    source = Path(path)
    if not source.exists():
        raise InvalidInput(f"no such file or folder: {source}")
    read = _READERS[format](source)
    known = mem.store.memories_by_hash(mem.agent_id, [content_hash(i.content) for i in read.items])
    fresh: dict[str, _Item] = {}
    for item in read.items:
        digest = content_hash(item.content)
        if digest in known or digest in fresh:
            read.skipped.append(Skipped(item.where, "already imported (the agent holds this text)"))
        else:
            fresh[digest] = item
    blocks = [(label, value, limit) for label, value, limit in read.blocks
              if mem.recall_memory_block(label) != value]
    read.skipped += [Skipped(f"block {label}", "already there with this text")
                     for label, value, _ in read.blocks if (label, value, _) not in blocks]
    if dry_run:
        return ImportReport(format, len(fresh), len(blocks), 0, read.skipped, dry_run=True)
    ids = _write(mem, list(fresh.values()), progress)
    written = 0
    for label, value, limit in blocks:
        try:
            mem.set_memory_block(label, value, char_limit=limit)
            written += 1
        except HippoError as exc:
            read.skipped.append(Skipped(f"block {label}", str(exc)))
    links = _link(mem, read, dict(zip(fresh, ids)))
    return ImportReport(format, len(ids), written, links, read.skipped)


def _write(mem: "Memory", items: list[_Item], progress: Callable[[int, int], None] | None) -> list[str]:
    ids: list[str] = []
    for start in range(0, len(items), 500):
        batch = [writer.MemoryInput(i.content, {**i.metadata, **({"tags": i.tags} if i.tags else {})},
                                    observed_at=i.observed_at, source=SOURCE) for i in items[start:start + 500]]
        ids += [r.id for r in mem.store_memories(batch)]
        if progress is not None:
            progress(len(ids), len(items))
    return ids


def _link(mem: "Memory", read: _Read, by_digest: dict[str, str]) -> int:
    """mcp-memory relations: a ``relation`` link between the first memories of the two entities."""
    if not read.relations:
        return 0
    first: dict[str, str] = {}
    for item in read.items:
        entity = item.metadata.get("entity")
        chunk_id = by_digest.get(content_hash(item.content))
        if entity and chunk_id and entity not in first:
            first[entity] = chunk_id
    pairs = [(first[a], first[b]) for a, b in read.relations if a in first and b in first and first[a] != first[b]]
    mem.store.strengthen_links(mem.agent_id, pairs, "relation", mem.now())
    return len(pairs)


# -- markdown -------------------------------------------------------------------------------------

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^(\s*)(?:[-*+]|\d+[.)])\s+(.*)$")


def _markdown(path: Path) -> _Read:
    files = [path] if path.is_file() else sorted([*path.glob("MEMORY.md"), *path.glob("memory/*.md")])
    read = _Read()
    if not files:
        read.skipped.append(Skipped(str(path), "no MEMORY.md or memory/*.md here"))
    for file in files:
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            read.skipped.append(Skipped(str(file), f"cannot be read: {exc}"))
            continue
        name = file.name if path.is_file() else str(file.relative_to(path))
        read.items += [_Item(c, f"{name}:{line}", tags, {"file": name}) for c, line, tags in _notes(text)]
    return read


def _tag(heading: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", heading.lower()).strip("-")[:64]


def _notes(text: str) -> Iterator[tuple[str, int, list[str]]]:
    """(text, first line, heading tags) of each bullet and paragraph."""
    headings: list[str] = []
    current: list[str] = []
    start, fenced = 0, False

    def flush() -> Iterator[tuple[str, int, list[str]]]:
        content = "\n".join(current).strip()
        if content:
            yield content, start, [t for t in headings if t]
        current.clear()

    for number, line in enumerate(text.splitlines(), 1):
        if line.strip().startswith("```"):
            if not fenced:
                yield from flush()
                start = number
            fenced = not fenced
            current.append(line)
            continue
        if fenced:
            current.append(line)
            continue
        heading, bullet = _HEADING.match(line), _BULLET.match(line)
        if heading:
            yield from flush()
            level = len(heading.group(1))
            headings = [*headings[:level - 1], *[""] * max(0, level - 1 - len(headings)), _tag(heading.group(2))]
        elif bullet and not bullet.group(1):
            yield from flush()
            start = number
            current.append(bullet.group(2))
        elif not line.strip():
            if current and not _BULLET.match(current[0] if current else ""):
                yield from flush()
        else:
            if not current:
                start = number
            current.append(line.strip())
    yield from flush()


# -- mcp-memory -----------------------------------------------------------------------------------

def _json_objects(line: str) -> list[Any]:
    """The JSON values on one line: usually one; two or more when concurrent writers joined them."""
    decoder, found, at = json.JSONDecoder(), [], 0
    while at < len(line):
        while at < len(line) and line[at].isspace():
            at += 1
        if at >= len(line):
            break
        value, at = decoder.raw_decode(line, at)
        found.append(value)
    return found


def _mcp_memory(path: Path) -> _Read:
    read = _Read()
    for number, line in enumerate(_lines(path, read), 1):
        if not line.strip():
            continue
        try:
            values = _json_objects(line)
        except json.JSONDecodeError as exc:
            read.skipped.append(Skipped(f"line {number}", f"not JSON ({exc.msg}): a line cut short?"))
            continue
        for value in values:
            _mcp_value(value, f"line {number}", read)
    return read


def _mcp_value(value: Any, where: str, read: _Read) -> None:
    if not isinstance(value, dict):
        read.skipped.append(Skipped(where, "not a JSON object"))
    elif value.get("type") == "entity" and isinstance(value.get("name"), str):
        name, kind = value["name"], value.get("entityType")
        label = name.replace("_", " ") + (f" ({kind})" if isinstance(kind, str) and kind else "")
        observations = value.get("observations") or []
        for observation in observations if isinstance(observations, list) else []:
            if isinstance(observation, str) and observation.strip():
                read.items.append(_Item(f"{label}: {observation.strip()}", where,
                                        [_tag(kind)] if isinstance(kind, str) and kind else [], {"entity": name}))
    elif value.get("type") == "relation" and all(isinstance(value.get(k), str) for k in ("from", "to", "relationType")):
        a, b, kind = value["from"], value["to"], value["relationType"]
        read.items.append(_Item(f"{a.replace('_', ' ')} {kind.replace('_', ' ')} {b.replace('_', ' ')}", where,
                                ["relation"], {"relation": kind}))
        read.relations.append((a, b))
    else:
        read.skipped.append(Skipped(where, "neither an entity nor a relation"))


def _lines(path: Path, read: _Read) -> list[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as exc:
        read.skipped.append(Skipped(str(path), f"cannot be read: {exc}"))
        return []


# -- mem0 and letta -------------------------------------------------------------------------------

def _load_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InvalidInput(f"{path} is not a JSON file: {exc}") from None


def _mem0(path: Path) -> _Read:
    data = _load_json(path)
    rows = data.get("results", data.get("memories")) if isinstance(data, dict) else data
    read = _Read()
    if not isinstance(rows, list):
        raise InvalidInput(f"{path}: expected mem0's get_all output ({{\"results\": [...]}} or a list)")
    for number, row in enumerate(rows):
        text = row.get("memory") if isinstance(row, dict) else None
        if not isinstance(text, str) or not text.strip():
            read.skipped.append(Skipped(f"results[{number}]", "no memory text"))
            continue
        meta = row.get("metadata") if isinstance(row.get("metadata"), dict) else {}
        extra = {k: row[k] for k in ("id", "user_id", "agent_id", "run_id") if isinstance(row.get(k), str)}
        categories = row.get("categories") if isinstance(row.get("categories"), list) else []
        when = row.get("created_at") if isinstance(row.get("created_at"), str) else None
        read.items.append(_Item(text.strip(), f"results[{number}]", [_tag(c) for c in categories if isinstance(c, str)],
                                {**meta, **{f"mem0_{k}": v for k, v in extra.items()}}, when))
    return read


def _letta(path: Path) -> _Read:
    data = _load_json(path)
    read = _Read()
    if not isinstance(data, dict):
        raise InvalidInput(f"{path}: expected a Letta agent file (a JSON object)")
    agents: list[Any] = data["agents"] if isinstance(data.get("agents"), list) else [data]
    candidates: list[Any] = list(data.get("blocks") or [])
    for agent in agents:
        if isinstance(agent, dict):
            candidates += agent.get("core_memory") or agent.get("memory_blocks") or []
            memory = agent.get("memory")
            candidates += (memory.get("blocks") or []) if isinstance(memory, dict) else []
    seen: set[str] = set()
    for number, block in enumerate(candidates):
        label = block.get("label") if isinstance(block, dict) else None
        value = block.get("value") if isinstance(block, dict) else None
        if not isinstance(label, str) or not isinstance(value, str):
            read.skipped.append(Skipped(f"block {number}", "no label or value"))
        elif label not in seen:
            seen.add(label)
            limit = block.get("limit")
            read.blocks.append((_block_key(label), value, limit if isinstance(limit, int) and limit > 0 else None))
    return read


def _block_key(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", label)[:64] or "block"


_READERS: dict[str, Callable[[Path], _Read]] = {"markdown": _markdown, "mcp-memory": _mcp_memory, "mem0": _mem0,
                                                "letta": _letta}
