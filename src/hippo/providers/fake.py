"""A deterministic fake embedder for tests and offline demos.

Vectors come from hashed word and character-trigram features, so texts that
share words are close and the same text always gets the same vector. It can be
told to fail, to exercise the paths where the embedder is down.
"""

from __future__ import annotations

import hashlib
import re
from typing import Sequence

import numpy as np

from hippo.errors import ProviderError
from hippo.providers.base import Thresholds, normalize_rows

__all__ = ["FakeEmbedder"]

_WORD = re.compile(r"\w+", re.UNICODE)


class FakeEmbedder:
    """Hash-feature embedder; ``fake:<dimension>`` picks the dimension (default 64)."""

    def __init__(self, model: str | None = None, *, dimension: int | None = None, fail: bool = False) -> None:
        dim = dimension or (int(model) if model and model.isdigit() else 64)
        self.model_id = f"fake:{dim}"
        self.dimension = dim
        self.thresholds = Thresholds(duplicate=0.93, ambiguous=0.78, forget=0.5)
        self.fail = fail
        self.calls = 0

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
