"""What the LLMs behind a vendor's official SDK share: the base URL and API key read from the
arguments or the environment, the client built once the SDK is imported, and one request whose
failures become :class:`ProviderError`, retryable where a retry may succeed."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable, ClassVar
from urllib.parse import urlsplit

from hippo.errors import ConfigError, ProviderError
from hippo.providers.base import require

__all__ = ["PLACEHOLDER_API_KEY", "SDKLLM", "Vendor"]

# Compatible gateways and local servers (Ollama, vLLM, LM Studio, proxies) ignore the key, but
# the SDKs refuse to start without one or go looking for credentials in the environment and on disk.
PLACEHOLDER_API_KEY = "hippo-no-key"
# Rejections that may go away if the same request is sent again later (5xx aside).
_RETRYABLE_STATUS = {408, 425, 429}


@dataclass(frozen=True, slots=True)
class Vendor:
    """One vendor's names. ``name`` is the spec prefix, the SDK's package and its extra;
    ``<NAME>_BASE_URL`` and ``<NAME>_API_KEY`` are the environment variables read."""

    name: str
    example: str  # a model to name when none is given
    default_base_url: str
    client: str  # the SDK's client class, which also names it in errors
    error: str  # the SDK's base exception class
    client_errors: tuple[type[Exception], ...] = ()  # what else the client raises for bad settings

    def base_url(self, given: str | None) -> str:
        """The URL given, else ``$<NAME>_BASE_URL``, else the vendor's own API; no trailing slash."""
        url = given or os.environ.get(f"{self.name.upper()}_BASE_URL") or self.default_base_url
        return url.strip().rstrip("/")

    def official(self, base_url: str) -> bool:
        """Whether ``base_url`` is the vendor's own API rather than a compatible server."""
        return urlsplit(base_url).hostname == urlsplit(self.default_base_url).hostname

    def api_key(self, given: str | None, base_url: str) -> str | None:
        """The key given, else ``$<NAME>_API_KEY``; None when neither is set, which the vendor's
        own API refuses with a ConfigError."""
        env = f"{self.name.upper()}_API_KEY"
        key = given or os.environ.get(env) or None
        if key is None and self.official(base_url):
            host = urlsplit(base_url).hostname
            raise ConfigError(f"{env} is not set: {host} needs an API key (pass api_key=... or set {env})")
        return key


def _server_message(body: object, fallback: str) -> str:
    """The server's own explanation: ``error.message`` from an OpenAI or Anthropic error envelope,
    or an Ollama-style ``error`` string."""
    error = body.get("error", body) if isinstance(body, dict) else body
    message = error.get("message") if isinstance(error, dict) else error
    return str(message if isinstance(message, str) and message else fallback)[:500]


class SDKLLM:
    """An LLM reached through its vendor's SDK, imported only when one is built.

    ``temperature`` ``None`` sends none. ``official`` says whether ``base_url`` is the vendor's own
    API; ``sdk`` is the imported SDK module and ``client`` its client.
    """

    vendor: ClassVar[Vendor]

    def __init__(self, model: str | None, *, base_url: str | None = None, api_key: str | None = None,
                 timeout: float = 60.0, max_retries: int = 2, temperature: float | None = None) -> None:
        vendor = self.vendor
        if not model:
            raise ConfigError(f"the {vendor.name} LLM needs a model, e.g. '{vendor.name}:{vendor.example}'")
        self.model = model
        self.model_id = f"{vendor.name}:{model}"
        self.base_url = vendor.base_url(base_url)
        self.official = vendor.official(self.base_url)
        key = vendor.api_key(api_key, self.base_url) or PLACEHOLDER_API_KEY
        self.temperature = temperature
        self.sdk = require(vendor.name)
        try:
            # An explicit key keeps the SDK from reading profiles or federation settings.
            self.client = getattr(self.sdk, vendor.client)(
                base_url=self.base_url, api_key=key, timeout=timeout, max_retries=max_retries
            )
        except (getattr(self.sdk, vendor.error), *vendor.client_errors) as exc:
            raise ConfigError(f"{self.model_id}: cannot build the {vendor.client} client: {exc}") from exc

    def send(self, create: Callable[..., Any], params: dict[str, Any]) -> Any:
        """``create(**params)``, one SDK call, its failures raised as ProviderError."""
        try:
            return create(**params)
        except getattr(self.sdk, self.vendor.error) as exc:
            raise self.error(exc) from exc
        except ValueError as exc:  # a 200 whose body is not JSON (a proxy's HTML page)
            raise ProviderError(f"{self.model_id}: {self.base_url} answered with invalid JSON") from exc

    def error(self, exc: Exception) -> ProviderError:
        """Map an SDK exception to ProviderError, retryable where a retry may succeed."""
        sdk = self.sdk
        if isinstance(exc, sdk.APITimeoutError):
            return ProviderError(f"{self.model_id}: request to {self.base_url} timed out", retryable=True)
        if isinstance(exc, sdk.APIConnectionError):
            cause = exc.__cause__ or exc
            return ProviderError(f"{self.model_id}: request to {self.base_url} failed: {cause}", retryable=True)
        if isinstance(exc, sdk.APIStatusError):
            status = exc.status_code
            # InternalServerError covers 5xx, Anthropic's 529 (overloaded) included.
            retryable = isinstance(exc, (sdk.RateLimitError, sdk.InternalServerError)) or status in _RETRYABLE_STATUS
            return ProviderError(
                f"{self.model_id}: HTTP {status} from {self.base_url}: {_server_message(exc.body, exc.message)}",
                retryable=retryable,
            )
        return ProviderError(f"{self.model_id}: {exc}")

    def close(self) -> None:
        """Close the SDK's pooled HTTP connections."""
        self.client.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.model!r}, base_url={self.base_url!r})"
