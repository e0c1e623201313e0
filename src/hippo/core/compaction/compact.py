"""Decay-based compaction of a long session.

Each message is classified (decision, user intent, context, tool result, ephemeral, unknown),
given the base importance of its type, moved by modifiers (+0.15 for the last five,
-0.15 over 10k tokens and a further -0.10 over 30k, +0.20 when a later message contains the start
of its preview), and decayed by its type's rate over its age, the position from the end:
``retention = max(floor, importance * exp(-lambda * age))``. Retention then decides whether it is
kept in full, compressed to one line, or reduced to a pointer (see :mod:`hippo.core.compaction.summary`).

Tokens are counted with :func:`hippo.core.tokens.count_tokens` (real word pieces), not estimated
at four characters a token as in the original rules and layout of the compaction extension hippo replaces.
Two departures from those rules, both where they read nothing: a message with no text is
referenced by nothing (an empty preview would match every later message), and a tool result
carried in an Anthropic user turn is a tool result (the original rules read it as the user's
intent). One addition: a message that only acknowledges ("yes
please", "ok, thanks", "👍"), from the user or the assistant, is ephemeral
(:mod:`hippo.core.compaction.wording`). Pure: no store, no clock.
"""

from __future__ import annotations

import json
import logging
import math
import os
import stat
import sys
from datetime import datetime, timezone
from typing import Any, Mapping, Sequence

from hippo import limits
from hippo.core import validation as v
from hippo.core.compaction.config import CompactionConfig, for_call, load_compaction_config
from hippo.core.compaction.kinds import Scored, classify_reference, kinds
from hippo.core.compaction.summary import summarize
from hippo.core.messages import ChatMessage, read_messages
from hippo.core.tokens import count_tokens
from hippo.errors import InvalidInput
from hippo.types import Compaction

__all__ = ["BASE_IMPORTANCE", "LOG_PREFIX", "CompactionConfig", "check_summary", "classify", "compact", "preview",
           "resolve_config", "score"]

log = logging.getLogger("hippo.compaction")

BASE_IMPORTANCE = {"decision": 0.90, "user_intent": 0.80, "context": 0.50, "tool_result": 0.30,
                   "ephemeral": 0.10, "unknown": 0.40}
RECENT = 5  # the last five messages get the recency bonus
RECENCY_BONUS = 0.15
LARGE, HUGE = 10_000, 30_000  # tokens
LARGE_PENALTY, HUGE_PENALTY = 0.15, 0.10
REFERENCE_BONUS = 0.20
LOG_PREFIX = "[hippo compaction]"
_NEEDLE = 30  # a later message refers to this one when it contains the first 30 characters of its 50-character preview


def classify(message: ChatMessage) -> str:
    """The type of one message by the original rules (``classifier="reference"``); a
    session's types by either classifier are :func:`hippo.core.compaction.kinds.kinds`."""
    return classify_reference(message)


def preview(text: str, max_len: int = 120) -> str:
    """The preview: the text, or its first ``max_len`` characters and an ellipsis."""
    return text if len(text) <= max_len else text[:max_len] + "…"


def content_of(message: ChatMessage) -> str:
    """What a message holds in full: its text, then the tools it calls."""
    return "\n".join(part for part in (message.text, *message.calls) if part)


def retention(importance: float, age: int, type_: str, config: CompactionConfig) -> float:
    """``max(floor, importance * exp(-lambda * age))`` with the type's rate and floor."""
    return max(config.retention_floor.get(type_, 0.0), importance * math.exp(-config.decay_rates[type_] * age))


def importance(type_: str, age: int, tokens: int, referenced: bool) -> float:
    """The base importance of the type moved by the modifiers, each clamped: a bonus to at most 1, a
    penalty to at least 0.1."""
    value = BASE_IMPORTANCE[type_]
    if age < RECENT:
        value = min(1.0, value + RECENCY_BONUS)
    if tokens > LARGE:
        value = max(0.1, value - LARGE_PENALTY)
    if tokens > HUGE:
        value = max(0.1, value - HUGE_PENALTY)
    if referenced:
        value = min(1.0, value + REFERENCE_BONUS)
    return value


def _referenced(texts: Sequence[str]) -> list[bool]:
    """Whether a later message contains the start of each one's preview. One joined text and a
    search from each message's successor: the scan runs in C, not message by message."""
    sep = "\x00"
    joined = sep.join(texts)
    starts, at = [], 0
    for text in texts:
        starts.append(at)
        at += len(text) + 1
    found = []
    for i, text in enumerate(texts):
        needle = preview(text, 50)[:_NEEDLE]
        if not needle or i + 1 == len(texts):
            found.append(False)
        elif sep in needle:
            found.append(any(needle in later for later in texts[i + 1:]))
        else:
            found.append(joined.find(needle, starts[i + 1]) >= 0)
    return found


def score(messages: Sequence[ChatMessage], config: CompactionConfig) -> list[Scored]:
    """Every message classified, weighed and decayed (age 0 is the newest)."""
    contents = [content_of(m) for m in messages]
    tokens = count_tokens(contents)
    referenced = _referenced([m.text for m in messages])
    total, scored = len(messages), []
    types = kinds(messages, config.classifier)
    for i, message in enumerate(messages):
        type_, age = types[i], total - 1 - i
        weight = importance(type_, age, tokens[i], referenced[i])
        shown = message.text or contents[i]
        scored.append(Scored(i, type_, message.role, weight, retention(weight, age, type_, config), tokens[i],
                             preview(shown), contents[i], message.tool, shown))
    return scored


def resolve_config(config: CompactionConfig | Mapping[str, Any] | None) -> CompactionConfig:
    """The config given; for none, hippo.toml's ``[compaction]`` section; a mapping (a request's,
    a tool call's) of the documented numbers over that section, never naming a file to write."""
    if isinstance(config, CompactionConfig):
        return config
    if config is not None and not isinstance(config, Mapping):
        raise InvalidInput(f"config must be a CompactionConfig or a mapping, got {type(config).__name__}")
    operator = load_compaction_config()
    return operator if config is None else for_call(config, operator)


def emit(config: CompactionConfig, message: str, data: Mapping[str, Any] | None = None) -> None:
    """A log line on logger ``hippo.compaction``; also to ``log_file`` (``[time] [hippo compaction]
    message``) when one is named, and to stderr with ``debug``."""
    detail = f" {json.dumps(data, ensure_ascii=False, separators=(',', ':'))}" if data else ""
    log.info("%s%s", message, detail)
    if config.debug:
        print(f"{LOG_PREFIX} {message}{detail}", file=sys.stderr)
    if config.log_file:
        stamp = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        _append(config.log_file, f"[{stamp}] {LOG_PREFIX} {message}{detail}\n")


def _append(path: str, line: str) -> None:
    """Append a line to the operator's log file. Opened without blocking and written only when it
    is a regular file: a FIFO or a device named there never holds a request up."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NONBLOCK", 0), 0o644)
    except OSError as exc:  # a log that cannot be written does not stop compaction; say so here
        log.warning("cannot write compaction log %s: %s", path, exc)
        return
    with os.fdopen(fd, "a", encoding="utf-8") as out:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            log.warning("compaction log %s is not a regular file; not written", path)
            return
        out.write(line)


def compact(messages: Sequence[Mapping[str, Any]], config: CompactionConfig | Mapping[str, Any] | None = None, *,
            previous_summary: str | None = None) -> Compaction:
    """Compaction of a message history (OpenAI or Anthropic shapes, tool calls and
    results included): the summary text, what became of each message, and the statistics."""
    settings = resolve_config(config)
    previous_summary = check_summary(previous_summary)
    scored = start(read_messages(messages), settings)
    return summarize(scored, settings, previous_summary=previous_summary, emit=emit)


def check_summary(value: Any) -> str | None:
    """A previous summary: None, or text (valid UTF-8, no NUL; it goes back in the new summary)."""
    if value is None:
        return None
    return v.check_text(value, "previous_summary", max_chars=limits.JSON_BYTES, allow_empty=True)


def start(read: Sequence[ChatMessage], config: CompactionConfig) -> list[Scored]:
    """Score a read session, logging the trigger and scoring lines."""
    scored = score(read, config)
    emit(config, "🔬 Compaction triggered", {"messages": len(read), "tokensBefore": sum(e.tokens for e in scored)})
    sparse = sum(e.retention < config.sparse_threshold for e in scored)
    kept = sum(e.retention >= config.compress_threshold for e in scored)
    emit(config, "📊 Scoring complete", {"total": len(scored), "sparse": sparse,
                                        "compressed": len(scored) - sparse - kept, "kept": kept,
                                        "totalTokens": sum(e.tokens for e in scored)})
    return scored
