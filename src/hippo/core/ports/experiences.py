"""Experiences' part of a store: what long-term memory keeps of each beside its chunk, the
short-term buffer when it lives in the database, and the consolidation counters."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, Sequence

from hippo.core.ports.database import Database
from hippo.core.ports.search import ChunkFilter
from hippo.types import Experience

if TYPE_CHECKING:
    import numpy as np

__all__ = ["ExperienceRecord", "ExperienceStore"]


@dataclass(frozen=True, slots=True)
class ExperienceRecord:
    """What long-term memory keeps of an experience beside its chunk (same ``id``): its type,
    importance and context, the context's user, room and task ids (indexed), and when it happened."""

    id: str
    type: str
    importance: float
    context: dict[str, Any]
    user_ref: str | None
    room_ref: str | None
    task_ref: str | None
    observed_at: datetime
    consolidated_at: datetime


class ExperienceStore(Database, Protocol):
    """Experiences: what long-term memory keeps of them beside their chunks (gone with
    the chunk, kept while it is archived), the short-term buffer when it lives in the database,
    and the consolidation counters (``memory_stats``)."""

    def put_experiences(self, agent_id: str, records: Sequence[ExperienceRecord]) -> None:
        """Record experiences of existing chunks; a chunk that has a record keeps it."""
        ...

    def experience_records(self, agent_id: str, ids: Sequence[str]) -> dict[str, ExperienceRecord]: ...

    def list_experiences(self, agent_id: str, where: ChunkFilter, limit: int) -> list[str]:
        """Ids of the long-term experiences that pass ``where`` (its ``experience`` part set),
        the latest observed first; through an index on (agent, time), not a scan of the chunks."""
        ...

    def related_experiences(self, agent_id: str, refs: dict[str, str], limit: int) -> list[str]:
        """Ids of the long-term experiences whose context names every one of ``refs`` (keys
        ``user``, ``room``, ``task``), the latest observed first; through an index."""
        ...

    def short_term_append(self, agent_id: str, entry: Experience, capacity: int) -> list[str]:
        """Add to the agent's buffer in the database; the oldest beyond ``capacity`` leave it
        (their ids are returned)."""
        ...

    def short_term_entries(self, agent_id: str) -> list[Experience]:
        """The agent's buffer, oldest first."""
        ...

    def short_term_agents(self) -> list[str]:
        """The agents with entries in the database's buffer, sorted."""
        ...

    def short_term_vectors(self, agent_id: str, ids: Sequence[str]) -> dict[str, "np.ndarray"]: ...

    def set_short_term_vectors(self, agent_id: str, vectors: dict[str, "np.ndarray"]) -> None: ...

    def short_term_remove(self, agent_id: str, ids: Sequence[str]) -> list[str]:
        """Take entries out of the buffer (their text leaves the files as after a delete); the
        ids that were there. Inside a transaction, an entry another process took is not returned."""
        ...

    def add_stats(self, agent_id: str, counts: dict[str, float]) -> None:
        """Add to the agent's counters (``last_*`` names are set, not added)."""
        ...

    def read_stats(self, agent_id: str) -> dict[str, float]: ...
