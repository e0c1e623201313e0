"""Automatic capture: observe a conversation now, turn it into memories later.

``observe`` only reads the messages and appends them to the session's inbox in one transaction,
so it returns in about a millisecond whatever the LLM's speed, and what it acknowledged survives
a crash. ``process_pending`` (on demand, or ``hippo serve``'s worker) cuts each session's new
messages into windows of about ``capture_window_tokens`` with ``capture_overlap_tokens`` of the
previous window as context (counted with a real tokenizer, :mod:`hippo.core.tokens`), asks the
gate and the extractor (:mod:`hippo.core.capture.extract`), and writes the result: memories
through the one writer (a near-duplicate strengthens the memory held), facts through
``remember_facts`` recognition. The session's cursor moves by compare-and-set in the same
transaction as those writes, so a crash before the commit leaves the messages pending, and two
processes never both write one window: nothing acknowledged is lost, nothing processed twice.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Sequence

from hippo.core import validation as v
from hippo.core.capture.extract import Draft, Window, extract, gate, kept
from hippo.core.facts.offline import ExtractedFact
from hippo.core.facts.remember import Planned, apply_facts, plan_facts
from hippo.core.memories import writer
from hippo.core.memories.writer import ANSWERS, SOURCE_IDS, MemoryInput
from hippo.core.messages import read_messages
from hippo.core.ports import ChunkFilter, Observed, SearchQuery
from hippo.core.ports.scoped import AgentStore
from hippo.core.tokens import count_tokens
from hippo.errors import InvalidInput
from hippo.types import Captured, LLMCall, Observation

if TYPE_CHECKING:
    from hippo.config import Settings
    from hippo.core.embedding import EmbeddingService
    from hippo.core.facts.pairs import Rule
    from hippo.core.memories.reembed import Progress
    from hippo.core.ports import Store
    from hippo.providers.base import LLM

__all__ = ["BATCH", "observe", "process_pending", "windows"]

BATCH = 200  # messages of one session read and committed at a time
_FACT_TYPES = ("fact", "preference")  # what an LLM extraction hands to remember_facts recognition


class _Overtaken(Exception):
    """Another process moved the session's cursor first: this window's writes roll back."""


def observe(store: "AgentStore", messages: Sequence[Any], session_id: Any,
            settings: "Settings") -> Observation:
    """Keep the messages worth capturing in the session's inbox (durable when this returns)."""
    from ulid import ULID  # here: importing it loads importlib.metadata, 20 ms a recall never needs

    session = v.check_session_id(session_id)
    if session is None:
        raise InvalidInput("observe needs a session_id")
    read = read_messages(messages)
    roles = set(settings.capture_roles.replace(" ", "").split(","))
    rows = [Observed(0, m.id or f"m-{ULID()}", m.role, m.name,
                     v.check_text(m.text, f"message {n}", max_chars=settings.max_content_chars), m.timestamp)
            for n, m in enumerate(read) if m.role in roles and m.text]
    accepted = store.observe_messages(session, rows)
    return Observation(session, len(accepted), len(rows) - len(accepted), len(read) - len(rows),
                       [message_id for _, message_id in accepted])


def windows(context: list[Observed], new: list[Observed], size: int, overlap: int) -> list[Window]:
    """The windows over ``new``: each about ``size`` tokens, led by about ``overlap`` tokens
    of what came before (``context`` for the first); a message longer than a window is one alone."""
    tokens = dict(zip((m.seq for m in [*context, *new]), count_tokens([_said(m) for m in [*context, *new]])))
    cut: list[Window] = []
    lead = _tail(context, tokens, overlap)
    current: list[Observed] = []
    used = sum(tokens[m.seq] for m in lead)
    for message in new:
        if current and used + tokens[message.seq] > size:
            cut.append(Window(lead, current))
            lead = _tail([*lead, *current], tokens, overlap)
            current, used = [], sum(tokens[m.seq] for m in lead)
        current.append(message)
        used += tokens[message.seq]
    if current:
        cut.append(Window(lead, current))
    return cut


def _tail(messages: list[Observed], tokens: dict[int, int], budget: int) -> list[Observed]:
    """The last messages that fit ``budget`` tokens together."""
    kept: list[Observed] = []
    for message in reversed(messages):
        if sum(tokens[m.seq] for m in kept) + tokens[message.seq] > budget:
            break
        kept.insert(0, message)
    return kept


def _said(message: Observed) -> str:
    return f"{message.name or message.role}: {message.content}"


def process_pending(store: "Store", embedding: "EmbeddingService", llm: "LLM | None", agent_id: str | None,
                    settings: "Settings", now: datetime, offline_rule: "Rule",
                    progress: "Progress | None" = None) -> Captured:
    """Process every session with pending messages (``agent_id`` None: every agent's); ``progress``
    is called with (messages processed, messages pending) after each batch."""
    totals = dict(sessions=0, messages=0, windows=0, gated_in=0, memories=0, merged=0, facts=0)
    ids: list[str] = []
    calls: list[LLMCall] = []
    pending = store.pending_messages(agent_id) if progress is not None else 0
    for agent, session in store.pending_sessions(agent_id):
        totals["sessions"] += 1
        while True:
            done = _process_batch(AgentStore(store, agent), embedding, llm, session, settings, now, offline_rule,
                                  calls)
            if done is None:
                break
            for key, value in done.items():
                if key == "ids":
                    ids += value
                else:
                    totals[key] += value
            if progress is not None:
                progress(totals["messages"], max(pending, totals["messages"]))
    return Captured(**totals, ids=ids, llm_calls=calls)


def _process_batch(store: "AgentStore", embedding: "EmbeddingService", llm: "LLM | None", session: str,
                   settings: "Settings", now: datetime, offline_rule: "Rule",
                   calls: list[LLMCall]) -> dict[str, Any] | None:
    """One batch of one session, committed with the cursor; None when nothing was left (or another
    process took the batch)."""
    cursor = store.capture_cursor(session)
    batch = store.observed(session, after=cursor, limit=BATCH)
    if not batch:
        return None
    context = store.observed_tail(session, upto=cursor, limit=20)
    cut = windows(context, batch, settings.capture_window_tokens, settings.capture_overlap_tokens)
    drafts: list[Draft] = []
    gated_in = 0
    for window in cut:
        keep = kept(window)
        if gate(window, llm, calls, keep):
            gated_in += 1
            drafts += extract(window, llm, _known(store, embedding, window) if llm else (), calls, keep)
    facts = [d for d in drafts if llm is not None and d.memory_type in _FACT_TYPES]
    memories = [d for d in drafts if d not in facts]
    inputs = [writer.check(MemoryInput(d.content, _metadata(d), d.importance / 5, d.observed_at, "conversation",
                                       session), max_chars=settings.max_content_chars) for d in memories]
    # The model's work (embedding, near-duplicate searches) before the transaction: it takes seconds,
    # and every other writer, another process's observe included, waits while the write lock is held.
    prepared = writer.prepare(store, embedding, inputs, merge_near=True)
    planned = plan_facts(store, embedding, llm, [ExtractedFact(d.content, d.importance / 5, ("capture",))
                                                        for d in facts], offline_rule, calls)
    by_text = {d.content: d for d in facts}  # a planned fact's text is its draft's content
    keep_from = _keep_from(cut, batch)
    try:
        with store.transaction():
            if not store.advance_cursor(session, cursor, batch[-1].seq, keep_from):
                raise _Overtaken
            written = writer.apply(store, prepared, now)
            outcomes = [o for plan, vector in zip(planned.plans, planned.vectors) for o in apply_facts(
                store, Planned([plan], [vector]), now, by_text[plan.fact.fact].observed_at,
                _metadata(by_text[plan.fact.fact]), source="conversation", session_id=session)]
    except _Overtaken:
        return None
    return dict(messages=len(batch), windows=len(cut), gated_in=gated_in,
                memories=sum(r.action == "inserted" for r in written),
                merged=sum(r.action == "strengthened" for r in written), facts=len(outcomes),
                ids=[r.id for r in written] + [o.id for o in outcomes if o.id])


def _keep_from(cut: list[Window], batch: list[Observed]) -> int:
    """The first seq the next windows may still need as overlap: text before it can go."""
    last = cut[-1]
    lead = [*last.context, *last.new]
    return lead[0].seq if lead else batch[-1].seq + 1


def _metadata(draft: Draft) -> dict[str, Any]:
    """The memory's type and topic tags, and the source messages' ids."""
    metadata: dict[str, Any] = {"memory_type": draft.memory_type,
                                SOURCE_IDS: [m.message_id for m in draft.sources]}
    if draft.tags:
        metadata["tags"] = draft.tags
    if draft.answers is not None:
        metadata[ANSWERS] = draft.answers.message_id
    return metadata


def _known(store: "AgentStore", embedding: "EmbeddingService", window: Window) -> list[str]:
    """The stored memories most like the window (shown in the extraction prompt, so it does not repeat them)."""
    text = "\n".join(m.content for m in window.new)
    found = store.search(SearchQuery(embedding.query(text), (), ChunkFilter(), 5, score_all=False))
    best = sorted(found.similarity.items(), key=lambda pair: -pair[1])[:5]
    return [c.content for c in store.get_chunks([i for i, _ in best])]
