"""The compaction capability of one agent, an operation of :class:`~hippo.core.memory.Memory`:
the scoring and the summary are :mod:`hippo.core.compaction.compact`'s; what is added here is that
nothing is lost. The full content of every entry that is compressed or reduced to a pointer is
stored as a memory through the one writer, and its line in the summary carries the memory's id."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from hippo.core import validation as v
from hippo.core.compaction import compact as compaction
from hippo.core.compaction import kinds
from hippo.core.compaction.summary import summarize
from hippo.core.context import Capability
from hippo.core.memories import writer
from hippo.core.memories.writer import Checked, MemoryInput
from hippo.core.messages import ChatMessage, read_messages
from hippo.errors import InvalidInput
from hippo.types import Compaction

if TYPE_CHECKING:
    from hippo.core.compaction.config import CompactionConfig
    from hippo.core.compaction.kinds import Scored
    from hippo.core.memories.reembed import Progress
    from hippo.types import StoreResult

__all__ = ["Compactor", "parts_of"]

SOURCE = "compaction"
BATCH = 32  # entries embedded and written together


def parts_of(text: str, max_chars: int) -> list[str]:
    """``text`` in pieces a memory may hold, cut at a line break in the second half of a piece
    when there is one; blank pieces are left out."""
    parts, rest = [], text
    while len(rest) > max_chars:
        cut = rest.rfind("\n", max_chars // 2, max_chars)
        cut = cut if cut > 0 else max_chars
        parts.append(rest[:cut])
        rest = rest[cut:]
    parts.append(rest)
    return [part for part in parts if part.strip()]


def _inputs(entry: "Scored", message: ChatMessage, session_id: str, max_chars: int) -> list[Checked]:
    """The memories that keep one entry's content: its type, position, role and tool in metadata."""
    parts = parts_of(entry.content, max_chars)
    found = []
    for number, part in enumerate(parts, 1):
        metadata: dict[str, Any] = {"type": entry.type, "position": entry.index, "role": entry.role}
        if entry.tool:
            metadata["tool"] = entry.tool
        if len(parts) > 1:
            metadata.update(part=number, parts=len(parts))
        item = MemoryInput(part, metadata, intensity=entry.importance, observed_at=message.timestamp,
                           source=SOURCE, session_id=session_id)
        found.append(writer.check(item, max_chars=max_chars))
    return found


class Compactor(Capability):
    """The compaction operation of one agent."""

    def compact(self, messages: Sequence[Mapping[str, Any]], *, session_id: str,
                config: "CompactionConfig | Mapping[str, Any] | None" = None,
                previous_summary: str | None = None, progress: "Progress | None" = None) -> Compaction:
        """Compact a session by decay (see :func:`hippo.compact`), keeping what the summary
        shortens: the full content of each entry below ``compress_threshold`` (a goal, a decision, a
        compressed line, a pointer) is stored as a memory (``source`` ``compaction``, this
        ``session_id``, its type and position in metadata) and its line ends with ``[id:...]``, so
        ``get_memory`` or ``recall_memories`` brings it back. Compacting the
        same session again stores nothing twice: the same content keeps its id. Acknowledgements
        and trivia are not stored (``classifier="reference"`` stores every faded entry, as the
        original layout does). ``progress`` is called with (entries stored, entries to store) as
        batches are written."""
        session = v.check_session_id(session_id)
        if session is None:
            raise InvalidInput("session_id is required: compaction stores what fades under it")
        settings = compaction.resolve_config(config)
        previous_summary = compaction.check_summary(previous_summary)
        read = read_messages(messages)
        scored = compaction.start(read, settings)
        inputs: list[Checked] = []
        owners: list[int] = []
        for entry in scored:
            # acknowledgements, reactions and trivia are not memories (``classifier="reference"`` stores them)
            trivial = settings.classifier != "reference" and (
                entry.type == "ephemeral" or kinds.trivial(entry.content)
                or entry.type != "tool_result" and not kinds.worth_keeping(entry.content))
            if entry.retention < settings.compress_threshold and not trivial:
                held = _inputs(entry, read[entry.index], session, self.ctx.settings.max_content_chars)
                inputs += held
                owners += [entry.index] * len(held)
        results = self._written(inputs, v.check_progress(progress))
        ids: dict[int, list[str]] = defaultdict(list)
        for owner, result in zip(owners, results):
            ids[owner].append(result.id)
        return summarize(scored, settings, previous_summary=previous_summary, ids=ids, emit=compaction.emit,
                         session=session)

    def _written(self, inputs: list[Checked], progress: "Progress | None") -> list["StoreResult"]:
        """The inputs written in batches of :data:`BATCH` (each its own transaction: compacting again
        finds what a batch stored), with progress after each."""
        results = []
        for start in range(0, len(inputs), BATCH):
            results += writer.write(self.ctx.store, self.ctx.embedding, inputs[start:start + BATCH], self.ctx.now)
            if progress is not None:
                progress(len(results), len(inputs))
        return results
