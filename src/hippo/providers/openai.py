"""OpenAI, or any server speaking its wire format: embeddings and chat completions.

Embeddings use plain httpx rather than the SDK: one POST is all that is needed, and
local OpenAI-compatible servers (llama.cpp, vLLM, LM Studio) answer the same request.
Chat goes through the official ``openai`` SDK (an optional extra), imported only when
an :class:`OpenAILLM` is built, for its retries, timeouts and error classes.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, Sequence
from urllib.parse import urlsplit

from hippo.errors import ConfigError, MissingDependency, ProviderError
from hippo.providers._http import HTTPClientMixin, as_matrix, check_dimension, post_json
from hippo.providers.base import (
    ChatTurn,
    Completion,
    Message,
    Thresholds,
    ToolCall,
    ToolSpec,
    Usage,
    check_texts,
)

if TYPE_CHECKING:
    import numpy as np

__all__ = ["OpenAIEmbedder", "OpenAILLM", "KNOWN_DIMENSIONS"]

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


# OpenAI-compatible servers other than OpenAI's own (Ollama, vLLM, LM Studio) ignore
# the key, but the SDK refuses to start without one.
PLACEHOLDER_API_KEY = "hippo-no-key"
# Rejections that may go away if the same request is sent again later (5xx aside).
_RETRYABLE_STATUS = {408, 425, 429}
JSON_INSTRUCTION = "Answer with a single JSON object and nothing else."


def _server_message(body: object, fallback: str) -> str:
    """The server's own explanation: ``error.message``, or an Ollama-style ``error`` string."""
    error = body.get("error", body) if isinstance(body, dict) else body
    message = error.get("message") if isinstance(error, dict) else error
    return str(message if isinstance(message, str) and message else fallback)[:500]


class OpenAILLM:
    """Chat completions from OpenAI or an OpenAI-compatible server (``openai:gpt-4o-mini``).

    ``base_url`` (or ``$OPENAI_BASE_URL``) points it at Ollama (``http://localhost:11434/v1``),
    vLLM, LM Studio, OpenRouter or Gemini's OpenAI-compatible endpoint. ``temperature=None``
    sends none, for models that only accept their default (o-series, gpt-5).
    """

    def __init__(
        self,
        model: str | None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 2,
        temperature: float | None = 0.0,
    ) -> None:
        if not model:
            raise ConfigError("the openai LLM needs a model, e.g. 'openai:gpt-4o-mini'")
        self.model = model
        self.model_id = f"openai:{model}"
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).strip().rstrip("/")
        official = urlsplit(self.base_url).hostname == "api.openai.com"
        key = api_key or os.environ.get("OPENAI_API_KEY") or None
        if key is None:
            if official:
                raise ConfigError(
                    "OPENAI_API_KEY is not set: api.openai.com needs an API key "
                    "(pass api_key=... or set OPENAI_API_KEY)"
                )
            key = PLACEHOLDER_API_KEY
        self.temperature = temperature
        # OpenAI deprecated max_tokens and its reasoning models reject it; compatible
        # servers do not all know the newer max_completion_tokens.
        self._max_tokens_param = "max_completion_tokens" if official else "max_tokens"
        try:
            import openai
        except ImportError:
            raise MissingDependency("openai", "openai") from None
        self._sdk = openai
        try:
            self._client = openai.OpenAI(
                base_url=self.base_url, api_key=key, timeout=timeout, max_retries=max_retries
            )
        except openai.OpenAIError as exc:
            raise ConfigError(f"{self.model_id}: cannot build the OpenAI client: {exc}") from exc

    def complete(
        self, system: str, messages: Sequence[Message], *, max_tokens: int = 1024, json: bool = False
    ) -> Completion:
        """One chat completion; ``json=True`` turns on the server's JSON mode."""
        if json and "json" not in " ".join([system, *(m.content for m in messages)]).lower():
            # JSON mode refuses (HTTP 400) a conversation that never says "JSON".
            system = f"{system}\n\n{JSON_INSTRUCTION}" if system else JSON_INSTRUCTION
        chat = [{"role": "system", "content": system}] if system else []
        chat += [{"role": m.role, "content": m.content} for m in messages]
        params: dict[str, Any] = {"model": self.model, "messages": chat, self._max_tokens_param: max_tokens}
        if self.temperature is not None:
            params["temperature"] = self.temperature
        if json:
            params["response_format"] = {"type": "json_object"}
        message, response = self._create(params)
        text = getattr(message, "content", None)
        if not isinstance(text, str):
            raise ProviderError(f"{self.model_id}: {_why_empty(message, response)}")
        return Completion(text, _usage(response), getattr(response, "model", None) or self.model)

    def chat(
        self, system: str, messages: Sequence[Message], tools: Sequence[ToolSpec], *, max_tokens: int = 1024
    ) -> ChatTurn:
        """One tool-calling turn over Chat Completions (``tools`` as function definitions)."""
        chat = [{"role": "system", "content": system}] if system else []
        chat += [_wire_message(m) for m in messages]
        params: dict[str, Any] = {"model": self.model, "messages": chat, self._max_tokens_param: max_tokens}
        if tools:
            params["tools"] = [
                {"type": "function",
                 "function": {"name": t.name, "description": t.description, "parameters": dict(t.parameters)}}
                for t in tools
            ]
        if self.temperature is not None:
            params["temperature"] = self.temperature
        message, response = self._create(params)
        calls = tuple(
            ToolCall(c.id, c.function.name, _arguments(c.function.arguments))
            for c in getattr(message, "tool_calls", None) or [] if getattr(c, "type", "function") == "function"
        )
        text = getattr(message, "content", None) or ""
        if not text and not calls:
            raise ProviderError(f"{self.model_id}: {_why_empty(message, response)}")
        return ChatTurn(text, calls, _usage(response), getattr(response, "model", None) or self.model)

    def _create(self, params: dict[str, Any]) -> tuple[Any, Any]:
        """Send one request; returns (first choice's message, response) or raises ProviderError."""
        try:
            response = self._client.chat.completions.create(**params)
        except self._sdk.OpenAIError as exc:
            raise self._error(exc) from exc
        except ValueError as exc:  # a 200 whose body is not JSON (a proxy's HTML page)
            raise ProviderError(f"{self.model_id}: {self.base_url} answered with invalid JSON") from exc
        choices = getattr(response, "choices", None)
        if not choices:
            raise ProviderError(f"{self.model_id}: the response has no choices")
        return getattr(choices[0], "message", None), response

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
        return f"OpenAILLM({self.model!r}, base_url={self.base_url!r})"


def _why_empty(message: Any, response: Any) -> str:
    refusal = getattr(message, "refusal", None)
    if refusal:
        return f"the model refused: {refusal}"
    choice = response.choices[0]
    return f"the answer has no content (finish_reason {getattr(choice, 'finish_reason', None)!r})"


def _usage(response: Any) -> Usage:
    usage = getattr(response, "usage", None)  # some compatible servers omit it
    return Usage(int(getattr(usage, "prompt_tokens", 0) or 0), int(getattr(usage, "completion_tokens", 0) or 0))


def _arguments(raw: Any) -> dict[str, Any] | str:
    """A tool call's arguments as a dict, or the raw text when the model wrote invalid JSON."""
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw or "{}")
    except (TypeError, ValueError):
        return str(raw)
    return value if isinstance(value, dict) else str(raw)


def _wire_message(m: Message) -> dict[str, Any]:
    """One history message in Chat Completions form, tool calls and tool results included."""
    if m.role == "tool":
        return {"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content}
    out: dict[str, Any] = {"role": m.role, "content": m.content}
    if m.tool_calls:
        out["content"] = m.content or None
        out["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {
                "name": c.name,
                "arguments": c.arguments if isinstance(c.arguments, str) else json.dumps(c.arguments),
            }}
            for c in m.tool_calls
        ]
    return out
