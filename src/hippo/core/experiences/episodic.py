"""Experiences for one agent: record experiences, keep the recent ones short-term, consolidate the
important ones into long-term memory, and recall across both tiers.

:class:`Episodic` is what :class:`~hippo.core.memory.Memory` delegates its experience operations
to. The parts it uses: :mod:`hippo.core.experiences.importance` (types, importance, context ids),
:mod:`hippo.core.experiences.short_term` (the buffer), :mod:`hippo.core.experiences.consolidation` (the batch move).
Nothing here starts a thread: consolidation runs when a trigger fires during a write, on
:meth:`consolidate`, or on a schedule that ``hippo serve`` keeps when configured.
"""

from __future__ import annotations

import heapq
from dataclasses import replace
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from hippo.core import validation as v
from hippo.core.experiences import consolidation
from hippo.core.experiences import importance as experiences
from hippo.core.experiences.short_term import Buffer, buffer_for, keyword_overlap, marked_durable
from hippo.core.hashing import content_hash
from hippo.core.keywords import ENGLISH_STOPWORDS, keyword_terms
from hippo.core.ports import ChunkFilter, ExperienceFilter
from hippo.core.recall.pool import as_hits, ranked_pool
from hippo.core.strength import RETRIEVAL_BOOST
from hippo.errors import InvalidInput
from hippo.types import Consolidation, ConsolidationStats, Experience

if TYPE_CHECKING:
    from hippo.core.context import AgentContext

__all__ = ["Episodic"]


class Episodic:
    """One agent's experiences over a store (see the module docstring)."""

    def __init__(self, ctx: "AgentContext") -> None:
        self.store, self.embedding, self.agent_id, self.settings = ctx.store, ctx.embedding, ctx.agent_id, ctx.settings
        self._clock, self._fusion, self._weights = ctx.clock, ctx.fusion, ctx.weights
        self.buffer: Buffer = buffer_for(ctx.store, ctx.settings.short_term_durable)

    # -- record ---------------------------------------------------------------------------

    def record(self, type_: Any, content: Any, **fields: Any) -> Experience:
        """Check, append to the buffer, and consolidate when a trigger fires (the buffer
        over 80% full, or an experience of importance 0.7 or more)."""
        now = self._clock()
        entry = experiences.new_entry(self.agent_id, type_, content, now, max_chars=self.settings.max_content_chars,
                                      **fields)
        entry = marked_durable(entry, self.buffer.durable)
        evicted = self.buffer.append(entry, self.settings.short_term_size)
        self.buffer.count({"recorded": 1, "evicted": len(evicted)})
        if consolidation.due(entry, len(self.buffer.entries()), self.settings):
            done = self.consolidate(flush=False)
            if entry.id in done.moved:
                return self._long_term(done.moved[entry.id]) or entry
        return entry

    def consolidate(self, *, flush: bool = True) -> consolidation.Outcome:
        return consolidation.run(self.store, self.embedding, self.buffer, self._clock(),
                                 self.settings, flush=flush)

    def consolidated(self) -> Consolidation:
        return self.consolidate().result

    # -- read -----------------------------------------------------------------------------

    def short_term(self) -> list[Experience]:
        """The buffer, newest first."""
        return self.buffer.entries()[::-1]

    def recall(self, *, query: str | None, types: Any, tags: Any, min_importance: Any, since: Any,
               limit: int, touch: bool = True) -> list[Experience]:
        """Both tiers (see :meth:`Experiences.recall`); ``touch=False`` writes nothing: no retrieval
        event, and the short-term entries embedded for this search are not kept."""
        where = _filter(types, tags, min_importance, since)
        recent = [e for e in self.buffer.entries() if _passes(e, where)]
        done = self._touched if touch else _as_they_are
        if query is None:
            ids = self.store.list_experiences(where, limit)
            found = self._long_terms(ids)
            return done(_merged(recent, found, key=lambda e: (e.observed_at, e.id))[:limit])
        query = v.check_text(query, "query", max_chars=self.settings.max_query_chars)
        query_vector = self.embedding.query(query)
        now = self._clock()
        ranked, _ = ranked_pool(self.store, query, query_vector, where, limit, now,
                                settings=self.settings, fusion=self._fusion, weights=self._weights)
        hits = as_hits(self.store, ranked)
        records = self.store.experience_records([h.id for h in hits])
        found = [experiences.long_term(h.chunk, records[h.id], h.relevance) for h in hits if h.id in records]
        # A text long-term memory holds is shown once, as the long-term experience: those entries
        # go first (however many share it), then only the best ``limit`` of the rest can make the cut.
        held = {e.content for e in found}
        scored = self._scored(query, query_vector, [e for e in recent if e.content not in held], keep=limit,
                              store=touch)
        return done(_merged(scored, found, key=_by_relevance)[:limit])

    def related(self, refs: dict[str, str], limit: int) -> list[Experience]:
        recent = [e for e in self.buffer.entries()
                  if all(experiences.context_refs(e.context).get(k) == val for k, val in refs.items())]
        found = self._long_terms(self.store.related_experiences(refs, limit))
        return _merged(recent, found, key=lambda e: (e.observed_at, e.id))[:limit]

    def _scored(self, query: str, query_vector: "np.ndarray | None", entries: list[Experience], *,
                keep: int, store: bool) -> list[Experience]:
        """The ``keep`` short-term entries most relevant to the query (the fusion of recall, over a
        scan), of those relevant at all, with their relevance set (a copy of each: 86 of 100 entries
        copied took 1 ms of a 1.3 ms search). ``store``: keep the vectors embedded for it."""
        words = keyword_overlap(query, entries)
        cosines = self._cosines(query_vector, entries, store=store) if query_vector is not None else {}
        relevance = {e.id: self._fusion.relevance(cosines.get(e.id), words.get(e.id)) for e in entries}
        floor = self.settings.min_relevance
        relevant = [e for e in entries if relevance[e.id] >= floor]
        best = heapq.nlargest(keep, relevant, key=lambda e: (relevance[e.id], e.observed_at))
        return [replace(e, relevance=relevance[e.id]) for e in best]

    def _cosines(self, query_vector: "np.ndarray", entries: list[Experience], *, store: bool) -> dict[str, float]:
        vectors = self.buffer.vectors([e.id for e in entries])
        missing = [e for e in entries if e.id not in vectors]
        if missing:  # embedded once, at the first search that may write; kept with the entry
            made = {e.id: vec for e, vec in zip(missing, self.embedding.documents([e.content for e in missing]))
                    if vec is not None}
            if store:
                self.buffer.set_vectors(made)
            vectors.update(made)
        ids = [i for i, vec in vectors.items() if len(vec) == len(query_vector)]
        if not ids:
            return {}
        sims = np.stack([vectors[i] for i in ids]) @ query_vector  # one product for the whole buffer
        return dict(zip(ids, sims.tolist()))

    def _long_terms(self, ids: Sequence[str]) -> list[Experience]:
        records = self.store.experience_records(ids)
        chunks = self.store.get_chunks([i for i in ids if i in records])
        return [experiences.long_term(c, records[c.id]) for c in chunks]

    def _long_term(self, chunk_id: str) -> Experience | None:
        found = self._long_terms([chunk_id])
        return found[0] if found else None

    def _touched(self, found: list[Experience]) -> list[Experience]:
        """The retrieval event (one more access, intensity raised) for the long-term experiences returned."""
        ids = [e.id for e in found if e.tier == "long_term"]
        if ids:
            self.store.record_retrievals(ids, self._clock(), boost=RETRIEVAL_BOOST)
        return found

    def stats(self) -> ConsolidationStats:
        """The consolidation counters: experiences recorded, evicted, consolidated (``merged`` of them
        into memories already held), pruned and archived; runs, the last run's time, and the rate.
        The store keeps them as numbers (the time as seconds since the epoch); they leave here as
        whole counts and a datetime."""
        counts: dict[str, float] = {}
        for source in (self.store.read_stats(), self.buffer.pending_counts()):
            for name, value in source.items():
                counts[name] = value if name.startswith("last_") else counts.get(name, 0.0) + value

        def whole(name: str) -> int:
            return round(counts.get(name, 0.0))

        recorded, consolidated, last = whole("recorded"), whole("consolidated"), counts.get("last_run_at")
        return ConsolidationStats(
            recorded=recorded, evicted=whole("evicted"), consolidated=consolidated, merged=whole("merged"),
            pruned=whole("pruned"), archived=whole("archived"), runs=whole("runs"),
            last_run_at=None if last is None else datetime.fromtimestamp(last, timezone.utc),
            consolidation_rate=consolidated / recorded if recorded else 0.0, capacity=self.settings.short_term_size)

    # -- forget ---------------------------------------------------------------------------

    def matching(self, vector: "np.ndarray | None", words: Sequence[str], threshold: float,
                 limit: int) -> list[tuple[Experience, float | None]]:
        """Short-term entries a forget description matches, as for long-term memory: cosine at
        least ``threshold``, or every meaningful word of the description. Writes nothing (a
        preview is a look; a forget deletes the entries it matched)."""
        entries = self.buffer.entries()
        cosines = self._cosines(vector, entries, store=False) if vector is not None and entries else {}
        out: list[tuple[Experience, float | None]] = []
        for entry in sorted(entries, key=lambda e: -cosines.get(e.id, -1.0)):
            sim = cosines.get(entry.id)
            held = set(keyword_terms(entry.content, stopwords=ENGLISH_STOPWORDS))
            if (sim is not None and sim >= threshold) or (words and all(w in held for w in words)):
                out.append((entry, sim))
        return out[:limit]

    def drop(self, ids: Sequence[str]) -> list[str]:
        """Take entries out of the buffer for good (a forget)."""
        return self.buffer.take(ids)


def _filter(types: Any, tags: Any, min_importance: Any, since: Any) -> ChunkFilter:
    if types is not None and not isinstance(types, (str, list, tuple)):
        raise InvalidInput("types must be an experience type or a list of them")
    chosen = tuple(dict.fromkeys(experiences.check_type(t) for t in ([types] if isinstance(types, str)
                                                                       else types or ())))
    tag_list = experiences.check_tags(tags)
    floor = None if min_importance is None else v.check_intensity(min_importance, "min_importance")
    return ChunkFilter(kinds=("memory",), tags=tuple(tag_list), since=v.check_datetime(since, "since"),
                       experience=ExperienceFilter(chosen, floor))


def _passes(entry: Experience, where: ChunkFilter) -> bool:
    wanted = where.experience or ExperienceFilter()
    return ((not wanted.types or entry.type in wanted.types)
            and (wanted.min_importance is None or entry.importance >= wanted.min_importance)
            and all(tag in entry.tags for tag in where.tags)
            and (where.since is None or entry.observed_at >= where.since))


def _by_relevance(entry: Experience) -> tuple[float, datetime]:
    return entry.relevance or 0.0, entry.observed_at


def _as_they_are(found: list[Experience]) -> list[Experience]:
    return found


def _merged(recent: list[Experience], found: list[Experience], *, key: Callable[[Experience], Any]) -> list[Experience]:
    """Both tiers, best (or newest) first; a short-term entry whose text long-term memory already
    holds is shown once, as the long-term experience."""
    held = {content_hash(e.content) for e in found}
    both = [*found, *(e for e in recent if content_hash(e.content) not in held)]
    return sorted(both, key=key, reverse=True)
