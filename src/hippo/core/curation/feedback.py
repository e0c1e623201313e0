"""Agent feedback: reinforce and demote, and the bounded factor feedback puts on a score.

A memory's feedback is a signed count. A reinforcement ("this memory helped") adds
``reinforce_weight`` (3 by default) and restarts its recency clock (``reinforced_at``); a
demotion ("this is stale or wrong") takes ``demote_weight`` (1) away. The asymmetry is deliberate:
one confirmation outweighs three demotions. A memory that is recalled and not acted on gets no
signal at all.

Recall multiplies a hit's final score by ``exp(feedback x 0.2)``, with two bounds so
that feedback reorders what is relevant and never stands in for relevance:

- the exponent stays within +-1: a factor from 0.37 to 2.72 (feedback from -5 to +5);
- the factor's distance from 1 is scaled by the hit's own relevance (0 to 1). On a keyword score
  alone (BM25) a memory the query does not match scores 0, so the full factor could not lift it;
  hippo's score also adds strength and recency, which the full factor would lift for an unrelated
  memory.
  Scaled, a memory the query barely touches moves little, and one below ``min_relevance`` is not
  shown whatever its count.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import TYPE_CHECKING

from hippo.core import validation as v
from hippo.errors import NotFound

if TYPE_CHECKING:
    from hippo.core.ports.scoped import AgentStore

__all__ = ["FEEDBACK_BOUND", "FEEDBACK_STEP", "factor", "give"]

FEEDBACK_STEP = 0.2  # the factor is exp(feedback x 0.2)
FEEDBACK_BOUND = 1.0  # the exponent's bound: feedback beyond +-5 changes nothing more


def factor(feedback: int, relevance: float) -> float:
    """What a hit's final score is multiplied by, for its ``feedback`` count and own ``relevance``."""
    if not feedback:
        return 1.0
    full = math.exp(max(-FEEDBACK_BOUND, min(FEEDBACK_BOUND, feedback * FEEDBACK_STEP)))
    return 1.0 + (full - 1.0) * max(0.0, min(1.0, relevance))


def give(store: "AgentStore", chunk_id: str, delta: int, now: datetime, *, reinforce: bool) -> None:
    """Add ``delta`` to a memory's feedback; a reinforcement also restarts its recency clock."""
    chunk_id = v.check_chunk_id(chunk_id)
    if not store.add_feedback(chunk_id, delta, now if reinforce else None):
        raise NotFound(f"no memory {chunk_id} for agent {store.agent_id!r}")
