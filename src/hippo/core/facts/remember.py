"""The ``remember_facts`` pipeline: extract facts, recognise the known ones, write the outcome.

extract (LLM call 1, or offline rules) → embed all facts in one batch → top 5
live facts each → bands → one classification call for every ambiguous pair
(LLM call 2, or the offline rule) → all actions in one transaction.

Nothing is written until every decision is made, so a provider failure at any
step leaves the database as it was; the actions commit together or not at all.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from hippo.core.facts import offline
from hippo.core.facts.extraction import classify_pairs, extract_with_llm
from hippo.core.facts.recognition import (
    Plan,
    decide,
    find_candidates,
    offline_bands,
    pending_pairs,
    resolve,
    resolve_offline,
)
from hippo.core.hashing import content_hash
from hippo.core.ports import StrengthUpdate
from hippo.core.strength import reinforced_intensity
from hippo.types import Chunk, FactOutcome, LLMCall, MergedWording, RememberResult

if TYPE_CHECKING:
    from hippo.core.embedding import EmbeddingService
    from hippo.core.facts.pairs import Rule
    from hippo.core.ports.scoped import AgentStore
    from hippo.providers.base import LLM

__all__ = ["Planned", "apply_facts", "plan_facts", "remember", "summarize"]


def _dedupe(facts: list[offline.ExtractedFact]) -> list[offline.ExtractedFact]:
    """One entry per distinct wording; a restated fact keeps its strongest reading."""
    kept: dict[str, offline.ExtractedFact] = {}
    for fact in facts:
        key = " ".join(fact.fact.casefold().split()).rstrip(".!")
        if key not in kept or fact.intensity > kept[key].intensity:
            kept[key] = fact
    return list(kept.values())


def remember(
    *,
    store: "AgentStore",
    embedding: "EmbeddingService",
    llm: "LLM | None",
    text: str,
    now: datetime,
    observed_at: datetime | None,
    metadata: dict[str, Any],
    offline_rule: "Rule",
    session_id: str | None = None,
) -> RememberResult:
    calls: list[LLMCall] = []
    if llm is not None:
        facts = extract_with_llm(llm, text, observed_at, calls)
    else:
        facts = offline.extract_facts(text)
    planned = plan_facts(store, embedding, llm, facts, offline_rule, calls)
    with store.transaction():
        outcomes = apply_facts(store, planned, now, observed_at, metadata, session_id=session_id)
    return RememberResult(outcomes, summarize(outcomes), calls, "llm" if llm is not None else "offline")


@dataclass(frozen=True, slots=True)
class Planned:
    """Every fact's decision, made before anything is written (``apply_facts`` writes them)."""

    plans: list[Plan]
    vectors: list[Any]  # each fact's vectors to store: its windows, ``(windows, dimension)``


def plan_facts(store: "AgentStore", embedding: "EmbeddingService", llm: "LLM | None",
               facts: list[offline.ExtractedFact], offline_rule: "Rule", calls: list[LLMCall]) -> Planned:
    """Recognition of extracted facts: embed them in one batch, compare each with the
    most similar live facts, settle the bands, and the ambiguous pairs by one LLM call (or the
    offline rule). Reads only; automatic capture plans its facts here too."""
    facts = _dedupe(facts)
    windows = embedding.windows([f.fact for f in facts])
    vectors = [None if w is None else w[0] for w in windows]  # recognition compares whole statements
    plans = [Plan(fact, cands) for fact, cands in zip(facts, find_candidates(store, facts, vectors))]
    thresholds = embedding.thresholds if llm is not None else offline_bands(embedding.thresholds, offline_rule)
    for plan in plans:
        decide(plan, thresholds)
    pairs = pending_pairs(plans)
    if pairs and llm is not None:
        labels = classify_pairs(llm, [(cand.chunk.content, plan.fact.fact) for plan, cand in pairs], calls)
        resolve(plans, labels, "llm")  # type: ignore[arg-type]
    elif pairs:
        resolve_offline(plans, offline_rule)
    return Planned(plans, windows)


def apply_facts(store: "AgentStore", planned: Planned, now: datetime, observed_at: datetime | None,
                metadata: dict[str, Any], *, source: str = "extraction",
                session_id: str | None = None) -> list[FactOutcome]:
    """Write planned facts; call inside the transaction they must commit with.

    No decision rewrites a stored fact's text, so none removes the wordings merged into it (a new
    text does: ``edits.update_memory``). A duplicate keeps its own wording there when the words differ.
    A fact that supersedes another (the LLM's or the offline rule's update) is a new row: the old one
    keeps its text as a version of the fact's history, and with it its merged wordings, which are
    rewordings of that version and are listed under its id by ``fact_history``. They do not move to
    the new fact, whose text says something else: they would read as rewordings of the new value, and
    a split of one would bring the old value back as a live fact. They go when that version is deleted."""
    return [_apply(store, plan, vector, now, observed_at, metadata, source, session_id)
            for plan, vector in zip(planned.plans, planned.vectors)]


def _apply(store: "AgentStore", plan: Plan, vector: Any, now: datetime,
           observed_at: datetime | None, metadata: dict[str, Any], source: str,
           session_id: str | None) -> FactOutcome:
    from ulid import ULID  # here: importing it loads importlib.metadata, 20 ms a recall never needs

    fact = plan.fact
    base = dict(fact=fact.fact, intensity=fact.intensity, similarity=plan.best_similarity, band=plan.band,
                decided_by=plan.decided_by, reason=plan.reason)
    if plan.action == "duplicate" and plan.target is not None:
        # Read the target again inside the transaction: another writer may have changed it.
        current = store.get_chunks([plan.target.chunk.id])
        if current and current[0].superseded_by is None:
            old = current[0]
            update = StrengthUpdate(old.id, reinforced_intensity(old.running_intensity, old.encounter_count,
                                                                 fact.intensity),
                                    old.encounter_count + 1, old.access_count + 1, now)
            store.update_strength([update])
            if plan.decided_by != "text":  # other words: kept, so a wrong merge can be split back
                store.add_merged([MergedWording(
                    str(ULID()), old.id, fact.fact, now, plan.target.similarity, fact.intensity, metadata=metadata,
                    source=source, session_id=session_id, observed_at=observed_at)])
            return FactOutcome(**base, action="duplicate", id=old.id, matched_id=old.id,  # type: ignore[arg-type]
                               matched_content=old.content, intensity_before=old.running_intensity,
                               intensity_after=update.running_intensity)
        plan = replace(plan, action="new", reason=plan.reason + "; it changed meanwhile, so stored as new")
    chunk = Chunk(
        id=str(ULID()), agent_id=store.agent_id, content=fact.fact, kind="fact", metadata=metadata,
        running_intensity=fact.intensity, encounter_count=1, access_count=0, last_accessed_at=now,
        created_at=now, observed_at=observed_at,
        content_hash=content_hash(fact.fact), has_vector=vector is not None, source=source, session_id=session_id,
    )
    store.insert_chunks([chunk], [vector])
    superseded: list[str] = []
    if plan.action == "supersedes":
        superseded = store.supersede([c.chunk.id for c in plan.superseded], chunk.id)
        store.strengthen_links([(chunk.id, old) for old in superseded], "supersedes", now)
    matched = plan.superseded[0] if plan.superseded else (plan.ambiguous[0] if plan.ambiguous else None)
    return FactOutcome(**base, action=plan.action, id=chunk.id,  # type: ignore[arg-type]
                       matched_id=matched.chunk.id if matched else None,
                       matched_content=matched.chunk.content if matched else None,
                       superseded=superseded, intensity_after=fact.intensity)


def summarize(outcomes: list[FactOutcome]) -> str:
    """The outcome in one sentence: "Learned 2 facts: 1 new (café on Sukhumvit), 1 updated (Redux — ...)"."""
    if not outcomes:
        return "Learned nothing: no facts found."
    label = offline.summary_label
    new = [label(o.fact) for o in outcomes if o.action in ("new", "distinct")]
    updated = [
        f"{label(o.fact)} — reinforced, intensity {o.intensity:.2f} → running avg {o.intensity_after:.2f}"
        for o in outcomes if o.action == "duplicate"
    ]
    replaced = [f"{label(o.matched_content or '')} → {label(o.fact)}" for o in outcomes if o.action == "supersedes"]
    parts = [f"{len(items)} {word} ({'; '.join(items)})"
             for word, items in (("new", new), ("updated", updated), ("replaced", replaced)) if items]
    count = len(outcomes)
    return f"Learned {count} fact{'s' if count != 1 else ''}: " + ", ".join(parts)
