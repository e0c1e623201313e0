"""The merged wordings of :class:`~hippo.stores.sqlite.store.SQLiteStore` (see ``MergeStore``).

A wording lives beside its fact: kept while the fact is archived, deleted with it by triggers
(whatever path deletes the fact: forget, delete, ``delete_all``, the archive's own delete), and
deleted when the fact's text is replaced (``REWRITTEN``: a wording of the old text is not one of the
new). Its text leaves the file as a forgotten chunk's does: ``secure_delete`` zeroes the freed pages,
and the WAL is scrubbed after the commit (the chunk's delete or rewrite schedules that;
``remove_merged`` does too).
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any, Callable, ContextManager, Sequence

from hippo.clock import from_iso, to_iso
from hippo.types import MergedWording

__all__ = ["MIGRATION", "MergeMixin", "PROVENANCE", "REWRITTEN"]

MIGRATION = """
CREATE TABLE fact_merges (
    id          TEXT PRIMARY KEY,
    agent_id    TEXT NOT NULL,
    fact_id     TEXT NOT NULL,
    content     TEXT NOT NULL,
    similarity  REAL,
    intensity   REAL NOT NULL,
    merged_at   TEXT NOT NULL
);
CREATE INDEX idx_fact_merges_fact ON fact_merges(fact_id, agent_id);
CREATE TRIGGER fact_merges_chunk_ad AFTER DELETE ON chunks BEGIN
    DELETE FROM fact_merges WHERE fact_id = old.id AND agent_id = old.agent_id
        AND NOT EXISTS (SELECT 1 FROM chunks_archive WHERE id = old.id);
END;
CREATE TRIGGER fact_merges_archive_ad AFTER DELETE ON chunks_archive BEGIN
    DELETE FROM fact_merges WHERE fact_id = old.id AND agent_id = old.agent_id
        AND NOT EXISTS (SELECT 1 FROM chunks WHERE id = old.id);
END;
"""

# Who said a wording, and where: what the split fact takes (migration 0023; NULL in older rows).
PROVENANCE = """
ALTER TABLE fact_merges ADD COLUMN metadata TEXT;
ALTER TABLE fact_merges ADD COLUMN source TEXT;
ALTER TABLE fact_merges ADD COLUMN session_id TEXT;
ALTER TABLE fact_merges ADD COLUMN observed_at TEXT;
"""

# A fact whose text is replaced (``update_content``: update_memory, a keyed item put again, any
# later path that sets ``content``) loses the wordings merged into the old text, in the write that
# replaces it (migration 0024). A trigger, as for the windows, so no path can keep them by omission;
# the same text written again (or only a new vector) keeps them.
REWRITTEN = """
CREATE TRIGGER fact_merges_chunk_au AFTER UPDATE OF content ON chunks WHEN old.content IS NOT new.content BEGIN
    DELETE FROM fact_merges WHERE fact_id = old.id AND agent_id = old.agent_id;
END;
"""

_COLUMNS = "id, fact_id, content, merged_at, similarity, intensity, metadata, source, session_id, observed_at"


def _marks(n: int) -> str:
    return ",".join("?" * n)


class MergeMixin:
    _conn: sqlite3.Connection
    _after_commit: list[Callable[[], object]]
    _reading: Callable[..., ContextManager[sqlite3.Connection]]
    transaction: Callable[[], ContextManager[None]]
    _scrub: Any

    def add_merged(self, agent_id: str, wordings: Sequence[MergedWording]) -> None:
        if not wordings:
            return
        with self.transaction():
            self._conn.executemany(
                f"INSERT INTO fact_merges (agent_id, {_COLUMNS}) VALUES ({_marks(11)})",
                [(agent_id, w.id, w.fact_id, w.content, to_iso(w.merged_at), w.similarity, w.intensity,
                  json.dumps(w.metadata, ensure_ascii=False) if w.metadata else None, w.source, w.session_id,
                  to_iso(w.observed_at) if w.observed_at else None) for w in wordings])

    def merged_wordings(self, agent_id: str, fact_ids: Sequence[str]) -> list[MergedWording]:
        if not fact_ids:
            return []
        with self._reading(agent_id) as conn:
            rows = conn.execute(f"SELECT {_COLUMNS} FROM fact_merges WHERE agent_id = ? "
                                f"AND fact_id IN ({_marks(len(fact_ids))}) ORDER BY merged_at, id",
                                (agent_id, *fact_ids)).fetchall()
        return [MergedWording(r[0], r[1], r[2], from_iso(r[3]), r[4], r[5], json.loads(r[6]) if r[6] else {},
                              r[7], r[8], from_iso(r[9]) if r[9] else None) for r in rows]

    def remove_merged(self, agent_id: str, ids: Sequence[str]) -> int:
        if not ids:
            return 0
        with self.transaction():
            count = self._conn.execute(f"DELETE FROM fact_merges WHERE agent_id = ? AND id IN ({_marks(len(ids))})",
                                       (agent_id, *ids)).rowcount
            if count:
                self._after_commit.append(self._scrub.after_delete)  # see scrub.py
        return count

    def known_merge_ids(self, agent_id: str, ids: Sequence[str]) -> dict[str, bool]:
        if not ids:
            return {}
        with self._reading(agent_id) as conn:
            rows = conn.execute(f"SELECT id, agent_id = ? FROM fact_merges WHERE id IN ({_marks(len(ids))})",
                                (agent_id, *ids)).fetchall()
        return {row[0]: bool(row[1]) for row in rows}
