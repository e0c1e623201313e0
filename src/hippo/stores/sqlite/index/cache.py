"""Per-agent in-memory vector indexes for a SQLite store, kept in step with the file.

Each agent's index holds the vectors of its live (not superseded) chunks: exact
(numpy) below ``ann_threshold`` vectors, HNSW (the ``ann`` extra) from there on.
The store's own writes are staged during a transaction and applied on commit; a
write by any other connection bumps ``agent_versions`` (by trigger), which
makes the next search reload that agent's index from the file. An ANN index is
saved beside the database (see ``annfiles``) after it is built and on close, and
reused at the next load only if it matches the database exactly.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from dataclasses import dataclass
from typing import cast

import numpy as np

from hippo.errors import EmbedderMismatch
from hippo.installed import install_line
from hippo.stores.sqlite.index import VectorIndex
from hippo.stores.sqlite.index.annfiles import AnnFiles, Snapshot
from hippo.stores.sqlite.index.exact import ExactIndex, locate
from hippo.stores.sqlite.index.hnsw import HnswIndex, ann_available
from hippo.stores.sqlite.index.windowed import WINDOW_BASE, WINDOW_SLOTS, WindowedIndex

__all__ = ["VectorCache", "read_rowids"]

_log = logging.getLogger(__name__)
_LIVE = "FROM chunks WHERE agent_id = ? AND superseded_by IS NULL AND embedding IS NOT NULL"
# The windows of the agent's chunks (of its live ones with ``_LIVE_CHUNK``): chunk_windows' keys
# name their chunk (hippo.stores.sqlite.index.windowed), so the join reads one chunk row per window.
_WINDOWS = (f"FROM chunk_windows w JOIN chunks c ON c.rowid = (w.key - {WINDOW_BASE}) / {WINDOW_SLOTS} "
            "WHERE c.agent_id = ?")
_LIVE_CHUNK = " AND c.superseded_by IS NULL AND c.embedding IS NOT NULL"


def read_rowids(conn: sqlite3.Connection, select: str, params: tuple | list = ()) -> np.ndarray:
    """The rowids ``select`` (a query of one integer column) returns, in no promised order.

    SQLite joins them into one string that numpy parses: a third of the time of a Python step
    per row (6 against 15 ms for 42k rowids)."""
    (joined,) = conn.execute(f"WITH listed(value) AS ({select}) SELECT group_concat(value) FROM listed",
                             params).fetchone()
    return np.fromstring(joined, dtype=np.int64, sep=",") if joined else np.zeros(0, dtype=np.int64)


@dataclass
class _Entry:
    version: int
    index: WindowedIndex | None  # None: the agent has no vectors yet
    saved: int | None = None  # the version an ANN index was last saved at


class VectorCache:
    def __init__(self, conn: sqlite3.Connection, path: str = "", *, ann_threshold: int | None = None) -> None:
        self._conn = conn
        self._agents: dict[str, _Entry] = {}
        self._staged: list[tuple[str, str, object]] = []
        self._versions: dict[str, int] = {}
        self._files = AnnFiles(path)
        self.ann_threshold = ann_threshold
        self._warned = False

    def _version(self, agent_id: str) -> int:
        row = self._conn.execute("SELECT version FROM agent_versions WHERE agent_id = ?", (agent_id,)).fetchone()
        return row[0] if row else 0

    def _wants_ann(self, count: int) -> bool:
        if not self.ann_threshold or count < self.ann_threshold:
            return False
        if ann_available():
            return True
        if not self._warned:
            self._warned = True
            _log.warning("an agent has %d vectors: searched exactly, which slows down from here on; "
                         "%s for the HNSW index", count, install_line("ann"))
        return False

    # -- transaction hooks (called by the store, under its lock) --------------

    def begin(self) -> None:
        """Forget indexes another connection changed since we loaded them."""
        self._staged = []
        for agent_id, entry in list(self._agents.items()):
            if self._version(agent_id) != entry.version:
                del self._agents[agent_id]

    def stage_add(self, agent_id: str, rowid: int, vector: np.ndarray) -> None:
        """A chunk's vector, or its vectors (``(windows, dimension)``: its windows replace the old)."""
        self._staged.append(("add", agent_id, (rowid, np.asarray(vector, dtype=np.float32))))

    def stage_touch(self, agent_id: str) -> None:
        """Note a write that changes the agent's version but no vector (a pending chunk)."""
        self._staged.append(("touch", agent_id, None))

    def stage_remove(self, agent_id: str, rowids: list[int], *, forget: bool = False) -> None:
        """Rows leave the index; ``forget`` (a hard delete) also shreds the agent's saved ANN files."""
        self._staged.append(("remove", agent_id, rowids))
        if forget:
            self._staged.append(("shred", agent_id, None))

    def stage_clear(self) -> None:
        self._staged.append(("clear", "", None))

    def before_commit(self) -> None:
        """Read, inside the transaction, the versions our own writes produced."""
        touched = {agent for _, agent, _ in self._staged if agent}
        self._versions = {agent: self._version(agent) for agent in touched if agent in self._agents}

    def commit(self) -> None:
        adds: dict[str, tuple[list[int], list[np.ndarray]]] = {}  # batched per agent: one graph insert
        for op, agent_id, payload in self._staged:
            if op == "add":
                rowid, vector = cast("tuple[int, np.ndarray]", payload)
                keys, rows = adds.setdefault(agent_id, ([], []))
                keys.append(rowid)
                rows.append(vector)
                continue
            if op == "clear":
                adds.clear()
                self._agents.clear()
                self._files.clear()
                continue
            self._apply_adds(agent_id, adds.pop(agent_id, None))  # keep add/remove order per agent
            if op == "shred":
                self._files.shred(agent_id)  # whether or not this process has the agent loaded
                if agent_id in self._agents:
                    self._agents[agent_id].saved = None
            elif op == "remove" and (entry := self._agents.get(agent_id)) and entry.index is not None:
                entry.index.remove(payload)  # type: ignore[arg-type]
        for agent_id, batch in adds.items():
            self._apply_adds(agent_id, batch)
        for agent_id, version in self._versions.items():
            if agent_id in self._agents:
                self._agents[agent_id].version = version
        self._staged, self._versions = [], {}

    def _apply_adds(self, agent_id: str, batch: tuple[list[int], list[np.ndarray]] | None) -> None:
        entry = self._agents.get(agent_id)
        if batch is None or entry is None:
            return  # nothing staged, or not loaded: the next search loads it fresh
        latest = dict(zip(*batch))  # a row written twice in one transaction keeps its last vectors
        if entry.index is None:
            entry.index = WindowedIndex(ExactIndex(np.shape(next(iter(latest.values())))[-1]))
        entry.index.put(latest)

    def rollback(self) -> None:
        self._staged, self._versions = [], {}

    def close(self) -> None:
        """Save ANN indexes that changed since their last save and still match the file."""
        for agent_id, entry in self._agents.items():
            if entry.index is not None and isinstance(entry.index.inner, HnswIndex) and entry.saved != entry.version:
                if self._version(agent_id) == entry.version:
                    self._save(agent_id, entry)
        self._agents.clear()

    # -- search -----------------------------------------------------------

    def search(
        self, agent_id: str, query: np.ndarray, limit: int, allowed: np.ndarray | None, *, quick: bool = False
    ) -> list[tuple[int, float]]:
        index = self.searched(agent_id, query)
        return [] if index is None else index.search(query, limit, allowed, quick=quick)

    def searched(self, agent_id: str, query: np.ndarray) -> WindowedIndex | None:
        """The agent's index, loaded, checked against the query and grown into HNSW when due; None
        when the agent has no vectors. A caller that asks it twice (``rough``, then ``exact``)
        holds on to it: another connection's write may replace it meanwhile."""
        entry = self._fresh(agent_id)
        if entry.index is None:
            return None
        if entry.index.dimension != len(query):
            raise EmbedderMismatch(
                f"query vector has dimension {len(query)} but stored vectors have {entry.index.dimension}; "
                "re-embed the database with hippo.reembed()"
            )
        inner = entry.index.inner
        if isinstance(inner, ExactIndex) and self._wants_ann(len(inner)):
            keys, matrix = inner.rows()
            entry.index = WindowedIndex(HnswIndex(inner.dimension, keys, matrix, source=self._stored),
                                        keys[keys >= WINDOW_BASE])
            self._save(agent_id, entry)
        return entry.index

    def loaded_count(self, agent_id: str) -> int | None:
        """How many vectors the agent's loaded index holds; None when none is loaded."""
        entry = self._agents.get(agent_id)
        return None if entry is None or entry.index is None else len(entry.index)

    def index_of(self, agent_id: str) -> VectorIndex | None:
        """The agent's current index, exact or HNSW, window vectors included (loading it if needed):
        for tests and diagnostics."""
        index = self._fresh(agent_id).index
        return None if index is None else index.inner

    def _fresh(self, agent_id: str) -> _Entry:
        version = self._version(agent_id)
        entry = self._agents.get(agent_id)
        if entry is not None and entry.version == version:
            return entry
        entry = self._load(agent_id)
        self._agents[agent_id] = entry
        return entry

    def _save(self, agent_id: str, entry: _Entry) -> None:
        assert entry.index is not None and isinstance(entry.index.inner, HnswIndex)
        row = self._conn.execute("SELECT model_id FROM embedding_model WHERE id = 1").fetchone()

        def settle(index: HnswIndex) -> None:
            """Under the files' lock: drop the rows that changed since our snapshot (any write
            bumps the agent's version, so an unchanged version needs no look)."""
            if self._version(agent_id) != entry.version:
                stale = self._stale(agent_id, index)
                if len(stale):
                    _log.info("leaving %d rows deleted or changed meanwhile out of the saved ANN index", len(stale))
                    index.remove(stale.tolist())

        self._files.save(agent_id, entry.index.inner, entry.version, row[0] if row else None, settle)
        entry.saved = entry.version

    def _stale(self, agent_id: str, index: HnswIndex) -> np.ndarray:
        """The keys of ``index`` that are no longer the agent's rows with the same vector.

        Checking which keys still exist is not enough: SQLite hands the highest rowid, once
        deleted, to the next insert, so a forgotten row's key can be alive again under another
        vector. Every vector is compared (about 30 µs a key through hnswlib, a tenth of what
        building the graph cost), only when another connection wrote during the build."""
        keys = index.keys()
        own = np.union1d(read_rowids(self._conn, "SELECT rowid FROM chunks WHERE agent_id = ?", (agent_id,)),
                         read_rowids(self._conn, f"SELECT w.key {_WINDOWS}", (agent_id,)))
        stale = [np.setdiff1d(keys, own, assume_unique=True)]
        for start in range(0, len(keys), 10_000):
            part = keys[start:start + 10_000]
            held, stored = index.graph_vectors(part), self._stored(part)  # a row gone reads as zeros
            if held.shape != stored.shape:  # none of them stored any more
                stale.append(part)
            else:
                stale.append(part[(held != stored).any(axis=1)])
        return np.unique(np.concatenate(stale))

    def _load(self, agent_id: str) -> _Entry:
        in_tx = self._conn.in_transaction
        if not in_tx:
            self._conn.execute("BEGIN")  # one snapshot for the version, the saved-index check and the rows
        try:
            snap = self._snapshot(agent_id)
            if len(snap.keys) == 0:
                return _Entry(snap.version, None)
            if self._wants_ann(len(snap.keys)):
                loaded = self._files.load(agent_id, snap, self._stored)
                if loaded is not None:
                    saved, current = loaded
                    saved.source = self._stored
                    index = WindowedIndex(saved, snap.keys[snap.keys >= WINDOW_BASE])
                    return _Entry(snap.version, index, saved=snap.version if current else None)
            rows = self._conn.execute(f"SELECT rowid, embedding {_LIVE}", (agent_id,)).fetchall()
            rows += self._conn.execute(f"SELECT w.key, w.embedding {_WINDOWS}{_LIVE_CHUNK}", (agent_id,)).fetchall()
        finally:
            if not in_tx:
                self._conn.execute("COMMIT")
        keys = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        flat = np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4")
        matrix = flat.reshape(len(rows), -1).astype(np.float32, copy=False)
        del rows  # at a million vectors every copy is 1.5 GB
        windows = keys[keys >= WINDOW_BASE]
        if not self._wants_ann(len(keys)):  # windows count: they cost the exact search as much
            return _Entry(snap.version, WindowedIndex(ExactIndex(matrix.shape[1], keys, matrix), windows))
        _log.info("building the ANN index of an agent (%d vectors)", len(keys))
        entry = _Entry(snap.version, WindowedIndex(HnswIndex(matrix.shape[1], keys, matrix, source=self._stored),
                                                   windows))
        self._save(agent_id, entry)
        return entry

    def _snapshot(self, agent_id: str) -> Snapshot:
        version = self._version(agent_id)
        keys = np.union1d(read_rowids(self._conn, f"SELECT rowid {_LIVE}", (agent_id,)),
                          read_rowids(self._conn, f"SELECT w.key {_WINDOWS}{_LIVE_CHUNK}", (agent_id,)))
        row = self._conn.execute("SELECT model_id, dimension FROM embedding_model WHERE id = 1").fetchone()
        return Snapshot(version, keys, row[0] if row else None, row[1] if row else None)

    def _stored(self, keys: np.ndarray) -> np.ndarray:
        """The stored vectors of ``keys`` (rowids), row for row: the ANN index's exact path reads here.

        Read in rowid order and joined into one buffer (no Python step per row but the join); a
        row deleted earlier in an open transaction scores 0 and is dropped later."""
        keys = np.asarray(keys, dtype=np.int64)
        windows = keys >= WINDOW_BASE
        rows = self._conn.execute(
            "SELECT rowid, embedding FROM chunks WHERE rowid IN (SELECT value FROM json_each(?)) "
            "AND embedding IS NOT NULL ORDER BY rowid",
            (json.dumps(keys[~windows].tolist()),),
        ).fetchall()
        if windows.any():  # window keys sort after every rowid: the rows stay in key order
            rows += self._conn.execute(
                "SELECT key, embedding FROM chunk_windows WHERE key IN (SELECT value FROM json_each(?)) ORDER BY key",
                (json.dumps(keys[windows].tolist()),),
            ).fetchall()
        if not rows:
            return np.zeros((len(keys), 0), dtype=np.float32)
        found = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(len(rows), -1)
        at, present = locate(found, keys)
        out = np.zeros((len(keys), matrix.shape[1]), dtype=np.float32)
        out[present] = matrix[at[present]]
        return out
