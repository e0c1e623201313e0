"""The core's view of the embedder: a cache, the model check, and failure as ``None``.

An embedder that fails must not stop hippo from storing or recalling: a failed
document embedding leaves the vector pending (``hippo reembed`` fills it), a
failed query embedding makes recall answer by keyword. The failure is logged
and reported on the result, never swallowed into a wrong answer.

Each call to the embedder is told to the service's ``observers`` (none by default; a server's
metrics attach one) as an :class:`EmbedCall`: its purpose, batch size, time and outcome, never
the text.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Literal, Sequence, TypeVar

from hippo.errors import EmbedderMismatch, ProviderError
from hippo.providers.base import Embedder, Thresholds, embed_windows, normalize_rows

if TYPE_CHECKING:
    import numpy as np

    from hippo.core.ports import Store

__all__ = ["EmbedCall", "EmbeddingObserver", "EmbeddingService"]

log = logging.getLogger("hippo.embedding")
_CACHE_SIZE = 2048
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class EmbedCall:
    """One call to the embedder, as an observer sees it: what it embedded (documents to store,
    a query, or single words for the pair classifier), how many texts, how long it took, and
    whether it answered. No text: an observer learns sizes and times, never content."""

    purpose: Literal["documents", "query", "words"]
    batch: int
    seconds: float
    ok: bool


EmbeddingObserver = Callable[[EmbedCall], None]
# The embedders that have answered once in this process, whichever memory asked: one model object
# is shared by every agent's memory of a server (and a local model's runtime by the whole process).
_ANSWERED: "weakref.WeakSet[Embedder]" = weakref.WeakSet()


def mismatch_message(recorded: tuple[str, int | None], model_id: str, dimension: int | None) -> str:
    return (
        f"this database's vectors were made with {recorded[0]} (dimension {recorded[1]}), "
        f"not {model_id} (dimension {dimension}). Open it with embedder={recorded[0]!r}, or switch "
        f"models by re-embedding every chunk: hippo.reembed(path, embedder={model_id!r}) "
        f"or `hippo reembed --embedder {model_id}`"
    )


class EmbeddingService:
    """Shared by the threads of a server (one per agent memory): the cache is behind a lock, and
    ``last_error`` is each thread's own, so a failure is reported on the call that met it."""

    def __init__(self, embedder: Embedder | None, store: "Store", *, verify: bool = True) -> None:
        self.embedder = embedder
        self._store = store
        self._cache: OrderedDict[tuple[str, str], "np.ndarray"] = OrderedDict()
        self._lock = threading.Lock()
        self._local = threading.local()
        self._verified_dimension: int | None = None
        # Told of each call to the embedder (a server's metrics); none by default. Cache hits are
        # not calls: they reach no observer.
        self.observers: list[EmbeddingObserver] = []
        if embedder is not None and verify:
            recorded = store.embedder_record()
            if recorded is not None and (
                recorded[0] != embedder.model_id
                or (embedder.dimension is not None and recorded[1] not in (None, embedder.dimension))
            ):
                raise EmbedderMismatch(mismatch_message(recorded, embedder.model_id, embedder.dimension))

    @property
    def loaded(self) -> bool:
        """Whether the embedder has answered once in this process, for any memory (a model loads
        on first use); True without one. Asks nothing of the model."""
        return self.embedder is None or self.embedder in _ANSWERED

    @property
    def last_error(self) -> str | None:
        """Why this thread's last embedding call failed; None when it succeeded."""
        return getattr(self._local, "error", None)

    @last_error.setter
    def last_error(self, value: str | None) -> None:
        self._local.error = value

    def _cached(self, key: tuple[str, str]) -> "np.ndarray | None":
        with self._lock:
            return self._cache.get(key)

    @property
    def thresholds(self) -> Thresholds:
        return self.embedder.thresholds if self.embedder is not None else Thresholds()

    def documents(self, texts: Sequence[str]) -> list["np.ndarray | None"]:
        """One vector per text (its first window's: what the model reads of its start), or ``None``
        for each when the embedder is missing or down."""
        return [None if rows is None else rows[0] for rows in self.windows(texts)]

    def windows(self, texts: Sequence[str]) -> list["np.ndarray | None"]:
        """Each text's vectors to store, shape ``(windows, dimension)``: one row for a text the model
        reads whole, one per overlapping window of a longer one (the first row is
        :meth:`documents`' vector); ``None`` for each when the embedder is missing or down. Each
        text is embedded once: the windows are cached together, and ``documents`` reads them."""
        if self.embedder is None or not texts:
            return [None] * len(texts)
        # Read from a local map, not back from the cache: a batch larger than the cache evicts its own start.
        cached = {t: self._cached(("d", t)) for t in dict.fromkeys(texts)}
        found = {t: v for t, v in cached.items() if v is not None}
        missing = [t for t in cached if t not in found]
        if missing:
            embedder = self.embedder
            try:
                made = [normalize_rows(rows) for rows in
                        self._observed("documents", len(missing), lambda: embed_windows(embedder, missing))]
            except ProviderError as exc:
                self._failed(exc)
                return [None] * len(texts)
            self._check_dimension(made[0].shape[1])
            for text, rows in zip(missing, made):
                found[text] = rows
                self._remember(("d", text), rows)
        self.last_error = None
        return [found[t] for t in texts]

    def words(self, texts: list[str]) -> "np.ndarray":
        """Unit vectors of short texts (single words) for the offline pair classifier; zeros when
        the embedder is down, which its features read as "no evidence"."""
        import numpy as np

        vectors = self.documents(texts)
        size = next((len(v) for v in vectors if v is not None), 1)
        return np.stack([v if v is not None else np.zeros(size, dtype=np.float32) for v in vectors]) \
            if vectors else np.zeros((0, size), dtype=np.float32)

    def word_states(self, texts: list[str]) -> list[tuple[list[str], "np.ndarray"]]:
        """The contextual vectors of each text's words, for the offline pair classifier: from an embedder
        that offers them (``LocalEmbedder.word_states``); an empty list when it does not or is down,
        which the classifier reads as "no evidence"."""
        states = getattr(self.embedder, "word_states", None)
        if states is None:
            return []
        try:
            found: list[tuple[list[str], np.ndarray]] = self._observed("words", len(texts), lambda: states(texts))
        except ProviderError as exc:
            self._failed(exc)
            return []
        return found

    def query(self, text: str) -> "np.ndarray | None":
        if self.embedder is None:
            return None
        key = ("q", text)
        vector = self._cached(key)
        if vector is None:
            embedder = self.embedder
            try:
                # A long query is read whole: the mean of its windows' vectors, one direction that
                # every part of it pulls (a short one is the model's own query vector).
                rows = self._observed("query", 1, lambda: embed_windows(embedder, [text], query=True))[0]
                vector = normalize_rows(rows.mean(axis=0) if len(rows) > 1 else rows[0])[0]
            except ProviderError as exc:
                self._failed(exc)
                return None
            self._check_dimension(len(vector))
            self._remember(key, vector)
        self.last_error = None
        return vector

    def _observed(self, purpose: Literal["documents", "query", "words"], batch: int, call: Callable[[], T]) -> T:
        """``call``'s result, each observer told how long it took and whether it answered."""
        began, ok = time.perf_counter(), False
        try:
            result = call()
            ok = True
            if self.embedder is not None:  # always, when called: kept explicit for the type checker
                _ANSWERED.add(self.embedder)
            return result
        finally:
            if self.observers:
                seen = EmbedCall(purpose, batch, time.perf_counter() - began, ok)
                for observer in list(self.observers):
                    observer(seen)

    def _remember(self, key: tuple[str, str], vector: "np.ndarray") -> None:
        with self._lock:
            self._cache[key] = vector
            self._cache.move_to_end(key)
            while len(self._cache) > _CACHE_SIZE:
                self._cache.popitem(last=False)

    def _failed(self, exc: ProviderError) -> None:
        self.last_error = f"embedder {self.embedder.model_id} failed: {exc.message}"  # type: ignore[union-attr]
        log.warning("%s", self.last_error)

    def _check_dimension(self, dimension: int) -> None:
        """Record the model on first use; refuse vectors of another size."""
        assert self.embedder is not None
        if dimension == self._verified_dimension:
            return
        recorded = self._store.embedder_record()
        if recorded is None or recorded[1] is None:
            if recorded is None or recorded[0] == self.embedder.model_id:
                self._store.set_embedder_record(self.embedder.model_id, dimension)
                self._verified_dimension = dimension
                return
        if recorded is not None and (recorded[0], recorded[1]) != (self.embedder.model_id, dimension):
            raise EmbedderMismatch(mismatch_message(recorded, self.embedder.model_id, dimension))
        self._verified_dimension = dimension
