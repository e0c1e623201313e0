"""Embeddings from an Ollama server over its ``/api/embed`` endpoint."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Sequence
from urllib.parse import urlsplit

from hippo.errors import ConfigError
from hippo.providers._http import HTTPClientMixin, as_matrix, check_dimension, post_json
from hippo.providers.base import Thresholds, check_texts

if TYPE_CHECKING:
    import numpy as np

__all__ = ["OllamaEmbedder"]

DEFAULT_HOST = "http://localhost:11434"
BATCH_SIZE = 64
# nomic-embed-text was trained with task prefixes and ranks worse without them.
_NOMIC_PREFIXES = ("search_document: ", "search_query: ")


def _ollama_base_url(base_url: str | None) -> str:
    """Like Ollama's own clients: ``OLLAMA_HOST`` may lack a scheme and a port."""
    raw = (base_url or os.environ.get("OLLAMA_HOST") or DEFAULT_HOST).strip().rstrip("/")
    if "://" not in raw:
        raw = f"http://{raw}"
        if urlsplit(raw).port is None:
            raw = f"{raw}:11434"
    return raw


class OllamaEmbedder(HTTPClientMixin):
    """Embeddings from a model served by Ollama (``ollama:nomic-embed-text``)."""

    def __init__(
        self,
        model: str | None,
        *,
        base_url: str | None = None,
        timeout: float = 30.0,
        dimension: int | None = None,
    ) -> None:
        if not model:
            raise ConfigError("the ollama embedder needs a model, e.g. 'ollama:nomic-embed-text'")
        if dimension is not None and (not isinstance(dimension, int) or dimension < 1):
            raise ConfigError(f"dimension must be a positive integer, got {dimension!r}")
        self.model = model
        self.base_url = _ollama_base_url(base_url)
        self.timeout = timeout
        self.model_id = f"ollama:{model}"
        self.dimension = dimension
        # The default bands (measured on OpenAI's text-embedding-3-small); not yet measured here.
        self.thresholds = Thresholds()
        self._prefixes = (
            _NOMIC_PREFIXES if model.lower().startswith("nomic-embed-text") else ("", "")
        )

    def _embed(self, texts: list[str], prefix: str) -> "np.ndarray":
        import numpy as np

        if not texts:
            return np.zeros((0, self.dimension or 0), dtype=np.float32)
        url = f"{self.base_url}/api/embed"
        parts = []
        for start in range(0, len(texts), BATCH_SIZE):
            batch = [prefix + text for text in texts[start : start + BATCH_SIZE]]
            body = post_json(
                self._http(), url, {"model": self.model, "input": batch}, provider=self.model_id
            )
            rows = body.get("embeddings") if isinstance(body, dict) else None
            matrix = as_matrix(rows, len(batch), self.model_id)
            self.dimension = check_dimension(self.dimension, matrix, self.model_id)
            parts.append(matrix)
        return np.concatenate(parts)

    def embed_documents(self, texts: Sequence[str]) -> "np.ndarray":
        """Unit-length vectors for texts to store, shape ``(len(texts), dimension)``."""
        return self._embed(check_texts(texts), self._prefixes[0])

    def embed_query(self, text: str) -> "np.ndarray":
        """The unit-length vector of one search query."""
        return self._embed(check_texts([text]), self._prefixes[1])[0]

    def __repr__(self) -> str:
        return f"OllamaEmbedder({self.model!r}, base_url={self.base_url!r})"
