"""The readers of other memory systems' files. Each turns a file into items (memories to be),
blocks and relations, and reports what it cannot read with where and why; nothing here writes.

Only regular files are read, opened without blocking, so a FIFO or a device named like a note is
refused, never waited on; from a markdown folder only the files inside it (a link out is skipped).
JSON is parsed leniently (:func:`~hippo.core.validation.parse_json_values`): a huge number or a NaN
in one item is that item's problem, found when it is checked, not the file's.

- ``markdown``: a ``MEMORY.md`` file, or a folder with ``MEMORY.md`` and ``memory/*.md``: one
  memory per bullet (with its indented continuation lines) or paragraph; the headings above it
  become tags; fenced code stays whole.
- ``mcp-memory``: the JSON Lines file of the official MCP memory server: one memory per
  observation (``"Name (type): observation"``), one per relation, and a ``relation`` link between
  the two entities' first memories. Malformed lines (two objects on one line, a line cut short by
  concurrent writes) are split or skipped and reported.
- ``mem0``: mem0's ``get_all`` output, read by :mod:`.mem0` (each user's memories to that user's
  agent, as facts).
- ``letta``: the memory blocks of a Letta agent file (``.af``), as memory blocks with their limits.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Iterator

from hippo import limits
from hippo.core import validation as v
from hippo.errors import InvalidInput
from hippo.types import Skipped

__all__ = ["READERS", "BlockItem", "Item", "Read", "json_file", "shown_name", "tags_of"]


@dataclass
class Item:
    """A memory to be, as read: checked later, with the rest of the import. ``agent`` is the agent
    it belongs to (None: the one importing), ``session_id`` the session it came from; ``fact``
    makes it a fact, which later facts can supersede, instead of a raw memory."""

    content: str
    where: str
    tags: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    observed_at: datetime | None = None
    agent: str | None = None
    session_id: str | None = None
    fact: bool = False


@dataclass
class BlockItem:
    """A memory block to be: its value and limit as the file gives them, checked later."""

    where: str
    key: str
    value: str
    limit: Any


@dataclass
class Read:
    items: list[Item] = field(default_factory=list)
    blocks: list[BlockItem] = field(default_factory=list)
    relations: list[tuple[str, str]] = field(default_factory=list)  # entity names to link
    skipped: list[Skipped] = field(default_factory=list)

    def skip(self, where: str, reason: str) -> None:
        self.skipped.append(Skipped(where, reason))


def shown_name(name: str) -> str:
    """A file name as a report shows it: as it is, or quoted and escaped when it holds a newline,
    a byte that is not UTF-8 or anything else that would not print."""
    return name if name.isprintable() else v.shown(name)


def read_text(path: Path, *, follow: bool = True, errors: str = "strict") -> str:
    """The text of a regular file of at most ``limits.IMPORT_FILE_BYTES``; InvalidInput saying why
    not otherwise. Opened with O_NONBLOCK, which lets a FIFO's open return (to be refused); a
    regular file reads as usual. Without ``follow``, a symlink in the last place is refused."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"cannot be read ({getattr(exc, 'strerror', None) or exc})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise InvalidInput("not a regular file (a folder, a FIFO or a device): not read")
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(limits.IMPORT_FILE_BYTES + 1)  # not its size: the file may be growing
    if len(data) > limits.IMPORT_FILE_BYTES:
        raise InvalidInput(f"larger than {limits.IMPORT_FILE_BYTES} bytes")
    try:
        return data.decode("utf-8", errors)
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"not UTF-8 text (byte {exc.start})") from None


def _whole_file(path: Path, *, errors: str = "strict") -> str:
    """The file the caller named; a problem with it refuses the import."""
    try:
        return read_text(path, errors=errors)
    except InvalidInput as exc:
        raise InvalidInput(f"{shown_name(str(path))}: {exc.message}") from None


def json_file(path: Path) -> Any:
    """The one JSON value of the file the caller named; InvalidInput otherwise."""
    text = _whole_file(path)
    try:
        values = v.parse_json_values(text, "the file", max_chars=limits.IMPORT_FILE_BYTES)
    except InvalidInput as exc:
        raise InvalidInput(f"{shown_name(str(path))} is not a JSON file: {exc.message}") from None
    if len(values) != 1:
        raise InvalidInput(f"{shown_name(str(path))} is not a JSON file: it holds {len(values)} JSON values, not one")
    return values[0]


def _tag(heading: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", heading.lower()).strip("-")[:64]


def tags_of(names: list[Any]) -> list[str]:
    """Tags made of headings, entity types or categories; those left empty dropped."""
    return [t for t in (_tag(n) for n in names if isinstance(n, str)) if t]


# -- markdown -------------------------------------------------------------------------------------

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^(\s*)(?:[-*+]|\d+[.)])\s+(.*)$")


def _markdown(path: Path) -> Read:
    read = Read()
    if not path.is_dir():
        read.items += _notes_of(shown_name(path.name), _whole_file(path))
        return read
    root = path.resolve()
    files = sorted({*path.glob("MEMORY.md"), *path.glob("memory/*.md")})
    if not files:
        read.skip(shown_name(str(path)), "no MEMORY.md or memory/*.md here")
    for file in files:
        name = shown_name(str(file.relative_to(path)))
        real = Path(os.path.realpath(file))
        if not real.is_relative_to(root):
            read.skip(name, "a link to a file outside the folder: not read")
            continue
        try:
            read.items += _notes_of(name, read_text(real, follow=False))
        except InvalidInput as exc:
            read.skip(name, exc.message)
    return read


def _notes_of(name: str, text: str) -> list[Item]:
    return [Item(c, f"{name}:{line}", tags, {"file": name}) for c, line, tags in _notes(text)]


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

def _mcp_memory(path: Path) -> Read:
    read = Read()
    # "\n" only: a JSON string may hold U+2028 and the other breaks splitlines() would cut at.
    for number, line in enumerate(_whole_file(path, errors="replace").split("\n"), 1):
        if not line.strip():
            continue
        try:
            values = v.parse_json_values(line, "the line", max_chars=limits.JSON_BYTES)
        except InvalidInput as exc:
            cut = "" if line.rstrip().endswith(("}", "]")) else ": a line cut short?"
            read.skip(f"line {number}", exc.message + cut)
            continue
        for value in values:
            _mcp_value(value, f"line {number}", read)
    return read


def _mcp_value(value: Any, where: str, read: Read) -> None:
    if not isinstance(value, dict):
        read.skip(where, "not a JSON object")
    elif value.get("type") == "entity" and isinstance(value.get("name"), str):
        _mcp_entity(value, where, read)
    elif value.get("type") == "relation" and all(isinstance(value.get(k), str) for k in ("from", "to", "relationType")):
        a, b, kind = value["from"], value["to"], value["relationType"]
        read.items.append(Item(f"{a.replace('_', ' ')} {kind.replace('_', ' ')} {b.replace('_', ' ')}", where,
                               ["relation"], {"relation": kind}))
        read.relations.append((a, b))
    else:
        read.skip(where, "neither an entity nor a relation")


def _mcp_entity(value: dict[str, Any], where: str, read: Read) -> None:
    name, kind = value["name"], value.get("entityType")
    label = name.replace("_", " ") + (f" ({kind})" if isinstance(kind, str) and kind else "")
    observations = value.get("observations")
    if observations is not None and not isinstance(observations, list):
        read.skip(where, "its observations are not a list")
        return
    for number, observation in enumerate(observations or [], 1):
        at = f"{where}, observation {number}"
        if not isinstance(observation, str) or not observation.strip():
            read.skip(at, "not text" if not isinstance(observation, str) else "empty")
        else:
            read.items.append(Item(f"{label}: {observation.strip()}", at, tags_of([kind]), {"entity": name}))


# -- letta ----------------------------------------------------------------------------------------

def _letta(path: Path) -> Read:
    data = json_file(path)
    if not isinstance(data, dict):
        raise InvalidInput(f"{shown_name(str(path))}: expected a Letta agent file (a JSON object)")
    read = Read()
    candidates = _listed(data.get("blocks"), "blocks", read)
    agents = _listed(data["agents"], "agents", read) if "agents" in data else [data]
    for number, agent in enumerate(agents):
        at = f"agents[{number}]." if agent is not data else ""  # an older file: the agent is the file
        if not isinstance(agent, dict):
            read.skip(at.rstrip("."), "not a JSON object")
            continue
        candidates += _listed(agent.get("core_memory"), f"{at}core_memory", read)
        candidates += _listed(agent.get("memory_blocks"), f"{at}memory_blocks", read)
        memory = agent.get("memory")
        if isinstance(memory, dict):
            candidates += _listed(memory.get("blocks"), f"{at}memory.blocks", read)
        elif memory is not None:
            read.skip(f"{at}memory", "not a JSON object")
    seen: set[str] = set()
    for number, block in enumerate(candidates):
        label = block.get("label") if isinstance(block, dict) else None
        value = block.get("value") if isinstance(block, dict) else None
        if not isinstance(label, str) or not isinstance(value, str):
            read.skip(f"block {number}", "no label or value")
        elif label not in seen:
            seen.add(label)
            key = _block_key(label)
            read.blocks.append(BlockItem(f"block {key}", key, value, block.get("limit")))
    return read


def _listed(value: Any, where: str, read: Read) -> list[Any]:
    """``value`` when it is a list, none for null; anything else is reported and read as none."""
    if isinstance(value, list):
        return list(value)
    if value is not None:
        read.skip(where, f"expected a list, got {v.shown(value)}")
    return []


def _block_key(label: str) -> str:
    """A block key made of a Letta label: what a key may not hold becomes ``_``."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", label).lstrip(".-")[:64] or "block"


READERS: dict[str, Callable[[Path], Read]] = {"markdown": _markdown, "mcp-memory": _mcp_memory, "letta": _letta}
