"""A relational store: every part both backends share (``stores/sql``), over one handle.

A backend subclasses :class:`SqlStore`, gives it its handle (``db``: ``sqlite/database.py``,
``postgres/connection.py``), its retrieval queue and its reading of the application's messages
table, and adds what it does its own way: writing chunks with their vectors, search, the summary,
the curation whose SQL differs, scrubbing.
"""

from __future__ import annotations

from typing import Any, ContextManager

from hippo.stores.retrievals import RetrievalQueue
from hippo.stores.sql.blocks import SqlBlocks, SqlDaily
from hippo.stores.sql.capture import SqlCapture
from hippo.stores.sql.chunks import SqlChunks
from hippo.stores.sql.conversation import SqlConversation
from hippo.stores.sql.curation import SqlArchive, SqlLinks
from hippo.stores.sql.database import SqlDatabase
from hippo.stores.sql.experiences import SqlExperiences
from hippo.stores.sql.keys import SqlKeys
from hippo.stores.sql.merges import SqlMerges

__all__ = ["SqlStore"]


class SqlStore(SqlChunks, SqlCapture, SqlExperiences, SqlArchive, SqlLinks, SqlMerges, SqlKeys, SqlBlocks, SqlDaily,
               SqlConversation):
    """The shared parts of a relational :class:`~hippo.stores.base.Store`, through ``db``."""

    db: SqlDatabase
    retrievals: RetrievalQueue

    def close(self) -> None:
        self.retrievals.close()  # what is queued is written first
        self.close_search()
        self.db.close()

    def close_search(self) -> None:
        """Let go of what the backend's search holds beside the database (before it closes)."""

    def transaction(self) -> ContextManager[Any]:
        return self.db.transaction()

    def _queue_retrievals(self, queue: RetrievalQueue) -> None:
        """Recalls' retrieval events go through ``queue``, and every read first writes those it must see."""
        self.retrievals = queue
        self.db.before_read = queue.before_read
