"""Recognition: is a new fact a duplicate, a replacement, or new?

Each fact is compared with the live facts most similar to it. The embedder's
bands decide the clear cases; pairs in the ambiguous band are decided together,
by one LLM call or, offline, by the rule in :func:`hippo.core.facts.offline.relation`
(which never merges a fact that adds information).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Callable, Literal

from hippo.core.facts.offline import ExtractedFact, non_latin_share
from hippo.core.keywords import ENGLISH_STOPWORDS, keyword_terms
from hippo.core.ports import ChunkFilter, SearchQuery
from hippo.providers.base import Thresholds
from hippo.types import Chunk

if TYPE_CHECKING:
    import numpy as np

    from hippo.core.ports.scoped import AgentStore

__all__ = ["Candidate", "Plan", "decide", "find_candidates", "offline_bands", "pending_pairs", "resolve",
           "resolve_offline", "same_words"]

Label = Literal["duplicate", "supersedes", "distinct"]
TOP_K = 5
_FACTS_ONLY = ChunkFilter(kinds=("fact",))
# Two different texts with (near) identical vectors are not evidence of a
# duplicate: MiniLM maps every Thai sentence to the same [UNK] vector.
_DEGENERATE = 0.9999


@dataclass(frozen=True, slots=True)
class Candidate:
    chunk: Chunk
    similarity: float | None  # None: found by keywords while vectors were unavailable


@dataclass
class Plan:
    """The decision for one fact, filled in as recognition proceeds."""

    fact: ExtractedFact
    candidates: list[Candidate]
    band: Literal["duplicate", "ambiguous", "new"] = "new"
    action: Literal["new", "distinct", "duplicate", "supersedes"] = "new"
    decided_by: Literal["band", "llm", "offline", "text"] = "band"
    reason: str = ""
    target: Candidate | None = None
    superseded: list[Candidate] = field(default_factory=list)
    ambiguous: list[Candidate] = field(default_factory=list)

    @property
    def best_similarity(self) -> float | None:
        sims = [c.similarity for c in self.candidates if c.similarity is not None]
        return max(sims) if sims else None


def same_words(a: str, b: str) -> bool:
    """Equal up to case, spacing and final punctuation."""
    def norm(text: str) -> str:
        return re.sub(r"\s+", " ", text).strip().rstrip(".!").casefold()

    return norm(a) == norm(b)


def find_candidates(
    store: "AgentStore", facts: list[ExtractedFact], vectors: list["np.ndarray | None"]
) -> list[list[Candidate]]:
    """The top live facts for each new fact: by vector, or by keywords when it has none."""
    found: list[list[tuple[str, float | None]]] = []
    for fact, vector in zip(facts, vectors):
        if vector is not None:
            hits = store.search(SearchQuery(vector, (), _FACTS_ONLY, TOP_K))
            ranked = sorted(hits.similarity.items(), key=lambda item: -item[1])
            found.append([(chunk_id, similarity) for chunk_id, similarity in ranked])
            continue
        terms = tuple(keyword_terms(fact.fact, stopwords=ENGLISH_STOPWORDS))
        hits = store.search(SearchQuery(None, terms, _FACTS_ONLY, TOP_K))
        found.append([(chunk_id, None) for chunk_id, _ in sorted(hits.bm25.items(), key=lambda item: -item[1])])
    ids = list(dict.fromkeys(chunk_id for row in found for chunk_id, _ in row))
    chunks = {c.id: c for c in store.get_chunks(ids)}
    return [[Candidate(chunks[i], s) for i, s in row if i in chunks] for row in found]


def decide(plan: Plan, thresholds: Thresholds) -> None:
    """Settle what the bands can settle; leave ambiguous candidates in ``plan.ambiguous``."""
    fact = plan.fact.fact
    for cand in plan.candidates:
        if same_words(cand.chunk.content, fact):
            plan.band, plan.action, plan.decided_by, plan.target = "duplicate", "duplicate", "text", cand
            plan.reason = "the same words are already stored"
            return
    best = max((c for c in plan.candidates if c.similarity is not None), key=lambda c: c.similarity or 0.0,
               default=None)
    readable = not thresholds.latin_only or best is None or not (
        non_latin_share(fact) > 0.5 or non_latin_share(best.chunk.content) > 0.5)
    if best is not None and readable and thresholds.duplicate <= best.similarity < _DEGENERATE:  # type: ignore[operator]
        plan.band, plan.action, plan.target = "duplicate", "duplicate", best
        plan.reason = f"similarity {best.similarity:.2f} ≥ {thresholds.duplicate:.2f}: the same fact"
        return
    plan.ambiguous = [
        c for c in plan.candidates if c.similarity is None or c.similarity >= thresholds.ambiguous
    ]
    if plan.ambiguous:
        plan.band = "ambiguous"
        return
    plan.reason = (
        f"no stored fact reaches similarity {thresholds.ambiguous:.2f}"
        + (f" (best {best.similarity:.2f})" if best is not None else "")
    )


def offline_bands(thresholds: Thresholds, rule: object) -> Thresholds:
    """The bands without an LLM: a rule that ``decides_duplicates`` (the pair model) also reads the pairs
    above the duplicate band, so no cosine merges on its own."""
    return replace(thresholds, duplicate=1.01) if getattr(rule, "decides_duplicates", False) else thresholds


def pending_pairs(plans: list[Plan]) -> list[tuple[Plan, Candidate]]:
    return [(plan, cand) for plan in plans for cand in plan.ambiguous]


def resolve(
    plans: list[Plan],
    labels: list[Label | None],
    decided_by: Literal["llm", "offline"],
) -> None:
    """Turn the labels of the ambiguous pairs into one action per fact.

    A duplicate of any candidate wins (the most similar one); else every
    candidate it supersedes is replaced; else the fact is distinct.
    """
    by_plan: dict[int, list[tuple[Candidate, Label | None]]] = {}
    for (plan, cand), label in zip(pending_pairs(plans), labels):
        by_plan.setdefault(id(plan), []).append((cand, label))
    for plan in plans:
        decisions = by_plan.get(id(plan))
        if not decisions:
            continue
        plan.decided_by = decided_by
        who = "the LLM" if decided_by == "llm" else "the offline rule"
        duplicates = [c for c, label in decisions if label == "duplicate"]
        if duplicates:
            plan.action, plan.target = "duplicate", max(duplicates, key=lambda c: c.similarity or 0.0)
            plan.reason = f"{who} judged it the same as “{plan.target.chunk.content}”"
        elif supersedes := [c for c, label in decisions if label == "supersedes"]:
            plan.action, plan.superseded = "supersedes", supersedes
            plan.reason = f"{who} judged it to replace " + ", ".join(f"“{c.chunk.content}”" for c in supersedes)
        else:
            plan.action = "distinct"
            plan.reason = f"{who} judged it distinct from " + ", ".join(
                f"“{c.chunk.content}”" for c, _ in decisions)


def resolve_offline(plans: list[Plan], rule: Callable[[str, str, float | None], Label | None]) -> None:
    """Label every ambiguous pair with ``rule(existing, new, cosine)``; no answer is distinct."""
    labels: list[Label | None] = [rule(cand.chunk.content, plan.fact.fact, cand.similarity) or "distinct"
                                  for plan, cand in pending_pairs(plans)]
    resolve(plans, labels, "offline")
