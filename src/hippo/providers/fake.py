"""A deterministic fake embedder and a scripted fake LLM, for tests and offline demos.

Vectors come from hashed word and character-trigram features, so texts that
share words are close and the same text always gets the same vector. It can be
told to fail, to exercise the paths where the embedder is down. The LLM answers
from a script and records what it was sent.
"""

from __future__ import annotations

import hashlib
import re
from collections import deque
from typing import Any, Callable, Sequence, Union

import numpy as np

from hippo.errors import ConfigError, ProviderError
from hippo.providers.base import (
    ChatTurn,
    Completion,
    Message,
    Thresholds,
    ToolCall,
    ToolSpec,
    Usage,
    normalize_rows,
    window_starts,
)

__all__ = ["FakeEmbedder", "FakeLLM", "ScriptItem"]

_WORD = re.compile(r"\w+", re.UNICODE)


class FakeEmbedder:
    """Hash-feature embedder; ``fake:<dimension>`` picks the dimension (default 64). ``window``: it
    reads a text longer than that many words in overlapping windows of words (``embed_windows``),
    as the local model does with its word pieces; by default it reads every text whole."""

    def __init__(self, model: str | None = None, *, dimension: int | None = None, fail: bool = False,
                 window: int | None = None) -> None:
        if dimension is None and model:
            if not model.isdigit() or len(model) > 5:
                raise ConfigError(f"fake:<dimension> takes a whole number from 1 to 4096, got {model!r}")
            dimension = int(model)
        dim = 64 if dimension is None else dimension
        if isinstance(dim, bool) or not isinstance(dim, int) or not 1 <= dim <= 4096:
            raise ConfigError(f"the fake embedder's dimension must be from 1 to 4096, got {dim!r}")
        self.model_id = f"fake:{dim}"
        self.dimension = dim
        self.thresholds = Thresholds(duplicate=0.93, ambiguous=0.78, forget=0.5, meaning=False)
        self.fail = fail
        self.calls = 0
        if window is not None and (isinstance(window, bool) or not isinstance(window, int) or window < 2):
            raise ConfigError(f"the fake embedder's window must be a whole number of words from 2, got {window!r}")
        self.window = window

    def _vector(self, text: str) -> np.ndarray:
        vec = np.zeros(self.dimension, dtype=np.float32)
        words = [w.lower() for w in _WORD.findall(text)]
        features = words + [w[i : i + 3] for w in words for i in range(max(1, len(w) - 2))]
        for feature in features:
            digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
            slot = int.from_bytes(digest[:4], "little") % self.dimension
            sign = 1.0 if digest[4] & 1 else -1.0
            vec[slot] += sign * (2.0 if feature in words else 0.5)
        return vec

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        if self.fail:
            raise ProviderError("fake embedder told to fail", retryable=True)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return normalize_rows(np.stack([self._vector(t) for t in texts]))

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]

    def embed_windows(self, texts: Sequence[str], *, query: bool = False) -> list[np.ndarray]:
        """One row per text, or with ``window``: the first ``window`` words, then windows of as many
        words three quarters of a window apart (:func:`~hippo.providers.base.window_starts`)."""
        firsts = np.stack([self.embed_query(t) for t in texts]) if query and texts else self.embed_documents(texts)
        if self.window is None:
            return [row[None, :] for row in firsts]
        width, out = self.window, []
        for text, first in zip(texts, firsts):
            words = _WORD.findall(text)
            starts = window_starts(len(words), width, max(1, width * 3 // 4), 64)
            later = [" ".join(words[s:s + width]) for s in starts[1:]]
            rows = [first, *normalize_rows(np.stack([self._vector(t) for t in later]))] if later else [first]
            out.append(np.stack(rows))
        return out


# A reply text, an exception to raise, or a function of (system, messages) giving the text.
# For ``chat`` also a ToolCall, a list of them, or a whole ChatTurn (or a function giving one).
ScriptItem = Union[str, BaseException, ToolCall, Sequence[ToolCall], ChatTurn, Callable[[str, Sequence[Message]], Any]]


class FakeLLM:
    """An LLM that answers from a script, one item per ``complete`` call.

    Items are reply texts, exceptions (usually :class:`ProviderError`) to raise, or
    callables ``(system, messages) -> str``. Every call is recorded in ``calls``
    (``system``, ``messages``, ``json``, ``max_tokens``), failed ones included.
    Tokens are counted as whitespace-separated words.
    """

    def __init__(self, model: str | None = None, *, script: Sequence[ScriptItem] | None = None) -> None:
        self.model = model or "scripted"
        self.model_id = f"fake:{self.model}"
        self.script: deque[ScriptItem] = deque(script or ())
        self.calls: list[dict[str, Any]] = []

    def push(self, *items: ScriptItem) -> "FakeLLM":
        """Append items to the script."""
        self.script.extend(items)
        return self

    def complete(
        self, system: str, messages: Sequence[Message], *, max_tokens: int = 1024, json: bool = False
    ) -> Completion:
        """The next scripted reply; raises ProviderError once the script runs out."""
        messages = list(messages)
        self.calls.append({"system": system, "messages": messages, "json": json, "max_tokens": max_tokens})
        text = self._next(system, messages)
        if not isinstance(text, str):
            raise TypeError(f"a FakeLLM script item must give a str, got {type(text).__name__}")
        words = _words(system, messages)
        return Completion(text, Usage(words, len(text.split())), self.model)

    def chat(
        self, system: str, messages: Sequence[Message], tools: Sequence[ToolSpec], *, max_tokens: int = 1024
    ) -> ChatTurn:
        """The next scripted turn: text, tool call(s) or a ChatTurn; records the tools offered."""
        messages = list(messages)
        self.calls.append({"system": system, "messages": messages, "tools": [t.name for t in tools],
                           "max_tokens": max_tokens})
        item = self._next(system, messages)
        if isinstance(item, ChatTurn):
            return item
        if isinstance(item, ToolCall):
            item = [item]
        calls: tuple[ToolCall, ...]
        if isinstance(item, str):
            text, calls = item, ()
        elif isinstance(item, (list, tuple)) and all(isinstance(c, ToolCall) for c in item):
            text, calls = "", tuple(item)
        else:
            raise TypeError(f"a FakeLLM chat item must be text, ToolCall(s) or a ChatTurn, got {item!r}")
        spoken = text + " ".join(f"{c.name} {c.arguments}" for c in calls)
        return ChatTurn(text, calls, Usage(_words(system, messages), len(spoken.split())), self.model)

    def _next(self, system: str, messages: list[Message]) -> Any:
        if not self.script:
            raise ProviderError("fake LLM script exhausted")
        item = self.script.popleft()
        if isinstance(item, BaseException):
            raise item
        return item(system, messages) if callable(item) else item


def _words(system: str, messages: Sequence[Message]) -> int:
    return len(system.split()) + sum(len(m.content.split()) for m in messages)
