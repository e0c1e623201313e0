"""Embeddings from an Ollama server over its ``/api/embed`` endpoint.

The helpers here (:func:`post_json`, :func:`as_matrix`, :func:`check_dimension`,
:func:`check_texts`) are shared with the OpenAI-compatible provider, which
speaks the same JSON over POST and maps failures the same way.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Sequence
from urllib.parse import urlsplit

from hippo.errors import ConfigError, InvalidInput, ProviderError
from hippo.providers.base import Thresholds, normalize_rows

if TYPE_CHECKING:
    import httpx
    import numpy as np

__all__ = ["OllamaEmbedder", "post_json", "as_matrix", "check_dimension", "check_texts"]

DEFAULT_HOST = "http://localhost:11434"
BATCH_SIZE = 64
# Rejections that may go away if the same request is sent again later.
_RETRYABLE_STATUS = {408, 425, 429}
# nomic-embed-text was trained with task prefixes and ranks worse without them.
_NOMIC_PREFIXES = ("search_document: ", "search_query: ")


def _error_text(response: "httpx.Response") -> str:
    """The server's own explanation: Ollama's ``error`` string or OpenAI's ``error.message``."""
    try:
        body = response.json()
    except ValueError:
        return response.text.strip()[:500] or response.reason_phrase
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        error = error.get("message") or error
    return str(error if error is not None else body)[:500]


def post_json(
    client: "httpx.Client", url: str, payload: dict[str, Any], *, provider: str,
    headers: dict[str, str] | None = None,
) -> Any:
    """POST ``payload`` and return the decoded JSON, mapping failures to ProviderError.

    Transport failures, timeouts, 5xx and 429 are retryable; other 4xx are not.
    """
    import httpx

    try:
        response = client.post(url, json=payload, headers=headers)
    except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
        raise ProviderError(f"{provider}: bad URL {url!r}: {exc}", retryable=False) from exc
    except httpx.TimeoutException as exc:
        raise ProviderError(f"{provider}: request to {url} timed out", retryable=True) from exc
    except httpx.TransportError as exc:
        raise ProviderError(f"{provider}: cannot reach {url}: {exc}", retryable=True) from exc
    status = response.status_code
    if status >= 400:
        retryable = status >= 500 or status in _RETRYABLE_STATUS
        raise ProviderError(
            f"{provider}: HTTP {status} from {url}: {_error_text(response)}", retryable=retryable
        )
    try:
        return response.json()
    except ValueError as exc:
        raise ProviderError(f"{provider}: {url} answered with invalid JSON") from exc


def as_matrix(rows: Any, count: int, provider: str) -> "np.ndarray":
    """Check that ``rows`` holds ``count`` equal-length numeric vectors; return them normalised."""
    import numpy as np

    if not isinstance(rows, list) or len(rows) != count:
        got = len(rows) if isinstance(rows, list) else type(rows).__name__
        raise ProviderError(f"{provider}: asked for {count} embeddings, got {got}")
    try:
        matrix = np.asarray(rows, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise ProviderError(f"{provider}: embeddings are not a numeric matrix") from exc
    if matrix.ndim != 2 or matrix.shape[1] == 0 or not np.isfinite(matrix).all():
        raise ProviderError(f"{provider}: embeddings are not a finite numeric matrix")
    return normalize_rows(matrix)


def check_dimension(expected: int | None, matrix: "np.ndarray", provider: str) -> int:
    """The dimension of ``matrix``, which must equal ``expected`` once that is known."""
    got = int(matrix.shape[1])
    if expected is not None and got != expected:
        raise ProviderError(
            f"{provider}: expected {expected}-dimensional embeddings, got {got}", retryable=False
        )
    return got


def check_texts(texts: Sequence[str]) -> list[str]:
    """``texts`` as a list, refusing a bare string or non-string items."""
    if isinstance(texts, str):
        raise InvalidInput("embed_documents takes a sequence of strings, not one string")
    texts = list(texts)
    for text in texts:
        if not isinstance(text, str):
            raise InvalidInput(f"can only embed strings, got {type(text).__name__}")
    return texts


def _ollama_base_url(base_url: str | None) -> str:
    """Like Ollama's own clients: ``OLLAMA_HOST`` may lack a scheme and a port."""
    raw = (base_url or os.environ.get("OLLAMA_HOST") or DEFAULT_HOST).strip().rstrip("/")
    if "://" not in raw:
        raw = f"http://{raw}"
        if urlsplit(raw).port is None:
            raw = f"{raw}:11434"
    return raw


class OllamaEmbedder:
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
        self.model = model
        self.base_url = _ollama_base_url(base_url)
        self.timeout = timeout
        self.model_id = f"ollama:{model}"
        self.dimension = dimension
        # The seed's bands (measured on text-embedding-3-small); not yet measured here.
        self.thresholds = Thresholds()
        self._prefixes = (
            _NOMIC_PREFIXES if model.lower().startswith("nomic-embed-text") else ("", "")
        )
        self._client: "httpx.Client | None" = None

    def _http(self) -> "httpx.Client":
        if self._client is None:
            import httpx  # imported here so that `import hippo` stays light

            self._client = httpx.Client(timeout=self.timeout)
        return self._client

    def close(self) -> None:
        """Close the pooled HTTP connections."""
        if self._client is not None:
            self._client.close()
            self._client = None

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
