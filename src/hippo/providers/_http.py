"""What the HTTP embedders share: one JSON POST with error mapping, response checks,
and a lazily created, pooled httpx client."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hippo.errors import ProviderError
from hippo.providers.base import normalize_rows

if TYPE_CHECKING:
    import httpx
    import numpy as np

__all__ = ["HTTPClientMixin", "as_matrix", "check_dimension", "post_json"]

# Rejections that may go away if the same request is sent again later.
_RETRYABLE_STATUS = {408, 425, 429}


class HTTPClientMixin:
    """A pooled httpx client made on first use, so ``import hippo`` stays light."""

    timeout: float
    _client: "httpx.Client | None" = None

    def _http(self) -> "httpx.Client":
        if self._client is None:
            import httpx

            self._client = httpx.Client(timeout=self.timeout)
        return self._client

    def close(self) -> None:
        """Close the pooled HTTP connections."""
        if self._client is not None:
            self._client.close()
            self._client = None


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
        raise ProviderError(f"{provider}: request to {url} failed: {exc}", retryable=True) from exc
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
