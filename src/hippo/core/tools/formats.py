"""The agent tools as OpenAI and Anthropic tool definitions, and a dispatcher for their tool calls.

The dispatcher takes a tool call as the SDK returns it (a pydantic object) or
as a plain dict, runs it, and answers in the same format:

* OpenAI Chat Completions: ``{"id", "type": "function", "function": {"name", "arguments"}}``
  → ``{"role": "tool", "tool_call_id", "content"}``
* OpenAI Responses: ``{"type": "function_call", "call_id", "name", "arguments"}``
  → ``{"type": "function_call_output", "call_id", "output"}``
* Anthropic Messages: ``{"type": "tool_use", "id", "name", "input"}``
  → ``{"type": "tool_result", "tool_use_id", "content", "is_error"}``
"""

from __future__ import annotations

import json
from typing import Any, Iterator, Mapping, Protocol

from hippo.errors import InvalidInput

__all__ = ["Offered", "Tools", "anthropic_tools", "dispatch", "openai_responses_tools", "openai_tools",
           "results_for"]


class Offered(Protocol):
    """One tool as a format shows it (:class:`~hippo.core.tools.toolset.Tool` is one)."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def parameters(self) -> dict[str, Any]: ...


class Tools(Protocol):
    """The tools a format lists and a tool call runs (:class:`~hippo.core.tools.toolset.Toolset` is one)."""

    def __iter__(self) -> Iterator[Offered]: ...

    def call(self, name: Any, arguments: Mapping[str, Any] | str | None = None) -> dict[str, Any]: ...


def openai_tools(tools: Tools) -> list[dict[str, Any]]:
    return [
        {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
        for t in tools
    ]


def openai_responses_tools(tools: Tools) -> list[dict[str, Any]]:
    return [
        # strict mode would need every property required; optional arguments keep these non-strict
        {"type": "function", "name": t.name, "description": t.description, "parameters": t.parameters,
         "strict": False}
        for t in tools
    ]


def anthropic_tools(tools: Tools) -> list[dict[str, Any]]:
    return [{"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools]


def _as_dict(obj: Any) -> dict[str, Any]:
    if isinstance(obj, dict):
        return obj
    dump = getattr(obj, "model_dump", None)  # the SDKs' response objects are pydantic models
    if callable(dump):
        return dump(mode="json", exclude_none=False)
    raise InvalidInput(f"not a tool call: expected a dict or an SDK tool call object, got {type(obj).__name__}")


def _text(result: dict[str, Any]) -> str:
    return json.dumps(result, ensure_ascii=False, separators=(",", ":"))


def dispatch(tools: Tools, tool_call: Any) -> dict[str, Any]:
    call = _as_dict(tool_call)
    if call.get("type") == "tool_use":
        result = tools.call(call.get("name"), call.get("input"))  # a missing name answers unknown_tool
        return {"type": "tool_result", "tool_use_id": call.get("id"), "content": _text(result),
                "is_error": not result["ok"]}
    if call.get("type") == "function_call":
        result = tools.call(call.get("name"), call.get("arguments"))
        return {"type": "function_call_output", "call_id": call.get("call_id"), "output": _text(result)}
    function = call.get("function")
    if isinstance(function, dict):
        result = tools.call(function.get("name"), function.get("arguments"))
        return {"role": "tool", "tool_call_id": call.get("id"), "content": _text(result)}
    raise InvalidInput(
        "not a tool call: expected OpenAI {'function': {...}}, OpenAI Responses {'type': 'function_call'} "
        "or Anthropic {'type': 'tool_use'}"
    )


def results_for(tools: Tools, message: Any) -> list[dict[str, Any]]:
    """The messages that answer every tool call of one assistant message.

    OpenAI Chat: one ``tool`` message per call. Anthropic: one ``user`` message
    holding a ``tool_result`` block per ``tool_use`` block. A message without
    tool calls gives an empty list.
    """
    msg = _as_dict(message)
    content = msg.get("content")
    if isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_use" for b in content):
        blocks = [dispatch(tools, b) for b in content if isinstance(b, dict) and b.get("type") == "tool_use"]
        return [{"role": "user", "content": blocks}]
    calls = msg.get("tool_calls") or []
    if not isinstance(calls, list):
        raise InvalidInput(f"tool_calls must be a list of tool calls, got {type(calls).__name__}")
    return [dispatch(tools, call) for call in calls]
