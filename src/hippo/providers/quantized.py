"""The int8 copy of a packaged ONNX model (``quantized=True``): derived once into hippo's cache
with onnxruntime's quantiser, and trusted only as long as its record says it is what it was.

The packaged files are pinned by SHA-256 (:mod:`hippo.providers.pins`); the copy cannot be,
since its bytes depend on the installed onnx and onnxruntime. So the quantiser writes a record
beside it, ``model-int8.onnx.json``: the pinned files it came from and the copy's own SHA-256.
A copy without a record (made by an older hippo, maybe from other weights), from other weights,
or whose bytes changed since is derived again, atomically, before anything loads it.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from hippo.providers.base import require
from hippo.providers.pins import sha256_of

__all__ = ["int8_copy"]

log = logging.getLogger(__name__)


def int8_copy(source: Path, target: Path, *, origin: str, weights: str) -> Path:
    """``target``, the int8 copy of the ONNX graph ``source`` (its external weights beside it):
    used as it is when its record names these ``weights`` (a digest of the pinned files) and its
    bytes still match, else derived again. ``origin`` (package and release) is kept for people."""
    record = _record_of(target)
    if _recorded(target, record, weights):
        return target
    if target.exists():
        log.info("the int8 model %s is not the one derived from %s; deriving it again", target, origin)
    _quantize(source, target, {"source": origin, "weights": weights})
    return target


def _record_of(copy: Path) -> Path:
    return copy.with_name(copy.name + ".json")


def _recorded(target: Path, record: Path, weights: str) -> bool:
    try:
        made = json.loads(record.read_text(encoding="utf-8"))
        return bool(made["weights"] == weights and target.is_file() and sha256_of(target) == made["sha256"])
    except (OSError, ValueError, KeyError, TypeError):  # no record, or not one hippo wrote
        return False


def _quantize(source: Path, target: Path, record: dict[str, str]) -> None:
    """Dynamic int8 quantisation of the MatMul weights, one scale per channel, and its record."""
    require("onnx", "onnx")
    quantization = require("onnxruntime.quantization", "onnxruntime")

    def write(tmp: Path) -> None:
        # quantize_dynamic writes "<input>-inferred.onnx" beside its input, so the
        # input must sit in this call's private folder too.
        private = tmp.with_name("source.onnx")
        _link_or_copy(source, private)
        for data in source.parent.glob(f"{source.name}_data"):  # weights kept beside the graph
            shutil.copyfile(data, tmp.with_name(data.name))  # onnx refuses hard-linked external data
        quantization.quantize_dynamic(
            str(private), str(tmp), per_channel=True, weight_type=quantization.QuantType.QInt8
        )
        written = {**record, "sha256": sha256_of(tmp)}
        _record_of(tmp).write_text(json.dumps(written, indent=1), encoding="utf-8")

    with _root_warnings_muted():
        _write_atomically(target, write)


def _write_atomically(target: Path, write: Callable[[Path], None]) -> None:
    """Run ``write(tmp_path)`` in a private folder, then move the result and its record onto
    ``target`` and its record.

    The folder is unique to this call and sits beside ``target`` (same file
    system, so ``os.replace`` is atomic): concurrent exporters never share any
    file, including the side files onnx tools write next to their inputs. Between
    the two moves a reader may see a new copy with another exporter's record: it
    then derives the copy again, which costs time but never loads a wrong model.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=f".{target.stem}-") as tmp_dir:
        tmp = Path(tmp_dir) / target.name
        write(tmp)
        for made, final in ((tmp, target), (_record_of(tmp), _record_of(target))):
            try:
                os.replace(made, final)
            except OSError:
                # Windows refuses to replace a file another process has open; that
                # file was written by a concurrent exporter and is just as good.
                if not final.is_file():
                    raise


def _link_or_copy(source: Path, target: Path) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


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
