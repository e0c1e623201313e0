"""The curation capability of one agent, operations of :class:`~hippo.core.memory.Memory`: the agent's
feedback, links, the archive, importers. Each method checks its input and hands the work to its
module (:mod:`~hippo.core.curation.feedback`, :mod:`~hippo.core.curation.links`,
:mod:`~hippo.core.curation.archive`, :mod:`~hippo.core.curation.importers`)."""

from __future__ import annotations

import os

from hippo.core import validation as v
from hippo.core.context import Capability
from hippo.core.curation import archive, feedback, importers, links
from hippo.core.memories.operations import fetch
from hippo.core.memories.reembed import Progress
from hippo.errors import NotFound
from hippo.types import ArchivedHit, ArchivedMemory, Chunk, ImportReport, Link, MaintainResult

__all__ = ["Curation"]


class Curation(Capability):
    """The curation operations of one agent."""

    def related(self, chunk_id: str) -> list[Link]:
        """A memory's links: memories recalled with it (strongest first) and its supersession history."""
        return links.related(self.ctx.store, chunk_id)

    def import_from(self, path: str | os.PathLike[str], format: str, *, dry_run: bool = False,
                    progress: Progress | None = None) -> ImportReport:
        """Import another memory system's file (markdown, mcp-memory, mem0, letta); see
        :mod:`hippo.core.curation.importers`. Writes every item it can read, all in one transaction, and
        reports each other one with its reason (``skipped``). mem0's memories go to the agents of
        their users (``user:alice``, as ``hippo.compat.mem0`` names them), as facts. Idempotent;
        ``dry_run`` writes nothing and reports the same. Bad arguments, or a file that cannot be
        read at all, raise InvalidInput with nothing written."""
        return importers.import_from(self.ctx, path, format, dry_run=dry_run, progress=progress)

    def maintain(self, *, progress: Progress | None = None) -> MaintainResult:
        """With ``max_db_bytes`` set and the database over it, archive the bottom ``prune_percent``
        of memories (feedback x recency) until it is under; nothing is deleted. Database-wide."""
        settings = self.ctx.settings
        return archive.maintain(self.ctx.store.database, self.ctx.now(), settings.max_db_bytes, settings.prune_percent,
                                v.check_progress(progress))

    def search_archive(self, query: str, limit: int = 10) -> list[ArchivedHit]:
        """This agent's archived memories that match the query's words, best first."""
        query = v.check_text(query, "query", max_chars=self.ctx.settings.max_query_chars)
        return archive.search(self.ctx.store, query, v.check_limit(limit))

    def get_archived(self, chunk_id: str) -> ArchivedMemory:
        """One archived memory of this agent by id, with when it was archived; NotFound when it is
        not in this agent's archive. Browsing: nothing counts as retrieved."""
        chunk_id = v.check_chunk_id(chunk_id)
        found = self.ctx.store.list_archived(limit=1, ids=[chunk_id])
        if not found:
            raise NotFound(f"no archived memory {chunk_id} for agent {self.ctx.agent_id!r}")
        return found[0]

    def restore_memory(self, chunk_id: str) -> Chunk:
        """Bring an archived memory back into recall (embedded again); same id."""
        return archive.restore(self.ctx.store, self.ctx.embedding, chunk_id, self.ctx.now())

    def reinforce_memory(self, chunk_id: str) -> Chunk:
        """The agent found this memory useful: its feedback rises by ``reinforce_weight``
        and its recency clock restarts. See :mod:`hippo.core.curation.feedback` for what that does to recall."""
        ctx = self.ctx
        feedback.give(ctx.store, chunk_id, ctx.settings.reinforce_weight, ctx.now(), reinforce=True)
        return fetch(self.ctx, chunk_id)

    def demote_memory(self, chunk_id: str) -> Chunk:
        """The agent found this memory stale, wrong or irrelevant: its feedback falls by
        ``demote_weight``. Nothing is deleted."""
        ctx = self.ctx
        feedback.give(ctx.store, chunk_id, -ctx.settings.demote_weight, ctx.now(), reinforce=False)
        return fetch(self.ctx, chunk_id)
