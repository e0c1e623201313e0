"""Filling pending vectors, and switching a database to another embedding model."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from hippo import limits
from hippo.core import validation as v
from hippo.errors import ProviderError
from hippo.types import ReembedResult

if TYPE_CHECKING:
    from hippo.core.embedding import EmbeddingService
    from hippo.core.ports import Store

__all__ = ["Progress", "fill_pending", "switch_model"]

Progress = Callable[[int, int], None]
"""Called with (done, total) after each batch."""


def fill_pending(
    store: "Store",
    embedding: "EmbeddingService",
    agent_id: str | None,
    *,
    batch_size: int = 64,
    progress: Progress | None = None,
) -> ReembedResult:
    """Embed every chunk that has no vector (of one agent, or all when ``None``).

    Stops at the first batch the embedder fails on: what was embedded stays,
    the rest stays pending, and the error is raised. ``batch_size`` is the chunks per batch, 1 to
    ``limits.EMBED_BATCH``; ``progress`` is called with (done, total) after each.
    """
    batch_size, progress = _checked(batch_size, progress)
    embedder = embedding.embedder
    if embedder is None:
        raise ProviderError("no embedder is configured; nothing can be re-embedded")
    total = store.count_pending(agent_id)
    done = 0
    if progress:
        progress(0, total)
    while True:
        batch = store.pending_vectors(agent_id, batch_size)
        if not batch:
            break
        vectors = embedding.windows([content for _, _, content in batch])  # a long text's windows too
        if any(vec is None for vec in vectors):
            raise ProviderError(
                f"{embedding.last_error}; {done} of {total} chunks were embedded, run reembed again to finish",
                retryable=True,
            )
        by_agent: dict[str, dict] = {}
        for (owner, chunk_id, _), vector in zip(batch, vectors):
            by_agent.setdefault(owner, {})[chunk_id] = vector
        with store.transaction():
            for owner, items in by_agent.items():
                store.set_vectors(owner, items)
        done += len(batch)
        if progress:
            progress(min(done, total), total)
    record = store.embedder_record()
    return ReembedResult(done, store.count_pending(agent_id), embedder.model_id, record[1] if record else None)


def _checked(batch_size: object, progress: object) -> tuple[int, Progress | None]:
    return v.check_int(batch_size, "batch_size", 1, limits.EMBED_BATCH), v.check_progress(progress)


def switch_model(store: "Store", embedding: "EmbeddingService", *, batch_size: int = 64,
                 progress: Progress | None = None) -> ReembedResult:
    """Drop every vector, record the new model, then embed every chunk with it.

    If interrupted, the database records the new model and the chunks not yet
    done stay pending, so running it again finishes the job. Bad arguments drop nothing.
    """
    batch_size, progress = _checked(batch_size, progress)
    embedder = embedding.embedder
    if embedder is None:
        raise ProviderError("no embedder is configured; choose one to switch to")
    record = store.embedder_record()
    if record is None or record[0] != embedder.model_id or (
        embedder.dimension is not None and record[1] not in (None, embedder.dimension)
    ):
        with store.transaction():
            store.clear_vectors()
            store.clear_archived_vectors()  # a forget embeds the archive again with the new model
            store.set_embedder_record(embedder.model_id, embedder.dimension)
    return fill_pending(store, embedding, None, batch_size=batch_size, progress=progress)
