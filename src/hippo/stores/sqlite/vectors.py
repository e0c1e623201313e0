"""Per-agent in-memory vector matrices for a SQLite store, kept in step with the file.

Each agent's matrix holds the vectors of its live (not superseded) chunks. The
store's own writes are staged during a transaction and applied on commit; a
write by any other connection bumps ``agent_versions`` (by trigger), which
makes the next search reload that agent's matrix from the file.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

import numpy as np

from hippo.errors import EmbedderMismatch
from hippo.index.exact import ExactIndex

__all__ = ["VectorCache"]


@dataclass
class _Entry:
    version: int
    index: ExactIndex | None  # None: the agent has no vectors yet


class VectorCache:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._agents: dict[str, _Entry] = {}
        self._staged: list[tuple[str, str, object]] = []
        self._versions: dict[str, int] = {}

    def _version(self, agent_id: str) -> int:
        row = self._conn.execute("SELECT version FROM agent_versions WHERE agent_id = ?", (agent_id,)).fetchone()
        return row[0] if row else 0

    # -- transaction hooks (called by the store, under its lock) --------------

    def begin(self) -> None:
        """Forget matrices another connection changed since we loaded them."""
        self._staged = []
        for agent_id, entry in list(self._agents.items()):
            if self._version(agent_id) != entry.version:
                del self._agents[agent_id]

    def stage_add(self, agent_id: str, rowid: int, vector: np.ndarray) -> None:
        self._staged.append(("add", agent_id, (rowid, np.asarray(vector, dtype=np.float32))))

    def stage_touch(self, agent_id: str) -> None:
        """Note a write that changes the agent's version but no vector (a pending chunk)."""
        self._staged.append(("touch", agent_id, None))

    def stage_remove(self, agent_id: str, rowids: list[int]) -> None:
        self._staged.append(("remove", agent_id, rowids))

    def stage_clear(self) -> None:
        self._staged.append(("clear", "", None))

    def before_commit(self) -> None:
        """Read, inside the transaction, the versions our own writes produced."""
        touched = {agent for _, agent, _ in self._staged if agent}
        self._versions = {agent: self._version(agent) for agent in touched if agent in self._agents}

    def commit(self) -> None:
        for op, agent_id, payload in self._staged:
            if op == "clear":
                self._agents.clear()
                continue
            entry = self._agents.get(agent_id)
            if entry is None:
                continue  # not loaded: the next search loads it fresh
            if op == "touch":
                continue
            if op == "add":
                rowid, vector = payload  # type: ignore[misc]
                if entry.index is None:
                    entry.index = ExactIndex(len(vector))
                entry.index.add([rowid], vector[None, :])
            elif entry.index is not None:
                entry.index.remove(payload)  # type: ignore[arg-type]
        for agent_id, version in self._versions.items():
            if agent_id in self._agents:
                self._agents[agent_id].version = version
        self._staged, self._versions = [], {}

    def rollback(self) -> None:
        self._staged, self._versions = [], {}

    # -- search -----------------------------------------------------------

    def search(
        self, agent_id: str, query: np.ndarray, limit: int, allowed: np.ndarray | None
    ) -> list[tuple[int, float]]:
        entry = self._fresh(agent_id)
        if entry.index is None:
            return []
        if entry.index.dimension != len(query):
            raise EmbedderMismatch(
                f"query vector has dimension {len(query)} but stored vectors have {entry.index.dimension}; "
                "re-embed the database with hippo.reembed()"
            )
        return entry.index.search(query, limit, allowed)

    def _fresh(self, agent_id: str) -> _Entry:
        version = self._version(agent_id)
        entry = self._agents.get(agent_id)
        if entry is not None and entry.version == version:
            return entry
        entry = self._load(agent_id)
        self._agents[agent_id] = entry
        return entry

    def _load(self, agent_id: str) -> _Entry:
        in_tx = self._conn.in_transaction
        if not in_tx:
            self._conn.execute("BEGIN")  # one snapshot for the version and the rows
        try:
            version = self._version(agent_id)
            rows = self._conn.execute(
                "SELECT rowid, embedding FROM chunks WHERE agent_id = ? AND superseded_by IS NULL "
                "AND embedding IS NOT NULL",
                (agent_id,),
            ).fetchall()
        finally:
            if not in_tx:
                self._conn.execute("COMMIT")
        if not rows:
            return _Entry(version, None)
        keys = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        flat = np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4")
        matrix = flat.reshape(len(rows), -1).astype(np.float32, copy=False)
        return _Entry(version, ExactIndex(matrix.shape[1], keys, matrix))
