"""Chat messages in the shapes LLM APIs use (OpenAI and Anthropic), read for what the user said.

OpenAI: ``{"role": "user", "content": "text"}`` or content as a list of parts
(``{"type": "text", "text": ...}``; images and audio are skipped). Anthropic: the
same roles, content a string or a list of blocks (``text`` kept; ``tool_use``,
``tool_result``, ``image`` and ``thinking`` skipped). System prompts, the
assistant's turns and tool messages are not the user speaking.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Mapping, Sequence

from hippo.core import validation as v
from hippo.errors import InvalidInput

__all__ = ["ChatMessage", "read_messages", "user_text"]

_MAX_ID = 256


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """One message read from either API's shape: ``role`` is user, assistant, system or tool (a
    user turn made only of tool results is the tool speaking), ``text`` its readable text; ``id``,
    ``name`` (the speaker) and ``timestamp`` when the message carries them."""

    role: str
    text: str
    id: str | None = None
    name: str | None = None
    timestamp: datetime | None = None

_ROLES = {"user", "assistant", "system", "developer", "tool", "function"}


def _role(message: Mapping[str, Any], where: str) -> str:
    role = message.get("role")
    if role not in _ROLES:
        raise InvalidInput(f"{where}: role must be one of {', '.join(sorted(_ROLES))}, got {role!r}")
    content = message.get("content")
    if role == "user" and isinstance(content, list) and content and all(
            isinstance(p, Mapping) and p.get("type") == "tool_result" for p in content):
        return "tool"  # Anthropic: tool results travel in a user turn
    return {"developer": "system", "function": "tool"}.get(role, role)


def _tool_result_text(content: Any) -> str:
    """The text of Anthropic tool_result blocks (their content: a string or text blocks)."""
    texts = []
    for part in content if isinstance(content, list) else ():
        inner = part.get("content") if isinstance(part, Mapping) else None
        if isinstance(inner, str):
            texts.append(inner)
        elif isinstance(inner, list):
            texts += [b["text"] for b in inner if isinstance(b, Mapping) and isinstance(b.get("text"), str)]
    return "\n".join(texts)


def _optional_text(message: Mapping[str, Any], key: str, where: str) -> str | None:
    value = message.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int)) or not str(value) or len(str(value)) > _MAX_ID:
        raise InvalidInput(f"{where}: {key} must be a non-empty string of up to {_MAX_ID} characters")
    return str(value)


def read_messages(messages: Sequence[Any]) -> list[ChatMessage]:
    """Every message of a conversation, read; InvalidInput (naming the message) for a malformed one."""
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise InvalidInput("messages must be a list of chat messages")
    read = []
    for n, message in enumerate(messages):
        where = f"message {n}"
        if not isinstance(message, Mapping):
            raise InvalidInput(f"{where}: a chat message is an object with a role and content")
        role = _role(message, where)
        content = message.get("content")
        text = _tool_result_text(content) if role == "tool" and isinstance(content, list) else _text_of(content, where)
        read.append(ChatMessage(role, text.strip(), _optional_text(message, "id", where),
                                _optional_text(message, "name", where),
                                v.check_datetime(message.get("timestamp"), f"{where}: timestamp")))
    return read


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
        if part["type"] in ("text", "input_text"):
            if not isinstance(part.get("text"), str):
                raise InvalidInput(f"{where}: a text part needs its text")
            texts.append(part["text"])
    return "\n".join(texts)


def user_text(messages: Sequence[Any]) -> str:
    """The user's turns of a conversation, in order, one per line; InvalidInput for a malformed one."""
    return "\n".join(m.text for m in read_messages(messages) if m.role == "user" and m.text)
