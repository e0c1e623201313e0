"""The experience capability of one agent, operations of :class:`~hippo.core.memory.Memory`:
experiences recorded in a short-term buffer and consolidated into long-term memory. The work is
:class:`~hippo.core.experiences.episodic.Episodic`'s."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from hippo.core import validation as v
from hippo.core.context import Capability
from hippo.core.experiences import importance as experiences
from hippo.core.experiences.episodic import Episodic
from hippo.core.experiences.short_term import agents_with_entries
from hippo.types import Consolidation, Experience

if TYPE_CHECKING:
    from hippo.core.context import AgentContext

__all__ = ["Experiences"]


class Experiences(Capability):
    """The experience operations of one agent."""

    def __init__(self, ctx: "AgentContext") -> None:
        super().__init__(ctx)
        self.episodic = Episodic(ctx)

    def record_experience(self, type: str, content: str, *, context: Mapping[str, Any] | None = None,
                          importance: float | None = None, tags: Sequence[str] = (), source: str | None = None,
                          session_id: str | None = None, observed_at: datetime | str | None = None) -> Experience:
        """Record something the agent lived through: ``type`` is one of chat, observation, task,
        decision, tool-use, error, insight; ``importance`` (0-1) defaults to a rating of
        the type and the ``context`` flags (``mentionedMe``, ...).

        It enters the short-term buffer, searchable at once; an important one (0.7 or more), or a
        buffer over 80% full, consolidates the buffer into long-term memory (see
        :mod:`hippo.core.experiences.consolidation`). The result says where it is (``tier``) and whether a
        crash could still lose it (``durable``)."""
        return self.episodic.record(type, content, context=context, importance=importance, tags=tags,
                                     source=source, session_id=session_id, observed_at=observed_at)

    def short_term(self) -> list[Experience]:
        """The short-term buffer, newest first (browsing: nothing counts as retrieved)."""
        return self.episodic.short_term()

    def recall(self, *, types: str | Sequence[str] | None = None, tags: str | Sequence[str] | None = None,
               min_importance: float | None = None, since: datetime | str | None = None, limit: int = 10,
               query: str | None = None, touch: bool = True) -> list[Experience]:
        """Experiences from short-term and long-term memory together, deduplicated: by relevance
        to ``query`` when one is given, else the latest first; filtered by type, tags, importance
        and time. Long-term results count as retrieved (the retrieval event of recall) unless
        ``touch=False``, a look that writes nothing at all."""
        return self.episodic.recall(query=query, types=types, tags=tags, min_importance=min_importance,
                                     since=since, limit=v.check_limit(limit), touch=v.check_flag(touch, "touch"))

    def recall_related(self, *, user_id: str | int | None = None, room_id: str | int | None = None,
                       task_id: str | int | None = None, limit: int = 100) -> list[Experience]:
        """Experiences whose context names this user (``userId``/``senderId``), room or task (all
        of those given), latest first, from both tiers; found through an index."""
        return self.episodic.related(experiences.refs_asked(user_id, room_id, task_id), v.check_limit(limit))

    def short_term_agents(self) -> list[str]:
        """The agents of this database (and this process) with short-term entries, sorted:
        what a consolidation schedule walks. Database-wide, like :meth:`for_agent`."""
        return agents_with_entries(self.episodic.store.database)

    def consolidate(self) -> Consolidation:
        """Move the short-term buffer's important experiences to long-term memory now, then prune
        it; see :mod:`hippo.core.experiences.consolidation`."""
        return self.episodic.consolidated()
