"""How the core asks a store for chunks: the filters of recall and browsing, one search and the
candidates it finds, and what ranking reads of each candidate."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import numpy as np

__all__ = ["Candidates", "ChunkFilter", "ExperienceFilter", "MetaCondition", "MetaOp", "SearchQuery", "Standing"]


@dataclass(frozen=True, slots=True)
class ExperienceFilter:
    """Long-term experiences only: of any of ``types`` (every type when empty), of at
    least ``min_importance``."""

    types: tuple[str, ...] = ()
    min_importance: float | None = None


@dataclass(frozen=True, slots=True)
class ChunkFilter:
    """Recall filters. ``tags`` must all be present; every ``metadata`` condition must hold.

    ``since``/``until`` bound the time of a chunk: when it was observed if known,
    else when it was stored. Superseded chunks are excluded unless asked for.

    ``as_of`` looks into the past: only chunks stored (``created_at``) at or before it pass, and a
    superseded one passes when its successor was stored after it (it was current then); one whose
    successor is gone (forgotten) never passes: when it stopped being current is no longer known.
    """

    kinds: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    metadata: tuple["MetaCondition", ...] = ()
    since: datetime | None = None
    until: datetime | None = None
    include_superseded: bool = False
    sources: tuple[str, ...] = ()  # provenance: any of these
    session_id: str | None = None
    experience: ExperienceFilter | None = None  # experiences only, and which
    as_of: datetime | None = None  # what was current then (see above)

    @property
    def is_empty(self) -> bool:
        return not (self.kinds or self.tags or self.metadata or self.since or self.until or self.sources
                    or self.session_id or self.experience or self.as_of)

    @property
    def reaches_superseded(self) -> bool:
        """Whether a superseded chunk can pass: asked for, or current at the ``as_of`` date. A store
        that keeps live chunks apart (an index of live vectors) must then look beyond them."""
        return self.include_superseded or self.as_of is not None


MetaOp = Literal["eq", "ne", "in", "gt", "gte", "lt", "lte", "exists"]


@dataclass(frozen=True, slots=True)
class MetaCondition:
    """One test of a metadata field: ``eq``/``ne`` a plain value (text, number, boolean, null;
    ``ne`` also holds when the field is missing), ``in`` a tuple of them, ``gt``..``lte`` a number
    or a text (compared with fields of the same type only), ``exists`` a boolean."""

    key: str
    op: MetaOp
    value: Any


@dataclass(frozen=True, slots=True)
class Standing:
    """What ranking reads of a candidate chunk: its strength and age, not its text or metadata
    (recall ranks a pool of candidates and reads whole chunks only for the hits it returns)."""

    id: str
    running_intensity: float
    access_count: int
    last_accessed: float  # seconds since the epoch (UTC), as ``datetime.timestamp()``
    created: float  # when recency starts: the last reinforcement, else the creation
    superseded_by: str | None
    has_vector: bool
    feedback: int = 0


@dataclass(frozen=True, slots=True)
class SearchQuery:
    """One search of an agent's chunks, answered in one call: by meaning (``vector``), by words
    (``terms``: sanitised, lower-cased words, any of which matches; every one with
    ``every_term``), or both, among the chunks that pass ``where``; at most ``depth`` candidates
    from each side. With ``score_all``, a candidate found by words only still gets its cosine."""

    vector: "np.ndarray | None"
    terms: tuple[str, ...]
    where: ChunkFilter
    depth: int
    every_term: bool = False
    score_all: bool = True
    # A dedup probe: only candidates at a near-duplicate similarity matter, so an approximate index
    # may search less widely (hnswlib: a short candidate list), missing only far neighbours.
    near_duplicates: bool = False


@dataclass(frozen=True, slots=True)
class Candidates:
    """What a search found: each candidate's :class:`Standing`, its cosine to the query vector
    and its raw keyword score (larger is better; comparable within one search only) where known."""

    chunks: list[Standing]
    similarity: dict[str, float]
    bm25: dict[str, float]
    exhausted: bool  # neither side had more than it returned
    # The best cosine and raw keyword score a chunk outside the pool can have (0: that side returned all it had).
    unseen_similarity: float = 0.0
    unseen_bm25: float = 0.0

    @classmethod
    def found(cls, chunks: list[Standing], similarity: dict[str, float], bm25: dict[str, float],
              cosines: dict[str, float], depth: int) -> "Candidates":
        """The candidates of a search that asked each side for ``depth``: ``cosines`` (of those found
        by words only) join the similarities, and a side that returned fewer than ``depth`` had no more."""
        return cls(chunks, {**cosines, **similarity}, bm25,
                   exhausted=len(similarity) < depth and len(bm25) < depth,
                   unseen_similarity=min(similarity.values()) if len(similarity) >= depth else 0.0,
                   unseen_bm25=min(bm25.values()) if len(bm25) >= depth else 0.0)

    def merged(self, other: "Candidates") -> "Candidates":
        """Both sets of candidates (scores of one query against one index, so comparable)."""
        known = {c.id for c in self.chunks}
        return Candidates(
            [*self.chunks, *(c for c in other.chunks if c.id not in known)],
            {**other.similarity, **self.similarity},
            {**other.bm25, **self.bm25},
            self.exhausted,
            self.unseen_similarity,
            self.unseen_bm25,
        )
