"""Saved ANN indexes beside a SQLite file, and the checks that keep a stale one from being used.

Layout: ``<db>.hnsw/<agent-hash>.json`` (the sidecar) names the graph file
``<agent-hash>-<token>.bin`` and its key list ``…bin.keys.npy``. The sidecar is
written last and removed first, so a crash mid-save leaves no sidecar and the
next start rebuilds. A saved index is used only when its sidecar's agent
version, row count, model and dimension match the database, its key list equals
the agent's live rowids, and a sample of its vectors equals the stored ones.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import secrets
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from hippo.index.hnsw import HnswIndex

__all__ = ["AnnFiles", "Snapshot"]

_log = logging.getLogger(__name__)
_FORMAT = 1
_SAMPLE = 16


@dataclass(frozen=True)
class Snapshot:
    """What the database says about an agent's live vectors, read in one transaction."""

    version: int
    keys: np.ndarray  # sorted rowids of live chunks with a vector
    model_id: str | None
    dimension: int | None


@dataclass(frozen=True)
class _Sidecar:
    format: int
    library: str
    token: str
    version: int
    count: int
    model_id: str | None
    dimension: int


class AnnFiles:
    """The saved ANN indexes of one database file (none for an in-memory database)."""

    def __init__(self, db_path: str) -> None:
        self.folder = None if db_path in ("", ":memory:") else Path(db_path + ".hnsw")

    def _stem(self, agent_id: str) -> str:
        return hashlib.sha256(agent_id.encode("utf-8")).hexdigest()[:32]

    def _sidecar_path(self, agent_id: str) -> Path:
        assert self.folder is not None
        return self.folder / f"{self._stem(agent_id)}.json"

    def _graph_path(self, agent_id: str, token: str) -> Path:
        assert self.folder is not None
        return self.folder / f"{self._stem(agent_id)}-{token}.bin"

    def _read_sidecar(self, agent_id: str) -> _Sidecar | None:
        try:
            data = json.loads(self._sidecar_path(agent_id).read_text(encoding="utf-8"))
            sidecar = _Sidecar(**data)
        except (OSError, ValueError, TypeError):
            return None
        return sidecar if sidecar.format == _FORMAT and sidecar.token.isalnum() else None

    def load(self, agent_id: str, snap: Snapshot, stored: Callable[[np.ndarray], np.ndarray]) -> HnswIndex | None:
        """The saved index if it matches ``snap`` exactly; ``stored(keys)`` reads vectors from the database."""
        if self.folder is None:
            return None
        sidecar = self._read_sidecar(agent_id)
        if sidecar is None or (sidecar.version, sidecar.count, sidecar.model_id, sidecar.dimension) != (
            snap.version, len(snap.keys), snap.model_id, snap.dimension
        ):
            return None
        try:
            index = HnswIndex.load(self._graph_path(agent_id, sidecar.token), sidecar.dimension)
        except (OSError, ValueError) as exc:
            _log.info("rebuilding the ANN index of an agent: %s", exc)
            return None
        if not np.array_equal(index.keys(), snap.keys):
            return None
        sample = snap.keys[np.linspace(0, len(snap.keys) - 1, min(_SAMPLE, len(snap.keys))).astype(int)]
        if not np.allclose(index.graph_vectors(sample), stored(sample), atol=1e-6):
            return None  # same counts, other vectors: a database recreated under the same name
        return index

    def save(self, agent_id: str, index: HnswIndex, version: int, model_id: str | None) -> None:
        """Persist ``index`` as the agent's state at ``version``; failures are logged, not raised."""
        if self.folder is None:
            return
        token = secrets.token_hex(8)
        sidecar = _Sidecar(_FORMAT, "hnswlib", token, version, len(index), model_id, index.dimension)
        try:
            self.folder.mkdir(exist_ok=True)
            self._sidecar_path(agent_id).unlink(missing_ok=True)
            index.save(self._graph_path(agent_id, token))
            tmp = self._sidecar_path(agent_id).with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(asdict(sidecar)), encoding="utf-8")
            os.replace(tmp, self._sidecar_path(agent_id))
        except OSError as exc:
            _log.warning("could not save the ANN index beside the database: %s", exc)
            return
        self._remove_others(agent_id, keep=token)

    def _remove_others(self, agent_id: str, keep: str) -> None:
        """Older graph files of the agent (left by earlier saves or other processes)."""
        assert self.folder is not None
        for path in self.folder.glob(f"{self._stem(agent_id)}-*"):
            if not path.name.startswith(f"{self._stem(agent_id)}-{keep}."):
                _unlink(path)

    def shred(self, agent_id: str) -> None:
        """Remove every saved file of the agent, zeroing graph files first: they hold the
        vectors of chunks that were just forgotten."""
        if self.folder is None or not self.folder.is_dir():
            return
        _unlink(self._sidecar_path(agent_id))
        for path in self.folder.glob(f"{self._stem(agent_id)}-*"):
            if path.name.endswith(".bin"):
                _zero_fill(path)
            _unlink(path)

    def clear(self) -> None:
        """Drop every saved index (all vectors were cleared for a model switch)."""
        if self.folder is not None and self.folder.is_dir():
            for path in self.folder.iterdir():
                _unlink(path)


def _zero_fill(path: Path) -> None:
    try:
        size = path.stat().st_size
        with open(path, "r+b") as handle:
            block = bytes(1 << 20)
            for _ in range(0, size, len(block)):
                handle.write(block)
            handle.truncate(size)
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as exc:
        _log.warning("could not overwrite %s before removing it: %s", path, exc)


def _unlink(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError as exc:
        _log.warning("could not remove %s: %s", path, exc)
