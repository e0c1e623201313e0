"""The capture and surfacing capability of one agent, operations of :class:`~hippo.core.memory.Memory`:
the work is :mod:`hippo.core.capture.inbox`'s, :mod:`hippo.core.capture.surfacing`'s and, for the
sessions' histories that capture taps, :mod:`hippo.core.capture.history`'s."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

from hippo.core import validation as v
from hippo.core.capture import history, surfacing
from hippo.core.capture import inbox as capture
from hippo.core.context import Capability
from hippo.types import Captured, Observation, Surfaced

if TYPE_CHECKING:
    from hippo.core.memories.reembed import Progress

__all__ = ["Capture"]


class Capture(Capability):
    """The capture and surfacing operations of one agent."""

    def observe(self, messages: Sequence[Mapping[str, Any]], *, session_id: str) -> Observation:
        """Take chat messages (OpenAI or Anthropic shape; each may carry ``id``, ``name`` for the
        speaker and ``timestamp``) into the session's inbox and return at once: durable, processed
        later by :meth:`process_pending`. A message id the session already has is skipped, so a
        transcript may be sent again; system prompts and tool outputs are left out by default
        (``capture_roles``)."""
        return capture.observe(self.ctx.store, messages, session_id, self.ctx.settings)

    def process_pending(self, *, progress: "Progress | None" = None) -> Captured:
        """Turn what this agent observed into memories now (windows, a gate, extraction,
        deduplication; see :mod:`hippo.core.capture.inbox`). Each window is processed once, even when several
        processes run this at the same time. ``progress`` is called with (messages processed,
        messages pending) as batches finish."""
        ctx = self.ctx
        return capture.process_pending(ctx.store.database, ctx.embedding, ctx.llm, ctx.agent_id, ctx.settings,
                                       ctx.now(), ctx.offline_rule, v.check_progress(progress))

    def pending_agents(self) -> list[str]:
        """Every agent of this database with observed messages not processed yet (all agents, not
        only this one: what a server's background worker walks through), in the order they wait."""
        return list(dict.fromkeys(agent for agent, _ in self.ctx.store.database.pending_sessions(None)))

    def surface(self, messages: Sequence[Mapping[str, Any]], *, session_id: str, max_tokens: int = 500) -> Surfaced:
        """Memories relevant to the last few messages that this session has not been shown yet,
        as a context block within ``max_tokens``; empty when nothing is relevant."""
        ctx = self.ctx
        return surfacing.surface(ctx.store, ctx.embedding, messages, session_id, max_tokens, ctx.now(),
                                 settings=ctx.settings, fusion=ctx.fusion, weights=ctx.weights)

    # -- a session's history ----------------------------------------------------------------------

    def add_session_items(self, session_id: str, items: Sequence[Mapping[str, Any]]) -> Observation:
        """Append items (JSON objects, such as the OpenAI Agents SDK's session items) to the end of
        a session's history, kept as written, and observe the chat messages among them as
        :meth:`observe` does, in one transaction. Returns what capture took; a message it cannot
        take (too long, unreadable) stays in the history only."""
        return history.add_items(self.ctx.store, session_id, items, self.ctx.settings)

    def session_items(self, session_id: str, *, limit: int | None = None) -> list[dict[str, Any]]:
        """The session's history, oldest first: its last ``limit`` items (None: all of them)."""
        return history.items(self.ctx.store, session_id, limit)

    def pop_session_item(self, session_id: str) -> dict[str, Any] | None:
        """Remove the session's last item and return it; None when the history is empty. What
        capture observed from it stays observed."""
        return history.pop_item(self.ctx.store, session_id)

    def clear_session_items(self, session_id: str) -> int:
        """Remove the session's whole history; how many items went. The memories captured from it
        stay (:meth:`forget_memory` removes a memory, and the items it came from with it)."""
        return history.clear_items(self.ctx.store, session_id)
