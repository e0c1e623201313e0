"""Claude through the official ``anthropic`` SDK (an optional extra), imported only
when an :class:`AnthropicLLM` is built."""

from __future__ import annotations

import os
from typing import Any, Sequence
from urllib.parse import urlsplit

from hippo.errors import ConfigError, MissingDependency, ProviderError
from hippo.providers.base import ChatTurn, Completion, Message, ToolCall, ToolSpec, Usage

__all__ = ["AnthropicLLM", "JSON_INSTRUCTION"]

DEFAULT_BASE_URL = "https://api.anthropic.com"
# Anthropic-compatible gateways and local proxies may ignore the key, but the SDK
# would otherwise go looking for credentials in the environment and on disk.
PLACEHOLDER_API_KEY = "hippo-no-key"
# Rejections that may go away if the same request is sent again later (5xx aside).
_RETRYABLE_STATUS = {408, 425, 429}
# The Messages API has no JSON mode, and assistant prefill ("{") is refused by newer
# models, so the system prompt asks for it instead; the caller still validates.
JSON_INSTRUCTION = (
    "Respond with a single JSON object and nothing else: no prose before or after it, no code fences."
)


def _server_message(body: object, fallback: str) -> str:
    """The server's own explanation: ``error.message`` from Anthropic's error envelope."""
    error = body.get("error", body) if isinstance(body, dict) else body
    message = error.get("message") if isinstance(error, dict) else error
    return str(message if isinstance(message, str) and message else fallback)[:500]


class AnthropicLLM:
    """Claude through the Messages API (``anthropic:claude-haiku-4-5``).

    ``temperature`` defaults to ``None`` (not sent): the 1.x+ SDKs dropped the argument
    and newer models reject it; a number is sent through ``extra_body`` for the models
    that still take it.
    """

    def __init__(
        self,
        model: str | None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 2,
        temperature: float | None = None,
    ) -> None:
        if not model:
            raise ConfigError("the anthropic LLM needs a model, e.g. 'anthropic:claude-haiku-4-5'")
        self.model = model
        self.model_id = f"anthropic:{model}"
        self.base_url = (base_url or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL).strip().rstrip("/")
        key = api_key or os.environ.get("ANTHROPIC_API_KEY") or None
        if key is None:
            if urlsplit(self.base_url).hostname == "api.anthropic.com":
                raise ConfigError(
                    "ANTHROPIC_API_KEY is not set: api.anthropic.com needs an API key "
                    "(pass api_key=... or set ANTHROPIC_API_KEY)"
                )
            key = PLACEHOLDER_API_KEY
        self.temperature = temperature
        try:
            import anthropic
        except ImportError:
            raise MissingDependency("anthropic", "anthropic") from None
        self._sdk = anthropic
        try:
            # An explicit key keeps the SDK from reading profiles or federation settings.
            self._client = anthropic.Anthropic(
                base_url=self.base_url, api_key=key, timeout=timeout, max_retries=max_retries
            )
        except (anthropic.AnthropicError, ValueError, TypeError) as exc:
            raise ConfigError(f"{self.model_id}: cannot build the Anthropic client: {exc}") from exc

    def complete(
        self, system: str, messages: Sequence[Message], *, max_tokens: int = 1024, json: bool = False
    ) -> Completion:
        """One Messages API call; ``json=True`` asks for a bare JSON object in the system prompt."""
        if json:
            system = f"{system}\n\n{JSON_INSTRUCTION}" if system else JSON_INSTRUCTION
        params: dict[str, Any] = {
            "model": self.model,
            "max_tokens": max_tokens,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
        }
        response = self._create(params, system)
        texts = [b.text for b in response.content if getattr(b, "type", None) == "text" and isinstance(b.text, str)]
        if not texts:
            reason = getattr(response, "stop_reason", None)
            raise ProviderError(f"{self.model_id}: the answer has no text (stop_reason {reason!r})")
        return Completion("".join(texts), _usage(response), getattr(response, "model", None) or self.model)

    def chat(
        self, system: str, messages: Sequence[Message], tools: Sequence[ToolSpec], *, max_tokens: int = 1024
    ) -> ChatTurn:
        """One tool-calling turn over the Messages API (tool_use / tool_result blocks)."""
        params: dict[str, Any] = {"model": self.model, "max_tokens": max_tokens, "messages": _wire_messages(messages)}
        if tools:
            params["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": dict(t.parameters)} for t in tools
            ]
        response = self._create(params, system)
        text = "".join(b.text for b in response.content if getattr(b, "type", None) == "text")
        calls = tuple(
            ToolCall(b.id, b.name, b.input if isinstance(b.input, dict) else str(b.input))
            for b in response.content if getattr(b, "type", None) == "tool_use"
        )
        if not text and not calls:
            reason = getattr(response, "stop_reason", None)
            raise ProviderError(f"{self.model_id}: the answer has no text and no tool call (stop_reason {reason!r})")
        return ChatTurn(text, calls, _usage(response), getattr(response, "model", None) or self.model)

    def _create(self, params: dict[str, Any], system: str) -> Any:
        """Send one request; returns the response with a content list, or raises ProviderError."""
        if system:
            params["system"] = system
        if self.temperature is not None:
            params["extra_body"] = {"temperature": self.temperature}
        try:
            response = self._client.messages.create(**params)
        except self._sdk.AnthropicError as exc:
            raise self._error(exc) from exc
        except ValueError as exc:  # a 200 whose body is not JSON (a proxy's HTML page)
            raise ProviderError(f"{self.model_id}: {self.base_url} answered with invalid JSON") from exc
        if not isinstance(getattr(response, "content", None), list):
            raise ProviderError(f"{self.model_id}: the response has no content list")
        return response

    def _error(self, exc: Exception) -> ProviderError:
        """Map an SDK exception to ProviderError, retryable where a retry may succeed."""
        sdk = self._sdk
        if isinstance(exc, sdk.APITimeoutError):
            return ProviderError(f"{self.model_id}: request to {self.base_url} timed out", retryable=True)
        if isinstance(exc, sdk.APIConnectionError):
            cause = exc.__cause__ or exc
            return ProviderError(f"{self.model_id}: request to {self.base_url} failed: {cause}", retryable=True)
        if isinstance(exc, sdk.APIStatusError):
            status = exc.status_code
            # InternalServerError covers 5xx, 529 (overloaded) included.
            retryable = isinstance(exc, (sdk.RateLimitError, sdk.InternalServerError)) or status in _RETRYABLE_STATUS
            return ProviderError(
                f"{self.model_id}: HTTP {status} from {self.base_url}: {_server_message(exc.body, exc.message)}",
                retryable=retryable,
            )
        return ProviderError(f"{self.model_id}: {exc}")

    def close(self) -> None:
        """Close the SDK's pooled HTTP connections."""
        self._client.close()

    def __repr__(self) -> str:
        return f"AnthropicLLM({self.model!r}, base_url={self.base_url!r})"


def _usage(response: Any) -> Usage:
    usage = getattr(response, "usage", None)
    return Usage(int(getattr(usage, "input_tokens", 0) or 0), int(getattr(usage, "output_tokens", 0) or 0))


def _wire_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """History in Messages API form: tool calls as ``tool_use`` blocks, consecutive tool results
    as ``tool_result`` blocks of one user message."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "tool":
            block = {"type": "tool_result", "tool_use_id": m.tool_call_id, "content": m.content}
            if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list):
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
        elif m.tool_calls:
            blocks: list[dict[str, Any]] = [{"type": "text", "text": m.content}] if m.content else []
            blocks += [{"type": "tool_use", "id": c.id, "name": c.name,
                        "input": c.arguments if isinstance(c.arguments, dict) else {}} for c in m.tool_calls]
            out.append({"role": m.role, "content": blocks})
        else:
            out.append({"role": m.role, "content": m.content})
    return out
