"""OpenAI, or any server speaking its wire format: embeddings and chat completions.

Embeddings use plain httpx rather than the SDK: one POST is all that is needed, and
local OpenAI-compatible servers (llama.cpp, vLLM, LM Studio) answer the same request.
Chat goes through the official ``openai`` SDK (an optional extra), imported only when
an :class:`OpenAILLM` is built, for its retries, timeouts and error classes.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Sequence

from hippo.errors import ConfigError, ProviderError
from hippo.providers._http import HTTPClientMixin, as_matrix, check_dimension, post_json
from hippo.providers._sdk import SDKLLM, Vendor
from hippo.providers.base import ChatTurn, Completion, Message, Thresholds, ToolCall, ToolSpec, Usage, check_texts

if TYPE_CHECKING:
    import numpy as np

__all__ = ["OpenAIEmbedder", "OpenAILLM", "KNOWN_DIMENSIONS"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
VENDOR = Vendor(
    name="openai", example="gpt-4o-mini", default_base_url=DEFAULT_BASE_URL, client="OpenAI", error="OpenAIError"
)
BATCH_SIZE = 256
KNOWN_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
# Fact recognition's bands were measured on text-embedding-3-small; -large is assumed alike.
_MEASURED_THRESHOLDS = Thresholds(duplicate=0.93, ambiguous=0.78, forget=0.6)
_THRESHOLDS = {
    "text-embedding-3-small": _MEASURED_THRESHOLDS,
    "text-embedding-3-large": _MEASURED_THRESHOLDS,
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
        self.base_url = VENDOR.base_url(base_url)
        self.api_key = VENDOR.api_key(api_key, self.base_url)
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


JSON_INSTRUCTION = "Answer with a single JSON object and nothing else."


class OpenAILLM(SDKLLM):
    """Chat completions from OpenAI or an OpenAI-compatible server (``openai:gpt-4o-mini``).

    ``base_url`` (or ``$OPENAI_BASE_URL``) points it at Ollama (``http://localhost:11434/v1``),
    vLLM, LM Studio, OpenRouter or Gemini's OpenAI-compatible endpoint. ``temperature=None``
    sends none, for models that only accept their default (o-series, gpt-5).
    """

    vendor = VENDOR

    def __init__(self, model: str | None, *, base_url: str | None = None, api_key: str | None = None,
                 timeout: float = 60.0, max_retries: int = 2, temperature: float | None = 0.0) -> None:
        super().__init__(model, base_url=base_url, api_key=api_key, timeout=timeout, max_retries=max_retries,
                         temperature=temperature)
        # OpenAI deprecated max_tokens and its reasoning models reject it; compatible
        # servers do not all know the newer max_completion_tokens.
        self._max_tokens_param = "max_completion_tokens" if self.official else "max_tokens"

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
        response = self.send(self.client.chat.completions.create, params)
        choices = getattr(response, "choices", None)
        if not choices:
            raise ProviderError(f"{self.model_id}: the response has no choices")
        return getattr(choices[0], "message", None), response


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
