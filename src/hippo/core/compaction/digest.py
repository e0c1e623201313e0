"""The summary of a compacted session with the ``meaning`` classifier: each section says something
the others do not, and every line leads back to what it shortens.

    # Session compaction (hippo)
    <!-- decay_λ={...} sparse_threshold=0.25 compress_threshold=0.65 -->
    <!-- entries: N | sparse: S | compressed: C | kept: K | dropped: 0 | omitted: E -->

    ## Goal                       (the user's requests for work still above the sparse threshold)
    ## Decisions in force         (each decision not overturned by a later one on the same matter)
    ## Prior Context              (the previous summary)
    ## Active Context (high retention)
    ## Compressed (mid retention — re-fetch if needed)
    ## Sparse Index (decayed — pointers only)

A message shown in Goal or Decisions is not shown again below; acknowledgements and trivia are
left out (``omitted``, counted in the header). Every line starts with ``#N``, the message's place in
the session (from 0), and ends with ``[id:...]`` when its content was stored as a memory. When the
sparse index is full, the entries it has no room for are listed as ranges of places, so nothing is
dropped. The closing comment says how a pointer leads back: ``hippo compact FILE --show N`` for a
place, ``hippo get ID`` for a stored memory; when nothing was stored, it says how to keep it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Mapping, Sequence

from hippo.core.compaction.config import CompactionConfig
from hippo.core.compaction.kinds import open_goal, overturned, substance
from hippo.core.compaction.wording import fixed, shortened
from hippo.core.tokens import count_tokens

if TYPE_CHECKING:
    from hippo.core.compaction.kinds import Scored

__all__ = ["Digest", "digest", "places"]

LineOf = Callable[["Scored"], str]  # an entry's index or compressed line (the original layout's shapes)

DECISION_CHARS = 300
GOAL_CHARS = 150
KEPT_CHARS = 500


def places(indexes: Sequence[int]) -> str:
    """Places as ranges: ``#4-#9, #12``."""
    out, run = [], list[int]()
    for i in sorted(indexes):
        if run and i != run[-1] + 1:
            out.append(f"#{run[0]}" if len(run) == 1 else f"#{run[0]}-#{run[-1]}")
            run = []
        run.append(i)
    if run:
        out.append(f"#{run[0]}" if len(run) == 1 else f"#{run[0]}-#{run[-1]}")
    return ", ".join(out)


def _stored(ids: Sequence[str]) -> str:
    return f" [id:{','.join(ids)}]" if ids else ""


def _one_line(text: str) -> str:
    return " ".join(text.split())


class Digest:
    """The sections filled entry by entry, with the action taken for each entry and the tokens."""

    def __init__(self, scored: Sequence["Scored"], config: CompactionConfig, ids: Mapping[int, Sequence[str]]) -> None:
        self.config, self.ids = config, ids
        self.goals: list[str] = []
        self.decisions: list[str] = []
        self.kept: list[str] = []
        self.compressed: list[str] = []
        self.sparse: list[str] = []
        self.unlisted: list[int] = []
        self.actions: dict[int, str] = {}
        self.tokens = {"goal": 0, "decision": 0, "kept": 0, "compressed": 0, "sparse": 0}
        decisions = [e for e in scored if e.type == "decision"]
        self.overturned = {decisions[i].index for i in overturned([e.text for e in decisions])}

    def plan(self, entry: "Scored", line_of: "LineOf") -> tuple[str, str]:
        """The section an entry goes to and its line there (``omitted``: none)."""
        config, i, stored = self.config, entry.index, _stored(self.ids.get(entry.index, ()))
        if entry.type == "ephemeral":
            return "omitted", ""
        if entry.type == "decision" and i not in self.overturned:
            return "decision", f"- #{i} {_one_line(self._short(entry, DECISION_CHARS))}{stored}"
        if entry.type == "user_intent" and entry.retention >= config.sparse_threshold and open_goal(entry.text):
            return "goal", f"- #{i} {_one_line(self._short(entry, GOAL_CHARS))}{stored}"
        if entry.retention >= config.compress_threshold:
            body = shortened(entry.content, KEPT_CHARS, longest_sentence=KEPT_CHARS)
            return "kept", f"### #{i} [{entry.type}] (r={fixed(entry.retention, 2)}){stored}\n{body}"
        if entry.retention >= config.sparse_threshold:
            return "compressed", f"• #{i} (r={fixed(entry.retention, 2)}) {line_of(entry)}"
        return "sparse", f"#{i} {line_of(entry)}"

    def put(self, entry: "Scored", section: str, line: str, tokens: int) -> None:
        i = entry.index
        if section == "omitted":
            self.actions[i] = "omitted"
            return
        if section == "sparse" and self.tokens["sparse"] + tokens > self.config.max_sparse_index_tokens:
            self.unlisted.append(i)
            self.actions[i] = "pointer"
            return
        {"goal": self.goals, "decision": self.decisions, "kept": self.kept, "compressed": self.compressed,
         "sparse": self.sparse}[section].append(line)
        # a kept entry counts whole, as the original layout counts it
        self.tokens[section] += entry.tokens if section == "kept" else tokens
        self.actions[i] = {"sparse": "pointer", "compressed": "compressed"}.get(section, "kept")

    def _short(self, entry: "Scored", chars: int) -> str:
        return shortened(substance(entry.text or entry.content), chars, longest_sentence=chars)

    def layout(self, head: list[str], previous_summary: str | None, session: str | None) -> list[str]:
        parts = list(head)
        for title, lines, joiner in (("## Goal", self.goals, "\n"), ("## Decisions in force", self.decisions, "\n"),
                                     ("## Prior Context", [previous_summary] if previous_summary else [], "\n"),
                                     ("## Active Context (high retention)", self.kept, "\n\n"),
                                     ("## Compressed (mid retention — re-fetch if needed)", self.compressed, "\n")):
            if lines:
                parts += [title, joiner.join(lines), ""]
        omitted = [i for i, action in self.actions.items() if action == "omitted"]
        if self.sparse or self.unlisted or omitted:
            parts.append("## Sparse Index (decayed — pointers only)")
            parts += self.sparse
            if self.unlisted:
                parts.append(f"{len(self.unlisted)} more: {places(self.unlisted)}")
            if omitted:
                parts.append(f"left out, acknowledgements and trivia: {places(omitted)}")
            parts.append("")
        parts.append(_how_back(session))
        return parts

    def counts(self) -> tuple[int, int, int, int]:
        """Entries listed as pointers, compressed, kept (goals and decisions among them), omitted."""
        actions = list(self.actions.values())
        return (actions.count("pointer"), actions.count("compressed"), actions.count("kept"),
                actions.count("omitted"))


def _how_back(session: str | None) -> str:
    if session is not None:
        return (f"<!-- #N is message N of the session (from 0); what this summary shortens is kept in session "
                f"{session}, [id:...] naming the memory: hippo get ID, or get_memory -->")
    return ("<!-- #N is message N of the session (from 0): hippo compact FILE --show N prints it whole. "
            "Nothing was stored: compact with a session (--session NAME, or session_id) to keep each "
            "shortened message as a memory -->")


def digest(scored: Sequence["Scored"], config: CompactionConfig, ids: Mapping[int, Sequence[str]],
           line_of: "LineOf") -> Digest:
    """The meaning layout's sections for ``scored``; ``line_of`` gives an entry's index or
    compressed line body (the original layout's shapes, with its ids)."""
    made = Digest(scored, config, ids)
    planned = [made.plan(entry, line_of) for entry in scored]
    tokens = iter(count_tokens([line for section, line in planned if section != "omitted"]))
    for entry, (section, line) in zip(scored, planned):
        made.put(entry, section, line, next(tokens) if section != "omitted" else 0)
    return made
