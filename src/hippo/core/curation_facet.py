"""The curation operations of :class:`~hippo.core.memory.Memory` (seed 003): the agent's
feedback, links, the archive, importers. A facet of the facade: each method checks its input and
hands the work to its module (:mod:`~hippo.core.feedback`, :mod:`~hippo.core.links`,
:mod:`~hippo.core.archive`, :mod:`~hippo.core.importers`)."""

from __future__ import annotations

import os
from datetime import datetime
from typing import TYPE_CHECKING, Callable, cast

from hippo.core import archive, feedback, importers, links
from hippo.core import validation as v
from hippo.core.reembed import Progress
from hippo.errors import NotFound
from hippo.types import ArchivedHit, ArchivedMemory, Chunk, ImportReport, Link, MaintainResult

if TYPE_CHECKING:
    from hippo.config import Settings
    from hippo.core.embedding import EmbeddingService
    from hippo.core.memory import Memory
    from hippo.stores.base import Store

__all__ = ["CurationFacet"]


class CurationFacet:
    store: "Store"
    agent_id: str
    settings: "Settings"
    embedding: "EmbeddingService"
    now: Callable[[], datetime]
    get_memory: Callable[[str], Chunk]

    def related(self, chunk_id: str) -> list[Link]:
        """A memory's links: memories recalled with it (strongest first) and its supersession history."""
        return links.related(self.store, self.agent_id, chunk_id)

    def import_from(self, path: str | os.PathLike[str], format: str, *, dry_run: bool = False,
                    progress: Progress | None = None) -> ImportReport:
        """Import another memory system's file (markdown, mcp-memory, mem0, letta); see
        :mod:`hippo.core.importers`. Writes every item it can read, all in one transaction, and
        reports each other one with its reason (``skipped``). Idempotent; ``dry_run`` writes
        nothing and reports the same. Bad arguments, or a file that cannot be read at all, raise
        InvalidInput with nothing written."""
        return importers.import_from(cast("Memory", self), path, format, dry_run=dry_run, progress=progress)

    def maintain(self, *, progress: Progress | None = None) -> MaintainResult:
        """With ``max_db_bytes`` set and the database over it, archive the bottom ``prune_percent``
        of memories (feedback x recency) until it is under; nothing is deleted. Database-wide."""
        return archive.maintain(self.store, self.now(), self.settings.max_db_bytes, self.settings.prune_percent,
                                progress)

    def search_archive(self, query: str, limit: int = 10) -> list[ArchivedHit]:
        """This agent's archived memories that match the query's words, best first."""
        query = v.check_text(query, "query", max_chars=self.settings.max_query_chars)
        return archive.search(self.store, self.agent_id, query, v.check_limit(limit))

    def get_archived(self, chunk_id: str) -> ArchivedMemory:
        """One archived memory of this agent by id, with when it was archived; NotFound when it is
        not in this agent's archive. Browsing: nothing counts as retrieved."""
        chunk_id = v.check_chunk_id(chunk_id)
        found = self.store.list_archived(self.agent_id, limit=1, ids=[chunk_id])
        if not found:
            raise NotFound(f"no archived memory {chunk_id} for agent {self.agent_id!r}")
        return found[0]

    def restore_memory(self, chunk_id: str) -> Chunk:
        """Bring an archived memory back into recall (embedded again); same id."""
        return archive.restore(self.store, self.embedding, self.agent_id, chunk_id, self.now())

    def reinforce_memory(self, chunk_id: str) -> Chunk:
        """The agent found this memory useful (seed 003): its feedback rises by ``reinforce_weight``
        and its recency clock restarts. See :mod:`hippo.core.feedback` for what that does to recall."""
        feedback.give(self.store, self.agent_id, chunk_id, self.settings.reinforce_weight, self.now(), reinforce=True)
        return self.get_memory(chunk_id)

    def demote_memory(self, chunk_id: str) -> Chunk:
        """The agent found this memory stale, wrong or irrelevant (seed 003): its feedback falls by
        ``demote_weight``. Nothing is deleted."""
        feedback.give(self.store, self.agent_id, chunk_id, -self.settings.demote_weight, self.now(), reinforce=False)
        return self.get_memory(chunk_id)
