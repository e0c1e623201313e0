"""Context surfacing: relevant memories offered as topics come up, unasked.

``surface`` reads the last few messages (``surface_messages``, 3 by default) as the query,
recalls, keeps hits whose own match to it reaches ``surface_threshold`` and that this session was
not shown before nor captured from the messages given (what the conversation says right now), and
renders them as a compact block with their ids within ``max_tokens`` (counted
with the real tokenizer of :mod:`hippo.core.tokens`). What a session was shown is kept in the
database, so every server and every restart agrees. Small talk surfaces nothing: when the newest
user message would not pass the capture gate ("thanks!", "ok"), there is no question worth asking.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Sequence

from hippo.core import validation as v
from hippo.core.capture.extract import worth_keeping
from hippo.core.messages import read_messages
from hippo.core.ports import ChunkFilter
from hippo.core.recall.pool import as_hits, ranked_pool, touched
from hippo.core.strength import RETRIEVAL_BOOST
from hippo.core.tokens import count_tokens
from hippo.errors import InvalidInput
from hippo.types import Hit, Surfaced

if TYPE_CHECKING:
    from hippo.config import Settings
    from hippo.core.embedding import EmbeddingService
    from hippo.core.fusion import Fusion
    from hippo.core.ports.scoped import AgentStore
    from hippo.core.strength import ScoreWeights

__all__ = ["HEADER", "surface"]

HEADER = "Relevant memories (hippo):"
_CANDIDATES = 20
# Shown unasked, a memory must be near the prompt in meaning, not only share a word with it: the
# keyword side is scaled against the pool's best, so one ordinary shared word ("write", "seven")
# reaches a full keyword score. Cosine above the model's unrelated level, rescaled as recall's
# fusion reads it. Measured with all-MiniLM-L6-v2 on tests/contract/capture/test_surfacing_quiet.py's store:
# memories a related prompt should surface 0.55-0.79; those 224 unrelated prompts surfaced on one
# shared word 0.18-0.29 (and 0.47 for a dinner question beside a note on the team dinner).
MEANING = 0.35
_BUDGET = (20, 20_000)


def surface(store: "AgentStore", embedding: "EmbeddingService", messages: Sequence[Any],
            session_id: Any, max_tokens: Any, now: datetime, *, settings: "Settings", fusion: "Fusion",
            weights: "ScoreWeights") -> Surfaced:
    session = v.check_session_id(session_id)
    if session is None:
        raise InvalidInput("surface needs a session_id")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or not _BUDGET[0] <= max_tokens <= _BUDGET[1]:
        raise InvalidInput(f"max_tokens must be a whole number from {_BUDGET[0]} to {_BUDGET[1]}, "
                           f"got {v.shown(max_tokens)}")
    given = read_messages(messages)
    recent = [m for m in given if m.role in ("user", "assistant") and m.text][-settings.surface_messages:]
    newest = next((m for m in reversed(recent) if m.role == "user"), recent[-1] if recent else None)
    if newest is None or not worth_keeping(newest.text):  # small talk asks for nothing
        return Surfaced("", 0, [])
    query = "\n".join(m.text for m in recent)[-settings.max_query_chars:]
    vector = embedding.query(query)
    hits, follows = _relevant(store, query, vector, now, settings, fusion, weights)
    # A memory this session captured from a message given here is what the conversation says right
    # now (Claude Code's hooks capture after every reply): not news, and sharing the query's very
    # words, it would outweigh an older memory on keywords. Searched again without those.
    said = {m.id for m in given if m.id}
    echoes = frozenset(h.id for h in hits
                       if h.chunk.session_id == session and said.intersection(h.chunk.source_ids))
    if echoes:
        hits, follows = _relevant(store, query, vector, now, settings, fusion, weights, exclude=echoes)
    shown = store.surfaced_ids(session)
    # A memory worth showing brings the later word on its subject that recall put above it: the
    # decision that closed the thread a question opened, the new value of a changed fact.
    passing = {h.id for h in hits if _own_match(h, fusion) >= settings.surface_threshold}
    fresh = [h for h in hits if h.id not in shown and (h.id in passing or follows.get(h.id) in passing)]
    text, kept = _render(fresh, max_tokens)
    if not kept:
        return Surfaced("", 0, [])
    with store.transaction():  # what it shows counts as retrieved, and as shown to this session
        store.record_retrievals([h.id for h in kept], now, boost=RETRIEVAL_BOOST)
        store.mark_surfaced(session, [h.id for h in kept], now)
    return Surfaced(text, count_tokens([text])[0], touched(kept, now))


def _relevant(store: "AgentStore", query: str, vector: Any, now: datetime, settings: "Settings", fusion: "Fusion",
              weights: "ScoreWeights", exclude: frozenset[str] = frozenset()) -> tuple[list[Hit], dict[str, str]]:
    """The candidates as hits, and for each put above another as the later word on its subject,
    the one it follows."""
    ranked, _ = ranked_pool(store, query, vector, ChunkFilter(), _CANDIDATES, now, settings=settings, fusion=fusion,
                            weights=weights, exclude=exclude)
    return as_hits(store, ranked), {r.standing.id: r.follows for r in ranked if r.follows}


def _own_match(hit: Hit, fusion: "Fusion") -> float:
    """How well the memory's own words and meaning match the prompt. Neither what its conversation
    lent (context) nor the preference for a day the prompt names counts: both reorder, and shown
    unasked, a memory must be about what is being said (issue 33: "Can we ship the billing fix
    today?" surfaced a key-rotation error stored the same day, relevance 0.52 at cosine 0.08).
    With a model, its meaning must also reach :data:`MEANING`; keyword-only memory has none."""
    if hit.similarity is not None and fusion.rescaled(hit.similarity) < MEANING:
        return 0.0
    return fusion.relevance(hit.similarity, hit.keyword)


def _line(hit: Hit) -> str:
    when = hit.chunk.observed_at or hit.chunk.created_at
    return f"- [id:{hit.id}] {' '.join(hit.content.split())} ({when.date().isoformat()})"


def _render(hits: list[Hit], max_tokens: int) -> tuple[str, list[Hit]]:
    """The block, best first, with every hit that fits the budget (one too long is left out)."""
    lines = [_line(h) for h in hits]
    sizes = count_tokens([HEADER, *lines])
    used, kept, shown = sizes[0], [], []
    for hit, line, size in zip(hits, lines, sizes[1:]):
        if used + size + 1 <= max_tokens:  # +1: the line break
            used += size + 1
            kept.append(hit)
            shown.append(line)
    text = "\n".join([HEADER, *shown]) if kept else ""
    while kept and count_tokens([text])[0] > max_tokens:  # word pieces across a line break may differ
        kept, shown = kept[:-1], shown[:-1]
        text = "\n".join([HEADER, *shown]) if kept else ""
    return text, kept
