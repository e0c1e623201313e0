"""Chat messages in the shapes LLM APIs use (OpenAI and Anthropic), read for what the user said.

OpenAI: ``{"role": "user", "content": "text"}`` or content as a list of parts
(``{"type": "text", "text": ...}``; images and audio are skipped). Anthropic: the
same roles, content a string or a list of blocks (``text`` kept; ``tool_use``,
``tool_result``, ``image`` and ``thinking`` skipped). System prompts, the
assistant's turns and tool messages are not the user speaking.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from hippo.errors import InvalidInput

__all__ = ["user_text"]

_ROLES = {"user", "assistant", "system", "developer", "tool", "function"}


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
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise InvalidInput("messages must be a list of chat messages")
    turns = []
    for n, message in enumerate(messages):
        where = f"message {n}"
        if not isinstance(message, Mapping):
            raise InvalidInput(f"{where}: a chat message is an object with a role and content")
        role = message.get("role")
        if role not in _ROLES:
            raise InvalidInput(f"{where}: role must be one of {', '.join(sorted(_ROLES))}, got {role!r}")
        text = _text_of(message.get("content"), where)
        if role == "user" and text.strip():
            turns.append(text.strip())
    return "\n".join(turns)
