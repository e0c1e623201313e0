"""Importers from other memory systems: ``import_from(path, format=...)``.

Every format becomes raw memories with ``source="migration"`` (blocks stay blocks), written by the
one raw-memory writer; the formats and how each is read are in :mod:`.readers`.

An import writes every item it can read and reports each other one with where it was and why
(``ImportReport.skipped``): too long, a NUL, a bad date, metadata too large or too deep, a number
too large to keep, a block over its limit. Items are checked before anything is written, the
embedding runs next, and then every memory, block and link is written in one transaction: a
storage error or a crash part-way leaves nothing of the import. ``dry_run`` reads and checks the
same way and reports the same skips, writing nothing. Importing is idempotent: a memory whose
text the agent already holds is skipped (``duplicate``), not strengthened, and a block whose text
is already there is left alone, so a second run imports nothing new. Arguments that cannot work,
and a file that cannot be read at all, raise InvalidInput before anything is written.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from hippo.core import validation as v
from hippo.core.blocks.editor import BlockEditor
from hippo.core.curation.importers.readers import READERS, BlockItem, Item, Read, shown_name
from hippo.core.memories import writer
from hippo.errors import InvalidInput
from hippo.types import ImportReport, Skipped

if TYPE_CHECKING:
    from hippo.core.context import AgentContext

__all__ = ["FORMATS", "import_from"]

FORMATS = tuple(READERS)
SOURCE = "migration"
EMBED_BATCH = 256  # memories per embedding call: the progress bar moves between calls


@dataclass
class _Plan:
    """What an import will write: checked memories (with the item each came from) and blocks."""

    memories: list[tuple[Item, writer.Checked]] = field(default_factory=list)
    blocks: list[tuple[str, str, int | None]] = field(default_factory=list)  # key, value, limit
    skipped: list[Skipped] = field(default_factory=list)


def import_from(ctx: "AgentContext", path: Any, format: Any, *, dry_run: Any = False,
                progress: Callable[[int, int], None] | None = None) -> ImportReport:
    source = _checked_arguments(path, format, dry_run, progress)
    read = READERS[format](source)
    plan = _plan(ctx, read)
    if dry_run:
        return ImportReport(format, len(plan.memories), len(plan.blocks), 0, plan.skipped, dry_run=True)
    prepared = _prepare(ctx, [checked for _, checked in plan.memories], progress)
    with ctx.store.transaction():
        # Read again under the write lock: another writer may have stored one of these texts.
        held = ctx.store.memories_by_hash([checked.digest for _, checked in plan.memories])
        plan.skipped += [_duplicate(item) for item, checked in plan.memories if checked.digest in held]
        fresh = [(item, checked) for item, checked in plan.memories if checked.digest not in held]
        results = writer.apply(ctx.store, replace(prepared, inputs=[c for _, c in fresh]), ctx.now())
        blocks = BlockEditor(ctx.store, ctx.settings.block_char_limit)
        for key, value, limit in plan.blocks:
            blocks.set(key, value, ctx.now(), char_limit=limit)
        links = _link(ctx, read, [(item, result.id) for (item, _), result in zip(fresh, results)])
    return ImportReport(format, len(results), len(plan.blocks), links, plan.skipped)


def _checked_arguments(path: Any, format: Any, dry_run: Any, progress: Any) -> Path:
    """The path to read, once every argument is known to work; InvalidInput otherwise."""
    if not isinstance(format, str) or format not in FORMATS:
        raise InvalidInput(f"format must be one of {', '.join(FORMATS)}, got {v.shown(format)}")
    if not isinstance(dry_run, bool):
        raise InvalidInput(f"dry_run must be True or False, got {v.shown(dry_run)}")
    if progress is not None and not callable(progress):
        raise InvalidInput(f"progress must be a function of (done, total) or None, got {v.shown(progress)}")
    if not isinstance(path, (str, os.PathLike)) or not isinstance(os.fspath(path), str):
        raise InvalidInput(f"path must be a file or folder name (str or Path), got {v.shown(path)}")
    source = Path(path)
    try:
        os.stat(source)
    except (FileNotFoundError, NotADirectoryError):
        raise InvalidInput(f"no such file or folder: {shown_name(str(source))}") from None
    except (OSError, ValueError) as exc:  # a NUL, a name too long, no permission
        raise InvalidInput(f"cannot read {v.shown(str(source))}: {getattr(exc, 'strerror', None) or exc}") from None
    return source


def _plan(ctx: "AgentContext", read: Read) -> _Plan:
    """Every item and block checked as a write would check it; what fails is skipped with why."""
    plan = _Plan(skipped=read.skipped)
    digests: set[str] = set()
    for item in read.items:
        metadata = {**item.metadata, **({"tags": item.tags} if item.tags else {})}
        try:
            checked = writer.check(writer.MemoryInput(item.content, metadata, observed_at=item.observed_at,
                                                      source=SOURCE), max_chars=ctx.settings.max_content_chars)
        except InvalidInput as exc:
            plan.skipped.append(Skipped(item.where, exc.message))
            continue
        if checked.digest in digests:
            plan.skipped.append(_duplicate(item))
            continue
        digests.add(checked.digest)
        plan.memories.append((item, checked))
    held = ctx.store.memories_by_hash(list(digests))
    plan.skipped += [_duplicate(item) for item, checked in plan.memories if checked.digest in held]
    plan.memories = [(item, checked) for item, checked in plan.memories if checked.digest not in held]
    for block in read.blocks:
        try:
            key, value, limit = _checked_block(ctx, block)
        except InvalidInput as exc:
            plan.skipped.append(Skipped(block.where, exc.message))
            continue
        there = ctx.store.get_block(key)
        if there is not None and there.value == value:
            plan.skipped.append(Skipped(block.where, "already there with this text", duplicate=True))
        else:
            plan.blocks.append((key, value, limit))
    return plan


def _duplicate(item: Item) -> Skipped:
    return Skipped(item.where, "already imported (the agent holds this text)", duplicate=True)


def _checked_block(ctx: "AgentContext", block: BlockItem) -> tuple[str, str, int | None]:
    """A block as ``set_memory_block`` would take it, its limit included; InvalidInput otherwise."""
    key = v.check_block_key(block.key)
    value = v.check_text(block.value, "the value", max_chars=ctx.settings.max_content_chars, allow_empty=True)
    limit = None if block.limit is None else v.check_char_limit(block.limit)
    cap = limit or ctx.settings.block_char_limit
    if cap is not None and len(value) > cap:
        raise InvalidInput(f"the value is {len(value)} characters; the block's limit is {cap}")
    return key, value, limit


def _prepare(ctx: "AgentContext", inputs: list[writer.Checked],
             progress: Callable[[int, int], None] | None) -> writer.Prepared:
    """The writer's model part, a batch at a time (the progress moves between), before the
    transaction: no write lock is held while a model runs."""
    vectors: dict[str, Any] = {}
    for start in range(0, len(inputs), EMBED_BATCH):
        batch = inputs[start:start + EMBED_BATCH]
        vectors.update(writer.prepare(ctx.store, ctx.embedding, batch).vectors)
        if progress is not None:
            progress(min(start + EMBED_BATCH, len(inputs)), len(inputs))
    return writer.Prepared(inputs, vectors, {}, ctx.embedding.embedder is not None)


def _link(ctx: "AgentContext", read: Read, written: list[tuple[Item, str]]) -> int:
    """mcp-memory relations: a ``relation`` link between the first memories of the two entities."""
    if not read.relations:
        return 0
    first: dict[str, str] = {}
    for item, chunk_id in written:
        entity = item.metadata.get("entity")
        if isinstance(entity, str):
            first.setdefault(entity, chunk_id)
    pairs = [(first[a], first[b]) for a, b in read.relations if a in first and b in first and first[a] != first[b]]
    ctx.store.strengthen_links(pairs, "relation", ctx.now())
    return len(pairs)
