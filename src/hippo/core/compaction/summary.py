"""The summary of a compacted session, in the layout of the compaction extension hippo replaces,
under hippo's own names:

    # Session compaction (hippo)
    <!-- decay_λ={...} sparse_threshold=0.25 compress_threshold=0.65 -->
    <!-- entries: N | sparse: S | compressed: C | kept: K | dropped: D -->

    ## Goal                                      (the user's intents still above the sparse threshold)
    ## Prior Context                             (the previous summary)
    ## Active Context (high retention)           (### [type] (r=0.91) and up to 500 characters)
    ## Compressed (mid retention — re-fetch if needed)   (• (r=0.45) and the entry's opening sentences)
    ## Sparse Index (decayed — pointers only)    (index lines within max_sparse_index_tokens)

    <!-- hippo compaction stats: 150000tok → 3500tok (42.9× compression) -->

Index lines follow the original layout by type (``[TOOL:name] 1200tok → "..."``, ``[USER] "..."``,
``[DECISION] "..."``, ``[EPHEMERAL] ...``, ``[ROLE] ...``), each on one line (a preview's line
breaks become spaces), and end with ``[id:...]`` when the content was stored as a memory. A
compressed line has the same shape, but where the original cut the text at 80 or 100 characters
(the session's key decision cut mid-sentence), it shows whole sentences (or whole lines) within
``COMPRESSED_CHARS``, and an Active Context entry whole sentences within its 500 characters
(:func:`hippo.core.compaction.wording.shortened`). Tokens are real word pieces. Numbers are printed
as JavaScript prints them, as the original layout did.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Mapping, Sequence

from hippo.core.compaction.config import CompactionConfig
from hippo.core.compaction.digest import digest
from hippo.core.compaction.wording import fixed, js_number, shortened
from hippo.core.tokens import count_tokens
from hippo.types import Compaction, CompactionEntry, CompactionStats

if TYPE_CHECKING:
    from hippo.core.compaction.kinds import Scored

__all__ = ["COMPRESSED_CHARS", "HEADING", "compressed_line", "index_line", "summarize"]

Emit = Callable[[CompactionConfig, str, "Mapping[str, object] | None"], None]

HEADING = "# Session compaction (hippo)"
KEPT_CHARS = 500  # an Active Context entry shows this much of its content
# A compressed line's text: whole sentences within this, where the original showed 80 to 100
# characters of a preview; a single sentence up to KEPT_CHARS stays whole. 200 characters keep one
# or two sentences of a plan; on the 150k-token session of bench/compaction.py the 53 compressed
# lines grew from 6,362 to 8,261 characters and the summary from 5,762 to 6,230 tokens (+8%).
COMPRESSED_CHARS = 200
GOAL_CHARS = 150


def _one_line(text: str) -> str:
    return text.replace("\r", " ").replace("\n", " ")


_CUTS = {"tool_result": 80, "user_intent": 100, "decision": 100, "ephemeral": 40}


def index_line(entry: "Scored", ids: Sequence[str] = ()) -> str:
    """The sparse-index line of an entry: a pointer, its preview cut as the original layout cuts it."""
    return _labelled(entry, _one_line(entry.preview)[:_CUTS.get(entry.type, 80)], ids)


def compressed_line(entry: "Scored", ids: Sequence[str] = ()) -> str:
    """The body of an entry's compressed line: the index line's shape, with whole sentences."""
    text = shortened(entry.text or entry.content, COMPRESSED_CHARS, longest_sentence=KEPT_CHARS)
    return _labelled(entry, _one_line(text), ids)


def _labelled(entry: "Scored", shown: str, ids: Sequence[str]) -> str:
    if entry.type == "tool_result":
        line = f'[TOOL:{entry.tool or "unknown_tool"}] {entry.tokens}tok → "{shown}"'
    elif entry.type == "user_intent":
        line = f'[USER] "{shown}"'
    elif entry.type == "decision":
        line = f'[DECISION] "{shown}"'
    elif entry.type == "ephemeral":
        line = f"[EPHEMERAL] {shown}"
    else:
        line = f"[{entry.role.upper()}] {shown}"
    return f"{line} [id:{','.join(ids)}]" if ids else line


class _Sections:
    """The three sections filled entry by entry, with their token counts."""

    def __init__(self) -> None:
        self.sparse: list[str] = []
        self.compressed: list[str] = []
        self.kept: list[str] = []
        self.sparse_tokens = self.compressed_tokens = self.kept_tokens = self.dropped = 0

    def place(self, entry: "Scored", line: str, tokens: int, config: CompactionConfig) -> str:
        if entry.retention < config.sparse_threshold:
            if self.sparse_tokens + tokens > config.max_sparse_index_tokens:
                self.dropped += 1
                return "dropped"
            self.sparse.append(line)
            self.sparse_tokens += tokens
            return "pointer"
        if entry.retention < config.compress_threshold:
            self.compressed.append(f"• (r={fixed(entry.retention, 2)}) {line}")
            self.compressed_tokens += tokens
            return "compressed"
        body = shortened(entry.content, KEPT_CHARS, longest_sentence=KEPT_CHARS)
        self.kept.append(f"### [{entry.type}] (r={fixed(entry.retention, 2)})\n{body}")
        self.kept_tokens += entry.tokens
        return "kept"


def _goals(scored: Sequence["Scored"], config: CompactionConfig) -> list[str]:
    goals = []
    for entry in scored:
        if entry.type == "user_intent" and entry.retention >= config.sparse_threshold:
            goal = entry.preview[:GOAL_CHARS].replace("\n", " ")
            if len(goal) > 10:
                goals.append(f"- {goal}")
    return goals


def _rates_line(config: CompactionConfig) -> str:
    rates = ",".join(f'"{k}":{js_number(v)}' for k, v in config.decay_rates.items())
    return (f"<!-- decay_λ={{{rates}}} sparse_threshold={js_number(config.sparse_threshold)} "
            f"compress_threshold={js_number(config.compress_threshold)} -->")


def _layout(sections: _Sections, scored: Sequence["Scored"], config: CompactionConfig,
            previous_summary: str | None) -> list[str]:
    parts = [HEADING, _rates_line(config),
             f"<!-- entries: {len(scored)} | sparse: {len(sections.sparse)} | compressed: {len(sections.compressed)}"
             f" | kept: {len(sections.kept)} | dropped: {sections.dropped} -->", ""]
    goals = _goals(scored, config)
    if goals:
        parts += ["## Goal", "\n".join(goals), ""]
    if previous_summary:
        parts += ["## Prior Context", previous_summary, ""]
    if sections.kept:
        parts += ["## Active Context (high retention)", "\n\n".join(sections.kept), ""]
    if sections.compressed:
        parts += ["## Compressed (mid retention — re-fetch if needed)", "\n".join(sections.compressed), ""]
    if sections.sparse:
        parts += ["## Sparse Index (decayed — pointers only)", "\n".join(sections.sparse)]
        if sections.dropped:
            parts.append(f"\n<!-- {sections.dropped} additional entries dropped (sparse index full) -->")
        parts.append("")
    return parts


def summarize(scored: Sequence["Scored"], config: CompactionConfig, *, previous_summary: str | None = None,
              ids: Mapping[int, Sequence[str]] | None = None, emit: Emit | None = None,
              session: str | None = None) -> Compaction:
    """The summary of scored entries in the classifier's layout; ``ids`` are the memories holding
    each entry's content (by index), shown on its line; ``session``: the session they were stored
    under (None: nothing was stored)."""
    ids = ids or {}
    if config.classifier == "reference":
        parts, actions, counts, sparse_tokens, after = _reference(scored, config, previous_summary, ids)
    else:
        parts, actions, counts, sparse_tokens, after = _meaning(scored, config, previous_summary, ids, session)
    before = sum(entry.tokens for entry in scored)
    ratio = before / max(after, 1) if before > 0 else None
    parts.append(f"<!-- hippo compaction stats: {before}tok → {after}tok "
                 f"({fixed(ratio, 1) if ratio is not None else '∞'}× compression) -->")
    summary = "\n".join(parts)
    summary_tokens = count_tokens([summary])[0]
    if emit is not None:
        emit(config, "📝 Summary built", {"summaryTokens": summary_tokens,
                                          "compressionRatio": fixed(before / max(summary_tokens, 1), 1)})
    entries = [CompactionEntry(e.index, e.type, e.role, e.importance, e.retention, action,  # type: ignore[arg-type]
                               e.tokens, list(ids.get(e.index, ()))) for e, action in zip(scored, actions)]
    omitted = sum(action == "omitted" for action in actions)
    sparse, compressed, kept, dropped = counts
    stats = CompactionStats(len(scored), sparse, compressed, kept, dropped, before, after, ratio, summary_tokens,
                            sparse_tokens, omitted)
    return Compaction(summary, entries, stats)


def _line_of(config: CompactionConfig, ids: Mapping[int, Sequence[str]]) -> Callable[["Scored"], str]:
    def line(entry: "Scored") -> str:
        compressed = config.sparse_threshold <= entry.retention < config.compress_threshold
        return (compressed_line if compressed else index_line)(entry, ids.get(entry.index, ()))
    return line


Laid = tuple[list[str], list[str], tuple[int, int, int, int], int, int]


def _reference(scored: Sequence["Scored"], config: CompactionConfig, previous_summary: str | None,
               ids: Mapping[int, Sequence[str]]) -> Laid:
    """The original layout: its sections, actions, counts and tokens."""
    line_of = _line_of(config, ids)
    lines = [line_of(entry) for entry in scored]
    sections = _Sections()
    actions = [sections.place(entry, line, n, config) for entry, line, n in zip(scored, lines, count_tokens(lines))]
    parts = _layout(sections, scored, config, previous_summary)
    counts = (len(sections.sparse), len(sections.compressed), len(sections.kept), sections.dropped)
    after = sections.sparse_tokens + sections.compressed_tokens + sections.kept_tokens
    return parts, actions, counts, sections.sparse_tokens, after


def _meaning(scored: Sequence["Scored"], config: CompactionConfig, previous_summary: str | None,
             ids: Mapping[int, Sequence[str]], session: str | None) -> Laid:
    """hippo's layout (:mod:`hippo.core.compaction.digest`)."""
    made = digest(scored, config, ids, _line_of(config, ids))
    pointers, compressed, kept, omitted = made.counts()
    head = [HEADING, _rates_line(config),
            f"<!-- entries: {len(scored)} | sparse: {pointers} | compressed: {compressed} | kept: {kept}"
            f" | dropped: 0 | omitted: {omitted} -->", ""]
    parts = made.layout(head, previous_summary, session)
    actions = [made.actions[entry.index] for entry in scored]
    return parts, actions, (pointers, compressed, kept, 0), made.tokens["sparse"], sum(made.tokens.values())
