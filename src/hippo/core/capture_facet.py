"""The capture and surfacing operations of :class:`~hippo.core.memory.Memory` (seed 002). A facet
of the facade: the work is :mod:`hippo.core.capture`'s and :mod:`hippo.core.surfacing`'s."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from hippo.core import capture, surfacing
from hippo.types import Captured, Observation, Surfaced

if TYPE_CHECKING:
    from hippo.config import Settings
    from hippo.core.embedding import EmbeddingService
    from hippo.core.fusion import Fusion
    from hippo.core.pairs import Rule
    from hippo.core.strength import ScoreWeights
    from hippo.providers.base import LLM
    from hippo.stores.base import Store

__all__ = ["CaptureFacet"]


class CaptureFacet:
    store: "Store"
    agent_id: str
    settings: "Settings"
    embedding: "EmbeddingService"
    llm: "LLM | None"
    now: Callable[[], datetime]
    _offline_rule: "Rule"
    _fusion: "Fusion"
    _weights: "ScoreWeights"

    def observe(self, messages: Sequence[Mapping[str, Any]], *, session_id: str) -> Observation:
        """Take chat messages (OpenAI or Anthropic shape; each may carry ``id``, ``name`` for the
        speaker and ``timestamp``) into the session's inbox and return at once: durable, processed
        later by :meth:`process_pending`. A message id the session already has is skipped, so a
        transcript may be sent again; system prompts and tool outputs are left out by default
        (``capture_roles``)."""
        return capture.observe(self.store, self.agent_id, messages, session_id, self.settings)

    def process_pending(self) -> Captured:
        """Turn what this agent observed into memories now (seed 002: windows, gate, extraction,
        dedup; see :mod:`hippo.core.capture`). Each window is processed once, even when several
        processes run this at the same time."""
        return capture.process_pending(self.store, self.embedding, self.llm, self.agent_id, self.settings,
                                       self.now(), self._offline_rule)

    def pending_agents(self) -> list[str]:
        """Every agent of this database with observed messages not processed yet (all agents, not
        only this one: what a server's background worker walks through), in the order they wait."""
        return list(dict.fromkeys(agent for agent, _ in self.store.pending_sessions(None)))

    def surface(self, messages: Sequence[Mapping[str, Any]], *, session_id: str, max_tokens: int = 500) -> Surfaced:
        """Memories relevant to the last few messages that this session has not been shown yet,
        as a context block within ``max_tokens`` (seed 002); empty when nothing is relevant."""
        return surfacing.surface(self.store, self.embedding, self.agent_id, messages, session_id, max_tokens,
                                 self.now(), settings=self.settings, fusion=self._fusion, weights=self._weights)
