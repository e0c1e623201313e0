"""Importers from other memory systems: ``import_from(path, format=...)``.

Every format becomes raw memories with ``source="migration"`` (blocks stay blocks), written by the
one raw-memory writer; the formats and how each is read are in :mod:`.readers`. mem0's memories,
which mem0 extracted from conversation, come in as facts (:mod:`.mem0`): a later fact that
replaces one of them supersedes it, as it would a fact ``remember_facts`` learned. A fact the
agent holds in the same words is skipped; every other comes in as it is (an import merges and
supersedes nothing, and makes no LLM call). A mem0 file names each memory's user, agent and run:
each goes to the agent of its scope, in the same database (with a file per agent, those of other
agents are skipped: import into each agent's own file).

An import writes every item it can read and reports each other one with where it was and why
(``ImportReport.skipped``): too long, a NUL, a bad date, metadata too large or too deep, a number
too large to keep, a block over its limit. Items are checked before anything is written, the
embedding runs next, and then every memory, fact, block and link is written in one transaction: a
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
from hippo.core.curation.importers import mem0
from hippo.core.curation.importers.readers import READERS as OTHERS
from hippo.core.curation.importers.readers import BlockItem, Item, Read, shown_name
from hippo.core.facts.offline import ExtractedFact
from hippo.core.facts.recognition import Plan, find_candidates, same_words
from hippo.core.facts.remember import Planned, apply_facts
from hippo.core.memories import writer
from hippo.errors import InvalidInput
from hippo.types import ImportReport, Skipped

if TYPE_CHECKING:
    from hippo.core.context import AgentContext

__all__ = ["FORMATS", "import_from"]

READERS: dict[str, Callable[[Path], Read]] = {"markdown": OTHERS["markdown"], "mcp-memory": OTHERS["mcp-memory"],
                                              "mem0": mem0.read, "letta": OTHERS["letta"]}
FORMATS = tuple(READERS)
SOURCE = "migration"
EMBED_BATCH = 256  # memories per embedding call: the progress bar moves between calls


@dataclass
class _Plan:
    """What an import will write into one agent: checked memories and facts (with the item each
    came from; a fact with its recognition and its vectors), and, into the agent importing, blocks."""

    ctx: "AgentContext"
    memories: list[tuple[Item, writer.Checked]] = field(default_factory=list)
    facts: list[tuple[Item, writer.Checked]] = field(default_factory=list)
    recognised: list[tuple[Item, writer.Checked, Plan | None, Any]] = field(default_factory=list)
    blocks: list[tuple[str, str, int | None]] = field(default_factory=list)  # key, value, limit


def import_from(ctx: "AgentContext", path: Any, format: Any, *, dry_run: Any = False,
                progress: Callable[[int, int], None] | None = None) -> ImportReport:
    source = _checked_arguments(path, format, dry_run, progress)
    read = READERS[format](source)
    skipped = list(read.skipped)
    plans = [_plan(agent_ctx, items, skipped) for agent_ctx, items in _by_agent(ctx, read.items, skipped)]
    plans[0].blocks = _plan_blocks(ctx, read.blocks, skipped)
    total = sum(len(p.memories) + len(p.facts) for p in plans)
    done = 0
    for plan in plans:
        _recognise(plan, skipped, dry_run)
        done += len(plan.facts)
        if progress is not None and not dry_run and plan.facts:
            progress(done, total)
    if dry_run:
        return _report(format, plans, skipped, 0, dry_run=True)
    prepared = []
    for plan in plans:
        prepared.append(_prepare(plan.ctx, [c for _, c in plan.memories], progress, done, total))
        done += len(plan.memories)
    with ctx.store.transaction():  # every agent's part: they share this database
        links = sum(_write(plan, ready, skipped, read.relations if plan is plans[0] else [])
                    for plan, ready in zip(plans, prepared))
    return _report(format, plans, skipped, links)


def _by_agent(ctx: "AgentContext", items: list[Item],
              skipped: list[Skipped]) -> list[tuple["AgentContext", list[Item]]]:
    """The items of each agent, the agent importing first (it gets the unscoped items and the
    blocks). With a file per agent, another agent's items are skipped: its memory is another file."""
    groups: dict[str, list[Item]] = {ctx.agent_id: []}
    for item in items:
        agent = item.agent or ctx.agent_id
        if agent != ctx.agent_id and ctx.settings.file_per_agent:
            skipped.append(Skipped(item.where, f"for agent {agent!r}, whose memory is another file: import "
                                               "into that agent to bring it in"))
            continue
        groups.setdefault(agent, []).append(item)
    return [(ctx if agent == ctx.agent_id else ctx.for_agent(agent), group) for agent, group in groups.items()]


def _report(format: str, plans: list[_Plan], skipped: list[Skipped], links: int, *,
            dry_run: bool = False) -> ImportReport:
    """The report; ``agents`` says where the items went when any went to another agent than the one importing."""
    counts = {p.ctx.agent_id: len(p.memories) + len(p.recognised) for p in plans}
    elsewhere = any(n for agent, n in counts.items() if agent != plans[0].ctx.agent_id)
    return ImportReport(format, sum(counts.values()), len(plans[0].blocks), links, skipped, dry_run=dry_run,
                        facts=sum(len(p.recognised) for p in plans),
                        agents={a: n for a, n in counts.items() if n} if elsewhere else {})


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


def _plan(ctx: "AgentContext", items: list[Item], skipped: list[Skipped]) -> _Plan:
    """One agent's items checked as a write would check them; what fails is skipped with why, as
    is a memory the agent holds already and what the file repeats."""
    plan = _Plan(ctx)
    digests: set[str] = set()
    for item in items:
        metadata = {**item.metadata, **({"tags": item.tags} if item.tags else {})}
        try:
            checked = writer.check(writer.MemoryInput(item.content, metadata, observed_at=item.observed_at,
                                                      source=SOURCE, session_id=item.session_id),
                                   max_chars=ctx.settings.max_content_chars)
        except InvalidInput as exc:
            skipped.append(Skipped(item.where, exc.message))
            continue
        key = _fact_key(checked.content) if item.fact else checked.digest
        if key in digests:
            skipped.append(_duplicate(item))
            continue
        digests.add(key)
        (plan.facts if item.fact else plan.memories).append((item, checked))
    held = ctx.store.memories_by_hash([checked.digest for _, checked in plan.memories])
    skipped += [_duplicate(item) for item, checked in plan.memories if checked.digest in held]
    plan.memories = [(item, checked) for item, checked in plan.memories if checked.digest not in held]
    return plan


def _fact_key(text: str) -> str:
    """Two wordings ``remember_facts`` reads as one fact (its ``_dedupe``): case, spacing, a final stop."""
    return " ".join(text.casefold().split()).rstrip(".!")


def _plan_blocks(ctx: "AgentContext", blocks: list[BlockItem],
                 skipped: list[Skipped]) -> list[tuple[str, str, int | None]]:
    """The blocks to write, each checked; one already there with this text is skipped."""
    planned = []
    for block in blocks:
        try:
            key, value, limit = _checked_block(ctx, block)
        except InvalidInput as exc:
            skipped.append(Skipped(block.where, exc.message))
            continue
        there = ctx.store.get_block(key)
        if there is not None and there.value == value:
            skipped.append(Skipped(block.where, "already there with this text", duplicate=True))
        else:
            planned.append((key, value, limit))
    return planned


def _recognise(plan: _Plan, skipped: list[Skipped], dry_run: bool) -> None:
    """Compare the facts with the agent's (embedded once, each with the facts most like it): one
    the agent holds in the same words is skipped; every other comes in as it is, merged with none
    and superseding none. A dry run into an agent that holds no fact has nothing to compare with,
    and embeds nothing."""
    if not plan.facts:
        return
    if dry_run and not plan.ctx.store.counts()["facts"]:
        plan.recognised = [(item, checked, None, None) for item, checked in plan.facts]
        return
    ctx = plan.ctx
    facts = [ExtractedFact(checked.content, checked.intensity, (SOURCE,)) for _, checked in plan.facts]
    windows = ctx.embedding.windows([fact.fact for fact in facts])
    found = find_candidates(ctx.store, facts, [None if w is None else w[0] for w in windows])
    for (item, checked), fact, candidates, vectors in zip(plan.facts, facts, found, windows):
        if any(same_words(c.chunk.content, fact.fact) for c in candidates):
            skipped.append(Skipped(item.where, "already there: the agent holds this fact", duplicate=True))
        else:
            plan.recognised.append((item, checked, Plan(fact, candidates), vectors))


def _write(plan: _Plan, prepared: writer.Prepared, skipped: list[Skipped], relations: list[tuple[str, str]]) -> int:
    """Inside the import's transaction: one agent's memories, facts and blocks; the links made."""
    ctx = plan.ctx
    # Read again under the write lock: another writer may have stored one of these texts.
    held = ctx.store.memories_by_hash([checked.digest for _, checked in plan.memories])
    skipped += [_duplicate(item) for item, checked in plan.memories if checked.digest in held]
    plan.memories = [(item, checked) for item, checked in plan.memories if checked.digest not in held]
    results = writer.apply(ctx.store, replace(prepared, inputs=[c for _, c in plan.memories]), ctx.now())
    for _, checked, recognised, vectors in plan.recognised:
        assert recognised is not None  # only a dry run leaves facts unrecognised
        apply_facts(ctx.store, Planned([recognised], [vectors]), ctx.now(), checked.observed_at, checked.metadata,
                    source=SOURCE, session_id=checked.session_id)
    blocks = BlockEditor(ctx.store, ctx.settings.block_char_limit)
    for key, value, limit in plan.blocks:
        blocks.set(key, value, ctx.now(), char_limit=limit)
    return _link(ctx, relations, [(item, result.id) for (item, _), result in zip(plan.memories, results)])


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


def _prepare(ctx: "AgentContext", inputs: list[writer.Checked], progress: Callable[[int, int], None] | None,
             done: int, total: int) -> writer.Prepared:
    """The writer's model part, a batch at a time (the progress moves between), before the
    transaction: no write lock is held while a model runs. ``done`` of ``total`` were before."""
    vectors: dict[str, Any] = {}
    for start in range(0, len(inputs), EMBED_BATCH):
        batch = inputs[start:start + EMBED_BATCH]
        vectors.update(writer.prepare(ctx.store, ctx.embedding, batch).vectors)
        if progress is not None:
            progress(done + min(start + EMBED_BATCH, len(inputs)), total)
    return writer.Prepared(inputs, vectors, {}, ctx.embedding.embedder is not None)


def _link(ctx: "AgentContext", relations: list[tuple[str, str]], written: list[tuple[Item, str]]) -> int:
    """mcp-memory relations: a ``relation`` link between the first memories of the two entities."""
    if not relations:
        return 0
    first: dict[str, str] = {}
    for item, chunk_id in written:
        entity = item.metadata.get("entity")
        if isinstance(entity, str):
            first.setdefault(entity, chunk_id)
    pairs = [(first[a], first[b]) for a, b in relations if a in first and b in first and first[a] != first[b]]
    ctx.store.strengthen_links(pairs, "relation", ctx.now())
    return len(pairs)
