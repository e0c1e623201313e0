"""Short-term memory: a bounded buffer of recent experiences per agent.

The buffer holds the last ``short_term_size`` experiences (100), the oldest evicted when it is
full. Where it lives:

- **in the process** (the embedded default): nothing is written until consolidation, so a
  process that dies loses what was not consolidated (what ``Experience.durable=False`` said);
  every ``Memory`` of one store shares it (``for_agent``, the HTTP server's agents);
- **in the database** (``short_term_durable=True``, and always on a store that several processes
  share, such as PostgreSQL): every append is committed, every server sees the same buffer.

Both speak :class:`Buffer`. Searching is over at most a few hundred entries, so it is a scan: by
words, and by meaning once an entry has a vector (made at its first search, kept).
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING, Protocol, Sequence

from hippo.core.keywords import ENGLISH_STOPWORDS, keyword_terms
from hippo.types import Experience

if TYPE_CHECKING:
    import numpy as np

    from hippo.core.ports import Store
    from hippo.core.ports.scoped import AgentStore, ExperienceScope

__all__ = ["Buffer", "DatabaseBuffer", "LocalBuffer", "buffer_for", "keyword_overlap"]


class Buffer(Protocol):
    durable: bool

    def append(self, entry: Experience, capacity: int) -> list[str]:
        """Add ``entry``; the ids of the oldest that left to keep ``capacity``."""
        ...

    def entries(self) -> list[Experience]:
        """Oldest first."""
        ...

    def vectors(self, ids: Sequence[str]) -> dict[str, "np.ndarray"]: ...

    def set_vectors(self, vectors: dict[str, "np.ndarray"]) -> None: ...

    def take(self, ids: Sequence[str]) -> list[str]:
        """Remove entries; the ids that were there. Called inside the store's transaction when
        the entries go to long-term memory: a database buffer's removal commits with them."""
        ...

    def restore(self, entries: Sequence[Experience]) -> None:
        """Put back entries taken by a transaction that failed (a database buffer's rollback did)."""
        ...

    def count(self, counts: dict[str, float]) -> None:
        """Add to the agent's consolidation counters (``Memory.stats().consolidation``)."""
        ...

    def drain_counts(self) -> dict[str, float]:
        """Counts not yet written to the database (written with the next consolidation)."""
        ...

    def pending_counts(self) -> dict[str, float]:
        """What :meth:`drain_counts` would return, left in place."""
        ...


class LocalBuffer:
    """The buffer in this process: an ordered dict (O(1) append and eviction) behind a lock."""

    durable = False

    def __init__(self) -> None:
        self._entries: OrderedDict[str, Experience] = OrderedDict()
        self._vectors: dict[str, "np.ndarray"] = {}
        self._counts: dict[str, float] = {}
        self._lock = threading.Lock()

    def append(self, entry: Experience, capacity: int) -> list[str]:
        with self._lock:
            self._entries[entry.id] = entry
            evicted = []
            while len(self._entries) > capacity:
                old, _ = self._entries.popitem(last=False)
                self._vectors.pop(old, None)
                evicted.append(old)
            return evicted

    def entries(self) -> list[Experience]:
        with self._lock:
            return list(self._entries.values())

    def vectors(self, ids: Sequence[str]) -> dict[str, "np.ndarray"]:
        with self._lock:
            return {i: self._vectors[i] for i in ids if i in self._vectors}

    def set_vectors(self, vectors: dict[str, "np.ndarray"]) -> None:
        with self._lock:
            self._vectors.update({i: vec for i, vec in vectors.items() if i in self._entries})

    def take(self, ids: Sequence[str]) -> list[str]:
        with self._lock:
            taken = [i for i in ids if self._entries.pop(i, None) is not None]
            for i in taken:
                self._vectors.pop(i, None)
            return taken

    def restore(self, entries: Sequence[Experience]) -> None:
        with self._lock:
            for entry in entries:
                self._entries[entry.id] = entry
            ordered = sorted(self._entries.values(), key=lambda e: e.id)  # ULIDs: creation order
            self._entries = OrderedDict((e.id, e) for e in ordered)

    def count(self, counts: dict[str, float]) -> None:
        with self._lock:  # nothing is written on an append: the counts wait for the next consolidation
            for name, value in counts.items():
                if value:
                    self._counts[name] = self._counts.get(name, 0) + value

    def drain_counts(self) -> dict[str, float]:
        with self._lock:
            counts, self._counts = self._counts, {}
            return counts

    def pending_counts(self) -> dict[str, float]:
        with self._lock:
            return dict(self._counts)


class DatabaseBuffer:
    """The buffer in the store's ``short_term`` table (see ``ExperienceStore``)."""

    durable = True

    def __init__(self, store: "ExperienceScope") -> None:
        self._store = store

    def append(self, entry: Experience, capacity: int) -> list[str]:
        return self._store.short_term_append(entry, capacity)

    def entries(self) -> list[Experience]:
        return self._store.short_term_entries()

    def vectors(self, ids: Sequence[str]) -> dict[str, "np.ndarray"]:
        return self._store.short_term_vectors(ids)

    def set_vectors(self, vectors: dict[str, "np.ndarray"]) -> None:
        self._store.set_short_term_vectors(vectors)

    def take(self, ids: Sequence[str]) -> list[str]:
        return self._store.short_term_remove(ids)

    def restore(self, entries: Sequence[Experience]) -> None:
        """Nothing to do: the failed transaction's rollback kept them."""

    def count(self, counts: dict[str, float]) -> None:
        self._store.add_stats({name: value for name, value in counts.items() if value})

    def drain_counts(self) -> dict[str, float]:
        return {}

    def pending_counts(self) -> dict[str, float]:
        return {}


# The in-process buffers of each open store, by agent: shared by every Memory over that store.
_LOCAL: "weakref.WeakKeyDictionary[Store, dict[str, LocalBuffer]]" = weakref.WeakKeyDictionary()
_LOCAL_LOCK = threading.Lock()


def buffer_for(store: "AgentStore", durable: bool) -> Buffer:
    """The agent's buffer: in the database when asked to be durable or when processes share the
    store, else in this process."""
    if durable or store.database.capabilities.shared:
        return DatabaseBuffer(store)
    with _LOCAL_LOCK:
        return _LOCAL.setdefault(store.database, {}).setdefault(store.agent_id, LocalBuffer())


def local_agents(store: "Store") -> list[str]:
    """The agents with an in-process buffer on this store (what ``close`` consolidates)."""
    with _LOCAL_LOCK:
        return [agent for agent, buffer in _LOCAL.get(store, {}).items() if buffer.entries()]


def agents_with_entries(store: "Store") -> list[str]:
    """Every agent with short-term entries: in this process's buffers, and in the database's."""
    return sorted(set(local_agents(store)) | set(store.short_term_agents()))


@lru_cache(maxsize=8192)
def _words(text: str) -> frozenset[str]:
    """An entry's words, read once (a buffer is searched far more often than it changes)."""
    return frozenset(keyword_terms(text))


def keyword_overlap(query: str, entries: Sequence[Experience]) -> dict[str, float]:
    """Each entry's share of the query's words it holds, scaled against the best (0..1), as
    recall's keyword side scales BM25; entries holding none are left out."""
    asked = set(keyword_terms(query, stopwords=ENGLISH_STOPWORDS))
    if not asked:
        return {}
    shares = {e.id: len(asked & _words(e.content)) / len(asked) for e in entries}
    best = max(shares.values(), default=0.0)
    return {i: share / best for i, share in shares.items() if share > 0} if best > 0 else {}


def marked_durable(entry: Experience, durable: bool) -> Experience:
    return entry if entry.durable == durable else replace(entry, durable=durable)
