"""Claude through the official ``anthropic`` SDK (an optional extra), imported only
when an :class:`AnthropicLLM` is built."""

from __future__ import annotations

from typing import Any, Sequence

from hippo.errors import ProviderError
from hippo.providers._sdk import SDKLLM, Vendor
from hippo.providers.base import ChatTurn, Completion, Message, ToolCall, ToolSpec, Usage

__all__ = ["AnthropicLLM", "JSON_INSTRUCTION"]

# The Messages API has no JSON mode, and assistant prefill ("{") is refused by newer
# models, so the system prompt asks for it instead; the caller still validates.
JSON_INSTRUCTION = (
    "Respond with a single JSON object and nothing else: no prose before or after it, no code fences."
)


class AnthropicLLM(SDKLLM):
    """Claude through the Messages API (``anthropic:claude-haiku-4-5``).

    ``temperature`` defaults to ``None`` (not sent): the 1.x+ SDKs dropped the argument
    and newer models reject it; a number is sent through ``extra_body`` for the models
    that still take it.
    """

    vendor = Vendor(
        name="anthropic", example="claude-haiku-4-5", default_base_url="https://api.anthropic.com",
        client="Anthropic", error="AnthropicError", client_errors=(ValueError, TypeError),
    )

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
        response = self.send(self.client.messages.create, params)
        if not isinstance(getattr(response, "content", None), list):
            raise ProviderError(f"{self.model_id}: the response has no content list")
        return response


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
