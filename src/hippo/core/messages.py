"""Chat messages in the shapes LLM APIs use (OpenAI and Anthropic), read for what the user said.

OpenAI: ``{"role": "user", "content": "text"}`` or content as a list of parts
(``{"type": "text", "text": ...}``, or the Responses API's ``input_text`` and ``output_text``;
images and audio are skipped). Anthropic: the
same roles, content a string or a list of blocks (``text`` kept; ``tool_use``,
``tool_result``, ``image`` and ``thinking`` skipped). System prompts, the
assistant's turns and tool messages are not the user speaking.

Tool use is read too, for compaction: an assistant turn's tool calls (OpenAI ``tool_calls`` or
``function_call``, Anthropic ``tool_use`` blocks) become ``calls``, and a tool result (OpenAI
``tool`` message, Anthropic ``tool_result`` blocks, a ``toolResult`` turn) names its ``tool``,
found through the call it answers when the message does not say.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Mapping, Sequence

from hippo import limits
from hippo.core import validation as v
from hippo.errors import InvalidInput

__all__ = ["ChatMessage", "read_messages", "user_text"]

_MAX_ID = limits.NAME_CHARS


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """One message read from either API's shape: ``role`` is user, assistant, system or tool (a
    user turn made only of tool results is the tool speaking), ``text`` its readable text; ``id``,
    ``name`` (the speaker) and ``timestamp`` when the message carries them. ``calls`` are the
    tools an assistant turn calls (``name(arguments)``), ``tool`` the tool a result comes from."""

    role: str
    text: str
    id: str | None = None
    name: str | None = None
    timestamp: datetime | None = None
    calls: tuple[str, ...] = ()
    tool: str | None = None

_ROLES = {"user", "assistant", "system", "developer", "tool", "function", "toolResult"}


def _role(message: Mapping[str, Any], where: str) -> str:
    role = message.get("role")
    if not isinstance(role, str) or role not in _ROLES:
        raise InvalidInput(f"{where}: role must be one of {', '.join(sorted(_ROLES))}, got {v.shown(role)}")
    content = message.get("content")
    if role == "user" and isinstance(content, list) and content and all(
            isinstance(p, Mapping) and p.get("type") == "tool_result" for p in content):
        return "tool"  # Anthropic: tool results travel in a user turn
    return {"developer": "system", "function": "tool", "toolResult": "tool"}.get(role, role)


def _tool_result_text(content: Any) -> str:
    """The text of Anthropic tool_result blocks (their content: a string or text blocks)."""
    texts = []
    for part in content if isinstance(content, list) else ():
        inner = part.get("content") if isinstance(part, Mapping) else None
        if isinstance(part, Mapping) and part.get("type") == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])  # a tool message whose content is text parts (OpenAI, toolResult)
        elif isinstance(inner, str):
            texts.append(inner)
        elif isinstance(inner, list):
            texts += [b["text"] for b in inner if isinstance(b, Mapping) and isinstance(b.get("text"), str)]
    return "\n".join(texts)


def _optional_text(message: Mapping[str, Any], key: str, where: str) -> str | None:
    value = message.get(key)
    if value is None:
        return None
    text = _id_text(value)
    if text is None or len(text) > _MAX_ID:
        raise InvalidInput(f"{where}: {key} must be a non-empty string of up to {_MAX_ID} characters")
    return v.check_text(text, f"{where}: {key}", max_chars=_MAX_ID)


def read_messages(messages: Sequence[Any]) -> list[ChatMessage]:
    """Every message of a conversation, read; InvalidInput (naming the message) for a malformed one."""
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise InvalidInput("messages must be a list of chat messages")
    read = []
    tools: dict[str, str] = {}  # call id -> the tool's name, from the calls read so far
    for n, message in enumerate(messages):
        where = f"message {n}"
        if not isinstance(message, Mapping):
            raise InvalidInput(f"{where}: a chat message is an object with a role and content")
        role = _role(message, where)
        content = message.get("content")
        text = _tool_result_text(content) if role == "tool" and isinstance(content, list) else _text_of(content, where)
        calls = _calls(message) if role == "assistant" else []
        tools.update((call_id, name) for call_id, name, _ in calls if call_id)
        read.append(_checked(ChatMessage(
            role, text.strip(), _optional_text(message, "id", where), _optional_text(message, "name", where),
            v.check_datetime(message.get("timestamp"), f"{where}: timestamp"),
            tuple(f"{name}({args})" for _, name, args in calls), _tool_of(message, tools) if role == "tool" else None),
            where))
    return read


def _checked(message: ChatMessage, where: str) -> ChatMessage:
    """The message, once its text, tool calls and tool name are text hippo can keep (no NUL, no
    lone surrogate): InvalidInput naming the message otherwise, before anything is written."""
    for part in (message.text, *message.calls, message.tool or ""):
        v.check_text(part, where, max_chars=len(part), allow_empty=True)
    return message


def _arguments(value: Any) -> str | None:
    """A call's arguments as text; None when they cannot be written as JSON (too deep, a number
    too long to print): the call is then passed over as malformed."""
    if value is None or isinstance(value, str):
        return value or ""
    try:
        v.check_json_value(value, "arguments")
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (InvalidInput, TypeError, ValueError):
        return None


_CALL_BLOCKS = ("tool_use", "toolCall")  # Anthropic's block, the Pi agent's


def _calls(message: Mapping[str, Any]) -> list[tuple[str | None, str, str]]:
    """(call id, tool name, arguments) of each tool call an assistant turn makes; a malformed call
    is passed over (the turn's text is what most readers want)."""
    found: list[tuple[str | None, str, str | None]] = []
    raw_calls = message.get("tool_calls")
    for call in raw_calls if isinstance(raw_calls, list) else ():
        function = call.get("function") if isinstance(call, Mapping) else None
        if isinstance(function, Mapping) and isinstance(function.get("name"), str):
            found.append((_id_text(call.get("id")), function["name"], _arguments(function.get("arguments"))))
    legacy = message.get("function_call")
    if isinstance(legacy, Mapping) and isinstance(legacy.get("name"), str):
        found.append((None, legacy["name"], _arguments(legacy.get("arguments"))))
    content = message.get("content")
    for part in content if isinstance(content, list) else ():
        if isinstance(part, Mapping) and part.get("type") in _CALL_BLOCKS and isinstance(part.get("name"), str):
            found.append((_id_text(part.get("id")), part["name"], _arguments(part.get("input", part.get("arguments")))))
    return [(call_id, name, args) for call_id, name, args in found if args is not None]


def _id_text(value: Any) -> str | None:
    """An id as text: a non-empty string, or a whole number that fits (a bool is no id)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) <= limits.INTEGER:
        return str(value)
    return value if isinstance(value, str) and value else None


def _tool_of(message: Mapping[str, Any], tools: Mapping[str, str]) -> str | None:
    """The tool a result comes from: named by the message, else the call it answers, else that call's id."""
    for key in ("toolName", "name"):
        if isinstance(message.get(key), str) and message[key]:
            return str(message[key])
    call_id = _id_text(message.get("tool_call_id")) or _id_text(message.get("toolCallId"))
    content = message.get("content")
    for part in content if isinstance(content, list) and call_id is None else ():
        if isinstance(part, Mapping) and part.get("type") == "tool_result":
            call_id = _id_text(part.get("tool_use_id"))
            break
    return tools.get(call_id, call_id) if call_id else None


def _text_of(content: Any, where: str) -> str:
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    if not isinstance(content, list):
        raise InvalidInput(f"{where}: content must be a string or a list of parts")
    texts = []
    for part in content:
        if not isinstance(part, Mapping) or not isinstance(part.get("type"), str):
            raise InvalidInput(f"{where}: every content part must be an object with a type")
        if part["type"] in ("text", "input_text", "output_text"):  # the last two: OpenAI Responses
            if not isinstance(part.get("text"), str):
                raise InvalidInput(f"{where}: a text part needs its text")
            texts.append(part["text"])
    return "\n".join(texts)


def user_text(messages: Sequence[Any]) -> str:
    """The user's turns of a conversation, in order, one per line; InvalidInput for a malformed one."""
    return "\n".join(m.text for m in read_messages(messages) if m.role == "user" and m.text)
