"""Claude Code's session transcripts (JSON Lines), read as chat messages; used by the CLI
(``hippo observe``, ``hippo compact``) and by the hooks (:mod:`hippo.integrations.claude_code_hooks`).

Each line of a transcript is an object with a ``type`` (``user``, ``assistant``, ``system``,
``summary``, ...), a ``uuid``, a ``timestamp`` and, for a message, ``message``: ``{"role",
"content"}`` in Anthropic's shape (text, ``tool_use``, ``tool_result``, ``thinking`` blocks). A
message becomes ``{"role", "content", "id": uuid, "timestamp"}``: the uuid is the message's id, so
observing a transcript again skips what was already observed. Lines that are not messages (a
summary, a file snapshot, a meta line, something unreadable) are passed over.

Nothing here imports more than the standard library and :mod:`hippo.core.messages`.
"""

from __future__ import annotations

import json
import os
from typing import Any, Iterable, Mapping

from hippo.core.messages import read_messages
from hippo.errors import HippoError, InvalidInput

__all__ = [
    "load_messages", "message_of", "new_lines", "read_transcript", "since_last_compaction", "tail_messages",
    "text_only",
]

_MESSAGE_TYPES = ("user", "assistant")
_TAIL_BYTES = 256 * 1024


def message_of(entry: Any) -> dict[str, Any] | None:
    """The chat message of one transcript line, or None when the line is not one (or unreadable)."""
    if not isinstance(entry, Mapping) or entry.get("type") not in _MESSAGE_TYPES or entry.get("isMeta"):
        return None
    inner = entry.get("message")
    if not isinstance(inner, Mapping) or inner.get("role") not in _MESSAGE_TYPES:
        return None
    message: dict[str, Any] = {"role": inner["role"], "content": inner.get("content")}
    if isinstance(entry.get("uuid"), str) and entry["uuid"]:
        message["id"] = entry["uuid"]
    if isinstance(entry.get("timestamp"), str):
        message["timestamp"] = entry["timestamp"]
    try:
        read_messages([message])
    except HippoError:
        return None
    return message


def _entries(lines: Iterable[str]) -> Iterable[Any]:
    for line in lines:
        line = line.strip()
        if not line:
            continue
        try:
            yield json.loads(line)
        except (ValueError, RecursionError):
            continue  # a line being written, or damaged: not a message


def read_transcript(lines: Iterable[str]) -> list[dict[str, Any]]:
    """The messages of a Claude Code transcript's lines, in order."""
    return [m for m in map(message_of, _entries(lines)) if m is not None]


def since_last_compaction(lines: Iterable[str]) -> list[dict[str, Any]]:
    """The messages after the transcript's last compaction boundary: the session Claude Code holds now."""
    messages: list[dict[str, Any]] = []
    for entry in _entries(lines):
        if isinstance(entry, Mapping) and entry.get("type") == "system" and entry.get("subtype") == "compact_boundary":
            messages = []
            continue
        message = message_of(entry)
        if message is not None:
            messages.append(message)
    return messages


def load_messages(text: str) -> list[dict[str, Any]]:
    """Messages from a file's text: a JSON list of chat messages, or JSON Lines of either chat
    messages or a Claude Code transcript's entries."""
    stripped = text.lstrip()
    if not stripped:
        raise InvalidInput("no messages: the input is empty")
    if stripped.startswith("["):
        found = json.loads(stripped)
        if not isinstance(found, list):
            raise InvalidInput("expected a JSON list of chat messages")
        read_messages(found)
        return found
    messages: list[dict[str, Any]] = []
    lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    for n, line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            if n == lines[-1][0]:
                break  # the last line of a transcript still being written
            raise InvalidInput(f"line {n} is not JSON") from None
        if isinstance(entry, Mapping) and "role" in entry and "message" not in entry:
            read_messages([entry])  # a plain chat message per line: malformed is an error
            messages.append(dict(entry))
        elif (message := message_of(entry)) is not None:
            messages.append(message)
    return messages


def text_only(messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The messages reduced to what capture reads: user and assistant text (tool calls, tool
    results and thinking left out, as ``observe`` leaves them out by default); empty ones dropped."""
    slim = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            content = [p for p in content if isinstance(p, Mapping) and p.get("type") == "text"]
        if not content:
            continue
        slim.append({**message, "content": content})
    return slim


def new_lines(path: str, offset: int) -> tuple[list[str], int]:
    """The complete lines of the file at ``path`` after byte ``offset``, and the offset after them.
    A file shorter than ``offset`` (rewritten) is read from its start."""
    size = os.path.getsize(path)
    start = offset if 0 <= offset <= size else 0
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read()
    end = data.rfind(b"\n") + 1  # a last line still being written waits for the next time
    return data[:end].decode("utf-8", errors="replace").splitlines(), start + end


def tail_messages(path: str, count: int) -> list[dict[str, Any]]:
    """The last ``count`` messages with text of a transcript, read from its end only."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        f.seek(max(0, size - _TAIL_BYTES))
        data = f.read()
    lines = data.decode("utf-8", errors="replace").splitlines()
    if size > _TAIL_BYTES:
        lines = lines[1:]  # the first is cut
    return text_only(read_transcript(lines))[-count:] if count > 0 else []
