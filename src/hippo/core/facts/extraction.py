"""The two LLM calls of ``remember_facts``: fact extraction and tie-break classification.

Prompts ask for atomic third-person facts with an intensity from the signals
and calibration bands of :mod:`hippo.core.facts.offline` (the table in its
docstring), in the user's own language; and one
classification call that covers every ambiguous pair of one input.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Literal

from hippo.clock import to_iso
from hippo.core.facts.offline import ExtractedFact
from hippo.core.llm_json import MalformedAnswer, complete_json, folded
from hippo.providers.base import LLM
from hippo.types import LLMCall

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["EXTRACTION_PROMPT", "CLASSIFICATION_PROMPT", "classify_pairs", "extract_with_llm"]

Label = Literal["duplicate", "supersedes", "distinct"]

EXTRACTION_PROMPT = """\
You extract durable facts from what a user said, for the user's long-term memory.

Rules:
- Each fact is atomic: one piece of information in one short sentence.
- Write facts in the third person about the user, starting with "User" when the
  fact is about them ("User lives in Berlin", "User strongly dislikes Redux").
  Facts about the world stay as they are ("The API rate limit is 100 req/min").
- Write every fact in the language the user wrote in. Never translate.
- Keep names, numbers, places and dates exactly as given.
- When the time of the statement is given, turn relative times ("yesterday",
  "next Friday", "last year") into absolute dates.
- Skip greetings, questions, requests to the assistant and small talk with no
  lasting information. If nothing is worth remembering, return no facts.
- Rate each fact's intensity from 0.0 to 1.0: how strongly and durably it was said.
  Signals: emotional charge ("hate", "love", "nightmare", "incredible");
  consequence language ("cost us the client", "broke production"); absolute
  language ("never", "always", "I refuse", "non-negotiable"); time or effort
  invested ("spent three days", "been struggling with"); identity statements
  ("I'm a backend person", "I don't do frontend"); explicit importance
  ("remember this", "this is critical"); repeating or elaborating the same
  point; reversing an earlier position.
  Calibration:
    0.1-0.2  casual aside, no signal
    0.3-0.5  clear statement with mild opinion
    0.6-0.8  strong conviction or emotional charge
    0.85-1.0 sustained pattern and identity-level

Answer with JSON only, exactly in this shape:
{"facts": [{"fact": "<one fact>", "intensity": <number from 0 to 1>}]}
"""

CLASSIFICATION_PROMPT = """\
You compare newly learned facts with facts already in memory. For every
numbered pair, decide:
- DUPLICATE: the same information in other words.
- SUPERSEDES: the same topic with a new value, so the new fact replaces the
  existing one (moved to another city, changed job, changed preference).
- DISTINCT: related, but both are true at the same time.

Answer with JSON only, with one decision for every pair, exactly in this shape:
{"decisions": [{"pair": <number>, "label": "DUPLICATE" | "SUPERSEDES" | "DISTINCT"}]}
"""


def _models() -> tuple[type["BaseModel"], type["BaseModel"]]:
    """The answer models, built on first use so that pydantic loads only when needed."""
    global _EXTRACTION, _CLASSIFICATION
    if _EXTRACTION is None:
        from pydantic import AliasChoices, BaseModel, Field

        class Fact(BaseModel):
            fact: str = Field(min_length=1, max_length=2000, validation_alias=AliasChoices("fact", "text", "statement"))
            intensity: float = Field(ge=0.0, le=1.0)

        class Extraction(BaseModel):
            facts: list[Fact]

        class Decision(BaseModel):
            pair: int
            label: Annotated[Literal["DUPLICATE", "SUPERSEDES", "DISTINCT"], folded(str.upper)]

        class Classification(BaseModel):
            decisions: list[Decision]

        _EXTRACTION, _CLASSIFICATION = Extraction, Classification
    return _EXTRACTION, _CLASSIFICATION  # type: ignore[return-value]


_EXTRACTION: type["BaseModel"] | None = None
_CLASSIFICATION: type["BaseModel"] | None = None


def extract_with_llm(llm: LLM, text: str, observed_at: datetime | None, calls: list[LLMCall]) -> list[ExtractedFact]:
    """LLM call 1: the facts of ``text`` with their intensities."""
    extraction_model, _ = _models()
    when = f"The statement was made at {to_iso(observed_at)}.\n\n" if observed_at else ""
    prompt = f"{when}What the user said:\n<<<\n{text}\n>>>"
    answer = complete_json(llm, EXTRACTION_PROMPT, prompt, extraction_model, purpose="extract", calls=calls,
                           list_key="facts")
    facts = [ExtractedFact(f.fact.strip(), round(f.intensity, 3), ("llm",)) for f in answer.facts]  # type: ignore[attr-defined]
    return [f for f in facts if f.fact]


def classify_pairs(llm: LLM, pairs: list[tuple[str, str]], calls: list[LLMCall]) -> list[Label]:
    """LLM call 2: one label per ``(existing, new)`` pair, all pairs in one request."""
    _, classification_model = _models()
    lines = [f"{i}. existing: {existing}\n   new: {new}" for i, (existing, new) in enumerate(pairs, start=1)]
    wanted = set(range(1, len(pairs) + 1))

    def every_pair_decided(answer: "BaseModel") -> None:
        got = {d.pair for d in answer.decisions}  # type: ignore[attr-defined]
        if not wanted <= got:
            missing = ", ".join(map(str, sorted(wanted - got)))
            raise MalformedAnswer(f"no decision for pair {missing}")

    answer = complete_json(llm, CLASSIFICATION_PROMPT, "\n".join(lines), classification_model,
                           purpose="classify", calls=calls, list_key="decisions", check=every_pair_decided)
    by_pair = {d.pair: d.label.lower() for d in answer.decisions}  # type: ignore[attr-defined]
    return [by_pair[i] for i in range(1, len(pairs) + 1)]
