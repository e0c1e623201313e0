"""A toy embedding model and a canned-answer LLM, plugged into hippo by entry points."""

from __future__ import annotations

import hashlib
import re
from typing import Sequence

import numpy as np

from hippo.errors import ConfigError, ProviderError
from hippo.providers.base import Completion, Message, Thresholds, Usage

_WORD = re.compile(r"\w+")


class AnagramEmbedder:
    """``anagrams`` or ``anagrams:<dimension>`` (default 256). Each word counts for the letters it is
    made of, in any order: "listen" and "silent" get the same vector."""

    def __init__(self, model: str | None = None) -> None:
        if model is not None and not (model.isdigit() and 8 <= int(model) <= 4096):
            raise ConfigError(f"anagrams:<dimension> takes a whole number from 8 to 4096, got {model!r}")
        self.dimension = int(model) if model else 256
        self.model_id = f"anagrams:{self.dimension}"  # a spec that builds this same model again
        # Letters are not meaning: only near-identical texts are the same memory or fact.
        self.thresholds = Thresholds(duplicate=0.98, ambiguous=0.8, forget=0.7, meaning=False)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        vectors = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.lower()) or [text]:
                letters = "".join(sorted(word)).encode("utf-8")
                digest = hashlib.blake2b(letters, digest_size=4).digest()
                vectors[row, int.from_bytes(digest, "little") % self.dimension] += 1.0
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        vectors /= np.where(norms == 0.0, 1.0, norms)  # each row to unit length
        return vectors

    def embed_query(self, text: str) -> np.ndarray:
        vector: np.ndarray = self.embed_documents([text])[0]
        return vector


class ReplyLLM:
    """``anagrams`` or ``anagrams:<name>``: answers each request with the next of ``replies``
    (``llm_options={"replies": [...]}``), and keeps what it was asked in ``asked``."""

    def __init__(self, model: str | None = None, *, replies: Sequence[str] = ()) -> None:
        self.model = model or "replies"
        self.model_id = f"anagrams:{self.model}"
        self.replies = list(replies)
        self.asked: list[tuple[str, list[Message], bool]] = []

    def complete(
        self, system: str, messages: Sequence[Message], *, max_tokens: int = 1024, json: bool = False
    ) -> Completion:
        self.asked.append((system, list(messages), json))
        if not self.replies:
            raise ProviderError("no reply left", retryable=False)
        text = self.replies.pop(0)
        words = len(system.split()) + sum(len(m.content.split()) for m in messages)
        return Completion(text, Usage(words, len(text.split())), self.model)
