"""The recall operations of one agent: its facts and memories by meaning and by keyword, and
full-text search over the application's own conversation table. The ranking is
:mod:`hippo.core.recall.pool`'s; the retrieval event is written behind the answer
(the store's :class:`~hippo.core.ports.RetrievalQueue`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal, Mapping, Sequence

from hippo.core import validation as v
from hippo.core.context import Capability
from hippo.core.curation import archive, links
from hippo.core.keywords import keyword_terms
from hippo.core.ports import Candidates, ChunkFilter, RetrievalEvent
from hippo.core.recall.filters import passes, recall_filter
from hippo.core.recall.names import as_the_user, user_name
from hippo.core.recall.pool import as_hits, ranked_pool, touched
from hippo.core.strength import RETRIEVAL_BOOST
from hippo.errors import ConfigError, InvalidInput
from hippo.types import ConversationHit, Hit, Recall

__all__ = ["Recaller", "past"]


def _flags(touch: object, expand: object, include_archived: object, where: ChunkFilter) -> tuple[bool, bool, bool]:
    """Recall's flags, checked, before a hit is touched: the archive takes no metadata filter."""
    if v.check_flag(include_archived, "include_archived") and where.metadata:
        raise InvalidInput("metadata filters do not reach the archive: leave out include_archived or metadata")
    return v.check_flag(touch, "touch"), v.check_flag(expand, "expand"), bool(include_archived)


def past(as_of: object, now: datetime) -> datetime | None:
    """``as_of`` checked (InvalidInput names it), a date after ``now`` read as ``now``: nothing
    later is known, and a caller's clock a little ahead of the server's must not fail."""
    when = v.check_datetime(as_of, "as_of")
    return None if when is None else min(when, now)


def _mode(query: str, vectored: bool, matched: bool) -> Literal["hybrid", "keyword", "vector"]:
    """How a recall searched: by keywords alone (no query vector), by vectors alone (the query has
    no usable word), or both."""
    if not vectored:
        return "keyword"
    return "hybrid" if matched or keyword_terms(query) else "vector"


class Recaller(Capability):
    """Recall for one agent."""

    def recall_memories(
        self,
        query: str,
        limit: int = 10,
        *,
        kind: str | Sequence[str] | None = None,
        tags: Sequence[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        source: str | Sequence[str] | None = None,
        session_id: str | None = None,
        include_archived: bool = False,
        expand: bool = False,
        touch: bool = True,
        as_of: datetime | str | None = None,
    ) -> Recall:
        """Facts and memories ranked by relevance, strength and recency, times the agent's
        feedback (see :mod:`hippo.core.curation.feedback`); filtered by kind, tags, metadata, time, and
        provenance (``source``: one or any of several; ``session_id``).

        Returned hits count as retrieved (access count, last access, +0.02
        intensity) unless ``touch=False``. With ``include_archived``, archived memories that match
        the query's words compete too, marked ``archived`` (see :mod:`hippo.core.curation.archive`). With
        ``expand``, memories often recalled with the best hits follow them, marked ``linked_from``
        (see :mod:`hippo.core.curation.links`); a touching recall strengthens the links among its hits.

        With ``as_of`` (a datetime or ISO-8601 text), what was current at that time: nothing stored
        after it, and a fact's version superseded after it in place of its successor; strength and
        recency as they stood then (an access or reinforcement after ``as_of`` counts as made at
        ``as_of``: an upper bound); never counted as retrieved. A date after now reads as now.
        Forgotten memories are gone at every date. ``expand`` does not combine with it.
        """
        query = v.check_text(query, "query", max_chars=self.ctx.settings.max_query_chars)
        limit = v.check_limit(limit)
        now = self.ctx.now()
        when = past(as_of, now)
        where = recall_filter(kind=kind, tags=tags, metadata=metadata, since=since, until=until, source=source,
                              session_id=session_id, as_of=when)
        touch, expand, include_archived = _flags(touch, expand, include_archived, where)
        if when is not None:
            if expand:
                raise InvalidInput("expand follows the co-recall links as they are now: leave out as_of or expand")
            touch = False  # a look into the past is no retrieval
        query_vector = self.ctx.embedding.query(query)
        at = now if when is None else when  # strength and recency are computed at this time
        # ranks what is written: the last moment's boosts follow
        with self.ctx.store.retrievals.recall_reads(self.ctx.agent_id, now):
            hits, found = self._ranked(query, query_vector, where, limit, at)
            if query_vector is not None and (name := user_name(h.content for h in hits)) is not None \
                    and (reworded := as_the_user(query, name)) is not None:
                # "what food should alice avoid?" asked of Alice's memories, which say "User"
                query_vector = self.ctx.embedding.query(reworded)
                hits, found = self._ranked(reworded, query_vector, where, limit, at)
        if touch and hits:  # written behind the answer (the store's queue)
            hits = touched(hits, now)
            self.ctx.store.retrievals.add(RetrievalEvent(self.ctx.agent_id, tuple(h.id for h in hits),
                                                         links.co_recall_pairs(hits), now, RETRIEVAL_BOOST))
        if include_archived:
            hits = self._with_archived(hits, query, limit, at, where)
        if expand:
            ctx = self.ctx
            hits = hits + links.expand(ctx.store, hits, query_vector, now, fusion=ctx.fusion,
                                       weights=ctx.weights, decay_lambda=ctx.settings.decay_lambda)
        return Recall(hits, _mode(query, query_vector is not None, bool(found.bm25)),
                      warning=self.ctx.embedding.last_error if query_vector is None else None)

    def _ranked(self, query: str, query_vector: Any, where: ChunkFilter, limit: int,
                now: datetime) -> tuple[list[Hit], Candidates]:
        ranked, found = ranked_pool(self.ctx.store, query, query_vector, where, limit, now,
                                    settings=self.ctx.settings, fusion=self.ctx.fusion, weights=self.ctx.weights)
        return as_hits(self.ctx.store, ranked), found

    def _with_archived(self, hits: list[Hit], query: str, limit: int, now: datetime, where: ChunkFilter) -> list[Hit]:
        found = [h for h in archive.search(self.ctx.store, query, limit) if passes(h.chunk, where)]
        extra = archive.archived_hits(found, now, fusion=self.ctx.fusion, weights=self.ctx.weights,
                                      decay_lambda=self.ctx.settings.decay_lambda,
                                      min_relevance=self.ctx.settings.min_relevance)
        return sorted([*hits, *extra], key=lambda h: (-h.score, h.id))[:limit]

    def recall_conversation(self, query: str, limit: int = 10) -> list[ConversationHit]:
        """Full-text search over the application's messages table (no embeddings)."""
        if self.ctx.settings.messages_table is None:
            raise ConfigError("no messages table is configured (messages_table=None)")
        query = v.check_text(query, "query", max_chars=self.ctx.settings.max_query_chars)
        limit = v.check_limit(limit)
        terms = keyword_terms(query)
        if not terms:
            return []
        return self.ctx.store.search_messages(self.ctx.settings.messages_table, terms, limit)

    def has_conversation(self) -> bool:
        """Whether ``recall_conversation`` can search: a messages table is configured and exists."""
        table = self.ctx.settings.messages_table
        return table is not None and self.ctx.store.database.has_messages_table(table)

