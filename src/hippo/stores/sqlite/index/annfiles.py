"""Saved ANN indexes beside a SQLite file, and the checks that keep a stale one from being used.

Layout: ``<db>.hnsw/<agent-hash>.json`` (the sidecar) names the graph file
``<agent-hash>-<token>.bin`` and its live keys with their int8 vectors
(``…bin.rows.npz``). The sidecar is written last and removed first, so a crash
mid-save leaves no sidecar and the next start rebuilds. A saved index is used
only when its sidecar's model and dimension match the database and a sample of
its vectors equals the stored ones; rows added or retired since it was saved
are then applied to it (when they are fewer than half the agent's rows;
otherwise it is rebuilt).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import secrets
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

from hippo.stores.sqlite.index.hnsw import HnswIndex

__all__ = ["AnnFiles", "Snapshot"]

_log = logging.getLogger(__name__)
_FORMAT = 2  # 2: the int8 rows beside the graph (1 saved only the keys)
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

    def load(
        self, agent_id: str, snap: Snapshot, stored: Callable[[np.ndarray], np.ndarray]
    ) -> tuple[HnswIndex, bool] | None:
        """The saved index brought up to ``snap``, and whether it needed no change; None when it
        cannot be used. ``stored(keys)`` reads vectors from the database.

        An index saved a few writes ago (another process added or superseded chunks, or this one
        stopped without closing) is caught up: rows it lacks are inserted, rows no longer live are
        removed. Any hard delete shreds the saved files, so a rowid never comes back with another
        vector behind a saved index's back.
        """
        if self.folder is None:
            return None
        sidecar = self._read_sidecar(agent_id)
        if sidecar is None or (sidecar.model_id, sidecar.dimension) != (snap.model_id, snap.dimension):
            return None
        try:
            index = HnswIndex.load(self._graph_path(agent_id, sidecar.token), sidecar.dimension)
        except (OSError, ValueError) as exc:
            _log.info("rebuilding the ANN index of an agent: %s", exc)
            return None
        index.source = stored
        saved_keys = index.keys()
        both = np.intersect1d(saved_keys, snap.keys, assume_unique=True)
        if len(both) == 0:
            return None
        sample = both[np.linspace(0, len(both) - 1, min(_SAMPLE, len(both))).astype(int)]
        if not np.allclose(index.graph_vectors(sample), stored(sample), atol=1e-6):
            return None  # other vectors under the same keys: a database recreated under the same name
        missing = np.setdiff1d(snap.keys, saved_keys, assume_unique=True)
        gone = np.setdiff1d(saved_keys, snap.keys, assume_unique=True)
        if len(missing) + len(gone) == 0:
            return index, sidecar.version == snap.version
        if len(missing) + len(gone) > len(snap.keys) // 2:
            return None  # rebuilding costs less than catching up
        _log.info("catching up the saved ANN index of an agent: %d rows added, %d removed", len(missing), len(gone))
        index.remove(gone.tolist())
        for start in range(0, len(missing), 10_000):
            part = missing[start:start + 10_000]
            index.add(part.tolist(), stored(part))
        return index, False

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """Every process's saves and shreds of this database's indexes, one at a time.

        A process that built an index from a snapshot taken before another process's forget
        would otherwise save the forgotten vector after that forget had shredded the files."""
        assert self.folder is not None
        self.folder.mkdir(exist_ok=True)
        with open(self.folder / ".lock", "a+b") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def save(self, agent_id: str, index: HnswIndex, version: int, model_id: str | None,
             settle: Callable[[HnswIndex], None] = lambda index: None) -> None:
        """Persist ``index`` as the agent's state at ``version``; failures are logged, not raised.

        ``settle(index)`` runs under the lock first: it removes (zeroing their vectors) the rows
        hard-deleted since the index's snapshot, so a forget that committed meanwhile is honoured.
        A forget committing later shreds what is written here, under the same lock."""
        if self.folder is None:
            return
        try:
            with self._locked():
                settle(index)
                token = secrets.token_hex(8)
                sidecar = _Sidecar(_FORMAT, "hnswlib", token, version, len(index), model_id, index.dimension)
                self._sidecar_path(agent_id).unlink(missing_ok=True)
                index.save(self._graph_path(agent_id, token))
                tmp = self._sidecar_path(agent_id).with_suffix(f".{os.getpid()}.tmp")
                tmp.write_text(json.dumps(asdict(sidecar)), encoding="utf-8")
                os.replace(tmp, self._sidecar_path(agent_id))
                self._remove_others(agent_id, keep=token)
        except OSError as exc:
            _log.warning("could not save the ANN index beside the database: %s", exc)

    def _remove_others(self, agent_id: str, keep: str) -> None:
        """Older graph files of the agent (left by earlier saves or other processes), zeroed first:
        an unlinked file's blocks keep their bytes on the disk."""
        assert self.folder is not None
        for path in self.folder.glob(f"{self._stem(agent_id)}-*"):
            if not path.name.startswith(f"{self._stem(agent_id)}-{keep}."):
                _zero_fill(path)
                _unlink(path)

    def shred(self, agent_id: str) -> None:
        """Remove every saved file of the agent, zeroing them first: the graph and the int8
        rows hold the vectors of chunks that were just forgotten. Called after the forget commits."""
        if self.folder is None or not self.folder.is_dir():
            return
        with self._locked():
            _unlink(self._sidecar_path(agent_id))
            for path in self.folder.glob(f"{self._stem(agent_id)}-*"):
                _zero_fill(path)
                _unlink(path)

    def saved_keys(self, agent_id: str) -> tuple[np.ndarray, list[str]]:
        """The keys (chunk rowids) the agent's saved index holds a vector of, and the names of its
        files no sidecar names (left by a save that did not finish; none after a shred)."""
        if self.folder is None or not self.folder.is_dir():
            return np.zeros(0, dtype=np.int64), []
        sidecar = self._read_sidecar(agent_id)
        named = "" if sidecar is None else f"{self._stem(agent_id)}-{sidecar.token}."
        stray = sorted(p.name for p in self.folder.glob(f"{self._stem(agent_id)}-*")
                       if not (named and p.name.startswith(named)))
        if sidecar is None:
            return np.zeros(0, dtype=np.int64), stray
        try:
            return HnswIndex.load(self._graph_path(agent_id, sidecar.token), sidecar.dimension).keys(), stray
        except (OSError, ValueError):
            return np.zeros(0, dtype=np.int64), [*stray, self._graph_path(agent_id, sidecar.token).name]

    def problems(self, model_id: str | None, dimension: int | None) -> tuple[int, list[str]]:
        """How many saved indexes there are, and what is wrong with them (``hippo check``): a
        sidecar that cannot be read, a graph file it names that is missing, another model's
        vectors. An index a few writes behind is no problem: the next load catches it up."""
        if self.folder is None or not self.folder.is_dir():
            return 0, []
        found, problems = 0, []
        for path in sorted(self.folder.glob("*.json")):
            found += 1
            try:
                sidecar = _Sidecar(**json.loads(path.read_text(encoding="utf-8")))
            except (OSError, ValueError, TypeError) as exc:
                problems.append(f"{path.name} cannot be read ({exc})")
                continue
            graph = self.folder / f"{path.stem}-{sidecar.token}.bin"
            if not graph.is_file():
                problems.append(f"{path.name} names {graph.name}, which is missing")
            if (sidecar.model_id, sidecar.dimension) != (model_id, dimension):
                problems.append(f"{path.name} holds vectors of {sidecar.model_id} ({sidecar.dimension}), the "
                                f"database's are {model_id} ({dimension})")
        return found, problems

    def clear(self) -> None:
        """Drop every saved index (all vectors were cleared for a model switch)."""
        if self.folder is not None and self.folder.is_dir():
            with self._locked():
                for path in self.folder.iterdir():
                    if path.name != ".lock":
                        _zero_fill(path)
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
