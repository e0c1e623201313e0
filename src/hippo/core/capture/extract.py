"""Automatic capture's two tiers for one window of conversation: a cheap gate (worth remembering, yes or
no), then extraction of memories (content, importance 1-5, type, topic tags, source messages).

With an LLM: two calls through hippo's provider layer and its rules for malformed output (one
retry, then a :class:`~hippo.errors.ProviderError`, never a silent drop); the extraction prompt
holds the memories already stored that resemble the window, so the model does not repeat them.
Without one: an offline gate and an offline extractor (each message that passes becomes a memory
in the speaker's words, typed by cue words, its importance from the intensity signals of
:mod:`hippo.core.facts.offline`).
Either way a message is read as compaction reads it (:func:`kept`): no memory is made of one that
only acknowledges, reacts or reports progress, or has fewer than three content words, and a
decision or an answer records the message it answered.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal, Sequence

from hippo.clock import to_iso
from hippo.core.compaction.kinds import kinds, worth_keeping
from hippo.core.facts import offline
from hippo.core.llm_json import complete_json, folded
from hippo.core.messages import ChatMessage
from hippo.core.ports import Observed
from hippo.types import LLMCall

if TYPE_CHECKING:
    from pydantic import BaseModel

    from hippo.providers.base import LLM

__all__ = ["MEMORY_TYPES", "Draft", "Window", "extract", "gate", "kept", "worth_keeping"]

MEMORY_TYPES = ("decision", "insight", "fact", "preference", "project", "conversation")
MemoryType = Literal["decision", "insight", "fact", "preference", "project", "conversation"]


@dataclass(frozen=True, slots=True)
class Window:
    """About 500 tokens of one session: ``context`` (the overlap, already processed) and ``new``."""

    context: list[Observed]
    new: list[Observed]


@dataclass(frozen=True, slots=True)
class Draft:
    """A memory extracted from a window, before it is written."""

    content: str
    importance: int  # 1 (trivial) to 5 (critical)
    memory_type: str
    tags: list[str]
    sources: list[Observed] = field(default_factory=list)
    # The message this one answered or decided (a question, a proposal), when capture can tell.
    answers: Observed | None = None

    @property
    def observed_at(self) -> datetime | None:
        """When it was said: the time of its latest source message that has one."""
        times = [m.observed_at for m in self.sources if m.observed_at is not None]
        return max(times) if times else None


# -- the offline tier ----------------------------------------------------------------------------

_TYPE_CUES: list[tuple[str, re.Pattern[str]]] = [
    ("decision", re.compile(r"\b(decided|decide|chose|choose|going with|settled on|we'll use|will use|picked|agreed|"
                            r"plan(ning)? to)\b", re.I)),
    ("preference", re.compile(r"\b(prefer|prefers|like|likes|love|loves|hate|hates|dislike|favou?rite|enjoy|"
                              r"enjoys|can't stand)\b", re.I)),
    ("insight", re.compile(r"\b(realized|realised|learned|learnt|noticed|turns out|figured out|lesson)\b", re.I)),
    ("project", re.compile(r"\b(project|repo|repository|codebase|deadline|release|sprint|milestone|deploy\w*)\b",
                           re.I)),
]


Kept = dict[int, "Observed | None"]  # the messages a person would keep, by seq: what each answered


def kept(window: Window) -> Kept:
    """The new messages of a window a person would keep, each with the message it answers (or
    None), by ``seq``. Read as compaction reads a session (:func:`hippo.core.compaction.kinds.kinds`,
    the window's earlier messages giving the context): acknowledgements, reactions and trivia
    ("ok", "👍", "Running the tests now.") are not kept. A decision answers the latest earlier
    message of the other speaker; an assistant's answer, the user's latest request or question."""
    said = [*window.context, *window.new]
    types = kinds([ChatMessage(m.role, m.content, name=m.name) for m in said])
    out: dict[int, Observed | None] = {}
    for n, (message, kind) in enumerate(zip(said, types)):
        if n < len(window.context) or kind == "ephemeral" or not worth_keeping(message.content):
            continue
        out[message.seq] = _answered(said[:n], types[:n], message, kind)
    return out


def _answered(before: list[Observed], types: list[str], message: Observed, kind: str) -> Observed | None:
    for earlier, earlier_kind in zip(reversed(before), reversed(types)):
        if earlier.role == message.role or earlier_kind == "ephemeral":
            continue
        if kind == "decision" or (message.role == "assistant" and earlier_kind == "user_intent"):
            return earlier
        return None
    return None


def _offline_draft(message: Observed) -> Draft:
    kind = next((name for name, cue in _TYPE_CUES if cue.search(message.content)), None)
    kind = kind or ("conversation" if message.role == "assistant" else "fact")
    intensity = offline.intensity_of(offline.signals_of(message.content))
    speaker = message.name or ("Assistant" if message.role == "assistant" else None)
    content = f"{speaker}: {message.content}" if speaker else message.content
    return Draft(content, max(1, min(5, round(intensity * 5))), kind, [], [message])


# -- the LLM tier --------------------------------------------------------------------------------

GATE_PROMPT = """\
You decide whether an excerpt of a conversation holds anything worth keeping in an AI assistant's
long-term memory: facts about the people in it, their preferences, decisions, plans, projects,
events with dates, lessons learned. Greetings, thanks, acknowledgements and small talk do not.
Messages marked "earlier" were already considered; judge only the new ones.

Answer with JSON only, exactly in this shape:
{"remember": true or false, "reason": "<a few words>"}
"""

EXTRACTION_PROMPT = """\
You capture long-term memories from an excerpt of a conversation, for an AI assistant's memory.

Rules:
- Each memory is one self-contained statement: use names, not pronouns, and keep names, numbers,
  places and dates exactly as given; turn relative dates into absolute ones when the message time
  is given.
- Write in the language of the conversation. Never translate.
- Only what the new messages say (messages marked "earlier" are context). Skip small talk.
- The memories already stored are listed: do not repeat one; when the excerpt adds to one, write
  the combined statement.
- memory_type is one of: decision, insight, fact, preference, project, conversation.
- importance: 1 (trivial) to 5 (critical).
- topic_tags: one to three short lower-case tags.
- sources: the numbers of the messages the memory comes from.
- If nothing is worth remembering, return no memories.

Answer with JSON only, exactly in this shape:
{"memories": [{"content": "<statement>", "importance": 3, "memory_type": "fact", "topic_tags": ["<tag>"],
"sources": [1]}]}
"""


def _models() -> tuple[type["BaseModel"], type["BaseModel"]]:
    global _MODELS
    if _MODELS is None:
        from pydantic import BaseModel, Field

        class Verdict(BaseModel):
            remember: bool
            reason: str = ""

        class Item(BaseModel):
            content: str = Field(min_length=1, max_length=4000)
            importance: int = Field(ge=1, le=5)
            memory_type: Annotated[MemoryType, folded(str.lower)] = "fact"
            topic_tags: list[str] = Field(default_factory=list, max_length=8)
            sources: list[int] = Field(default_factory=list)

        class Extraction(BaseModel):
            memories: list[Item]

        _MODELS = (Verdict, Extraction)
    return _MODELS


_MODELS: tuple[type["BaseModel"], type["BaseModel"]] | None = None


def _numbered(window: Window) -> str:
    lines = []
    for n, m in enumerate([*window.context, *window.new], start=1):
        when = f", {to_iso(m.observed_at)}" if m.observed_at else ""
        earlier = "earlier, " if n <= len(window.context) else ""
        lines.append(f"[{n}] ({earlier}{m.name or m.role}{when}) {m.content}")
    return "\n".join(lines)


# -- the two tiers -------------------------------------------------------------------------------

def gate(window: Window, llm: "LLM | None", calls: list[LLMCall], keep: Kept) -> bool:
    """The cheap gate: is anything in the window's new messages worth remembering?
    ``keep``: :func:`kept` of the window."""
    if llm is None:
        return bool(keep)
    verdict_model, _ = _models()
    answer = complete_json(llm, GATE_PROMPT, f"The excerpt:\n<<<\n{_numbered(window)}\n>>>", verdict_model,
                           purpose="capture-gate", calls=calls, max_tokens=128)
    return bool(answer.remember)  # type: ignore[attr-defined]


def extract(window: Window, llm: "LLM | None", known: Sequence[str], calls: list[LLMCall],
            keep: Kept) -> list[Draft]:
    """The window's memories; ``known``: stored memories like it (the LLM is told not to repeat them);
    ``keep``: :func:`kept` of the window, read once for the gate and the extraction."""
    if llm is None:
        return [replace(_offline_draft(m), answers=keep[m.seq]) for m in window.new if m.seq in keep]
    _, extraction_model = _models()
    stored = "\n".join(f"- {text}" for text in known) or "(none)"
    prompt = f"Memories already stored:\n{stored}\n\nThe excerpt:\n<<<\n{_numbered(window)}\n>>>"
    answer: Any = complete_json(llm, EXTRACTION_PROMPT, prompt, extraction_model, purpose="capture-extract",
                                calls=calls, list_key="memories")
    numbered = [*window.context, *window.new]
    drafts = []
    for item in answer.memories:
        cited = [numbered[n - 1] for n in item.sources if 1 <= n <= len(numbered)]
        sources = [m for m in cited if m in window.new] or list(window.new)
        if not any(m.seq in keep for m in sources):
            continue  # drawn only from acknowledgements and trivia
        tags = [t.strip().lower() for t in item.topic_tags if t.strip()][:3]
        answers = next((keep[m.seq] for m in sources if keep.get(m.seq) is not None), None)
        drafts.append(Draft(item.content.strip(), item.importance, item.memory_type, tags, sources, answers))
    return drafts
