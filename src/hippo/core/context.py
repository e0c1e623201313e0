"""What every capability of one agent works with, handed over explicitly: the agent's id and
store, the settings, the embedding and the LLM, the clock, and the scoring of recall.

:class:`~hippo.core.memory.Memory` builds one :class:`AgentContext` and gives it to each of its
capabilities (blocks, facts, recall, experiences, capture, compaction, curation, raw memories);
a capability reads what it needs from it and nothing from the facade.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING

from hippo.core import validation as v
from hippo.core.embedding import EmbeddingService
from hippo.core.facts import pairs
from hippo.core.fusion import Fusion
from hippo.core.ports.scoped import AgentStore
from hippo.core.strength import ScoreWeights
from hippo.errors import ConfigError

if TYPE_CHECKING:
    from hippo.clock import Clock
    from hippo.config import Settings
    from hippo.core.facts.pairs import Rule
    from hippo.core.ports import Store
    from hippo.providers.base import LLM, Embedder

__all__ = ["AgentContext", "Capability", "agent_context"]


@dataclass(frozen=True)
class AgentContext:
    """One agent's view of hippo's parts. Immutable: another agent gets a context of its own."""

    agent_id: str
    store: AgentStore  # the agent's part of the database; what is database-wide is store.database
    settings: "Settings"
    embedding: EmbeddingService
    llm: "LLM | None"
    clock: "Clock"
    fusion: Fusion
    weights: ScoreWeights
    offline_rule: "Rule"

    def now(self) -> datetime:
        return self.clock()

    def for_agent(self, agent_id: str) -> "AgentContext":
        """The same parts for another agent of this database, for the rare operation whose input
        names several agents (an import of a file that holds several users' memories). The caller
        makes sure that agent's memory is in this database (``settings.file_per_agent`` is False)."""
        agent_id = v.check_agent_id(agent_id)
        return replace(self, agent_id=agent_id, store=AgentStore(self.store.database, agent_id))


def agent_context(store: "Store", *, agent_id: str, embedder: "Embedder | None", settings: "Settings",
                  llm: "LLM | None", clock: "Clock") -> AgentContext:
    """The context of ``agent_id`` over an open store: the embedder checked against the one the
    database records, the scoring read from the settings, the offline pair rule chosen."""
    agent_id = v.check_agent_id(agent_id)
    embedding = EmbeddingService(embedder, store)
    kind = pairs.offline_kind(settings.offline_pairs, None if embedder is None else embedder.model_id)
    if kind == "model" and (embedder is None or embedder.model_id != pairs.TRAINED_ON):
        raise ConfigError(f"offline_pairs='model' needs the embedder it was trained with ({pairs.TRAINED_ON}); "
                          "use offline_pairs='rules' with another embedder")
    return AgentContext(
        agent_id=agent_id, store=AgentStore(store, agent_id), settings=settings, embedding=embedding, llm=llm,
        clock=clock,
        fusion=Fusion(settings.vector_weight, embedding.thresholds.unrelated, meaning=embedding.thresholds.meaning),
        weights=ScoreWeights(settings.weight_relevance, settings.weight_strength, settings.weight_recency),
        offline_rule=pairs.offline_rule(kind, embedding.words, embedding.word_states),
    )


class Capability:
    """A capability of one agent (recall, facts, blocks, ...): its operations, over the context it
    is given. What it needs it reads from ``ctx``; the facade composes one of each."""

    def __init__(self, ctx: AgentContext) -> None:
        self.ctx = ctx
