"""Embeddings from OpenAI or any server speaking its ``/embeddings`` wire format.

Plain httpx rather than the SDK: one POST is all that is needed, and local
OpenAI-compatible servers (llama.cpp, vLLM, LM Studio) answer the same request.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Sequence
from urllib.parse import urlsplit

from hippo.errors import ConfigError, ProviderError
from hippo.providers._http import HTTPClientMixin, as_matrix, check_dimension, check_texts, post_json
from hippo.providers.base import Thresholds

if TYPE_CHECKING:
    import numpy as np

__all__ = ["OpenAIEmbedder", "KNOWN_DIMENSIONS"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
BATCH_SIZE = 256
KNOWN_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
# Seed 000's bands were measured on text-embedding-3-small; -large is assumed alike.
_SEED_THRESHOLDS = Thresholds(duplicate=0.93, ambiguous=0.78, forget=0.6)
_THRESHOLDS = {
    "text-embedding-3-small": _SEED_THRESHOLDS,
    "text-embedding-3-large": _SEED_THRESHOLDS,
}


class OpenAIEmbedder(HTTPClientMixin):
    """Embeddings from an OpenAI-compatible endpoint (``openai:text-embedding-3-small``)."""

    def __init__(
        self,
        model: str | None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 30.0,
        dimension: int | None = None,
    ) -> None:
        if not model:
            raise ConfigError(
                "the openai embedder needs a model, e.g. 'openai:text-embedding-3-small'"
            )
        if dimension is not None and (not isinstance(dimension, int) or dimension < 1):
            raise ConfigError(f"dimension must be a positive integer, got {dimension!r}")
        self.model = model
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL)
        self.base_url = self.base_url.strip().rstrip("/")
        self.api_key = api_key or os.environ.get("OPENAI_API_KEY") or None
        if self.api_key is None and urlsplit(self.base_url).hostname == "api.openai.com":
            raise ConfigError(
                "OPENAI_API_KEY is not set: api.openai.com needs an API key "
                "(pass api_key=... or set OPENAI_API_KEY)"
            )
        self.timeout = timeout
        self.model_id = f"openai:{model}"
        # Only an explicit dimension is sent: older models reject the parameter.
        self._requested_dimension = dimension
        self.dimension: int | None = dimension or KNOWN_DIMENSIONS.get(model)
        self.thresholds = _THRESHOLDS.get(model, Thresholds())

    def _request(self, batch: list[str]) -> "np.ndarray":
        payload: dict[str, Any] = {"model": self.model, "input": batch}
        if self._requested_dimension is not None:
            payload["dimensions"] = self._requested_dimension
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else None
        body = post_json(
            self._http(), f"{self.base_url}/embeddings", payload,
            provider=self.model_id, headers=headers,
        )
        data = body.get("data") if isinstance(body, dict) else None
        if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
            raise ProviderError(f"{self.model_id}: response has no 'data' list")
        # Servers may return items out of order; "index" says where each belongs.
        try:
            items = sorted(data, key=lambda item: int(item["index"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise ProviderError(f"{self.model_id}: response items lack an 'index'") from exc
        if [int(item["index"]) for item in items] != list(range(len(items))):
            raise ProviderError(f"{self.model_id}: response indexes do not match the input")
        return as_matrix([item.get("embedding") for item in items], len(batch), self.model_id)

    def embed_documents(self, texts: Sequence[str]) -> "np.ndarray":
        """Unit-length vectors, shape ``(len(texts), dimension)``."""
        import numpy as np

        texts = check_texts(texts)
        if not texts:
            return np.zeros((0, self.dimension or 0), dtype=np.float32)
        parts = []
        for start in range(0, len(texts), BATCH_SIZE):
            matrix = self._request(texts[start : start + BATCH_SIZE])
            self.dimension = check_dimension(self.dimension, matrix, self.model_id)
            parts.append(matrix)
        return np.concatenate(parts)

    def embed_query(self, text: str) -> "np.ndarray":
        """The unit-length vector of one search query."""
        return self.embed_documents([text])[0]

    def __repr__(self) -> str:
        return f"OpenAIEmbedder({self.model!r}, base_url={self.base_url!r})"
