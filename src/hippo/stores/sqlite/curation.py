"""The curation half of :class:`~hippo.stores.sqlite.store.SQLiteStore` (seed 003): the archive (see
``ArchiveStore``) and links between chunks (``LinkStore``).

Archiving moves a row from ``chunks`` to ``chunks_archive`` without its vector; the FTS triggers
index it there and unindex it here. Deleting from either table goes through the same scrub as a
forget: FTS5 rewrites its index without the row, ``secure_delete`` zeroes freed pages, and the WAL
is scrubbed after the commit.
"""

from __future__ import annotations

import fcntl
import sqlite3
from contextlib import contextmanager
from datetime import datetime
from typing import Any, Callable, ContextManager, Iterator, Sequence

import numpy as np

from hippo.clock import from_iso, to_iso
from hippo.stores.base import PruneCandidate
from hippo.stores.retrievals import STRONG_LINK, RetrievalBatch
from hippo.stores.sqlite.fts import drop_deleted_terms
from hippo.stores.sqlite.search import EPOCH_JULIAN_DAY, match_expression
from hippo.stores.sqlite.summary import count_retrieval_days
from hippo.stores.vectors import encode_int8
from hippo.types import ArchivedMemory, Chunk

__all__ = ["CurationMixin"]

_MOVED = ("id, agent_id, content, content_hash, metadata, kind, running_intensity, encounter_count, access_count, "
          "last_accessed_at, superseded_by, created_at, observed_at, feedback, reinforced_at, source, session_id")
# As ``store._CHUNK_COLUMNS`` reads them (an archived chunk has no vector).
_ARCHIVED = ("a.id, a.agent_id, a.content, a.content_hash, a.metadata, a.kind, a.running_intensity, "
             "a.encounter_count, a.access_count, a.last_accessed_at, a.superseded_by, a.created_at, a.observed_at, "
             "0, a.feedback, a.reinforced_at, a.source, a.session_id")


def _marks(n: int) -> str:
    return ",".join("?" * n)


class CurationMixin:
    _conn: sqlite3.Connection
    _after_commit: list[Callable[[], object]]
    _reading: Callable[..., ContextManager[sqlite3.Connection]]
    _chunk_of: Callable[[tuple], Chunk]
    transaction: Callable[[], ContextManager[None]]
    _text_removed: Callable[[str, list[int]], None]
    _release_sources: Callable[[str, str, Sequence[str]], None]
    _scrub: Any
    _file: str
    get_vectors: Callable[[str, Sequence[str]], dict[str, np.ndarray]]

    def used_bytes(self) -> int:
        with self._reading() as conn:
            pages, free, size = (conn.execute(f"PRAGMA {p}").fetchone()[0]
                                 for p in ("page_count", "freelist_count", "page_size"))
        return int((pages - free) * size)

    @contextmanager
    def exclusive(self, name: str) -> Iterator[bool]:
        """A lock file beside the database (``<db>.<name>.lock``), held with ``flock``; an in-memory
        database has one process."""
        if self._file in ("", ":memory:") or self._file.startswith("file:"):
            yield True
            return
        with open(f"{self._file}.{name}.lock", "a") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                yield False
                return
            try:
                yield True
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def compact(self) -> None:
        with self._reading() as conn:  # the store's lock: no other thread uses the connection meanwhile
            conn.execute("VACUUM")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def prune_candidates(self, agent_id: str | None = None) -> list[PruneCandidate]:
        mine, params = ("AND agent_id = ?", (agent_id,)) if agent_id is not None else ("", ())
        with self._reading() as conn:
            rows = conn.execute(
                "SELECT agent_id, id, feedback, (julianday(COALESCE(reinforced_at, created_at)) - "
                f"{EPOCH_JULIAN_DAY}) * 86400.0, length(CAST(content AS BLOB)) + coalesce(length(metadata), 0) "
                f"+ coalesce(length(embedding), 0) FROM chunks WHERE kind = 'memory' {mine} "
                "AND json_extract(metadata, '$._item_key') IS NULL", params).fetchall()
        return [PruneCandidate(*row) for row in rows]

    def archive_chunks(self, agent_id: str, ids: Sequence[str], now: datetime) -> int:
        if not ids:
            return 0
        with self.transaction():
            self._conn.execute(
                f"INSERT INTO chunks_archive ({_MOVED}, archived_at) SELECT {_MOVED}, ? FROM chunks "
                f"WHERE +agent_id = ? AND id IN ({_marks(len(ids))})", (to_iso(now), agent_id, *ids))
            self.set_archived_vectors(agent_id, {i: encode_int8(v) for i, v in self.get_vectors(agent_id, ids).items()})
            rows = self._conn.execute(
                f"DELETE FROM chunks WHERE +agent_id = ? AND id IN ({_marks(len(ids))}) RETURNING rowid",
                (agent_id, *ids)).fetchall()
            if rows:
                self._text_removed(agent_id, [r[0] for r in rows])
        return len(rows)

    def archived_chunks(self, agent_id: str, ids: Sequence[str]) -> list[Chunk]:
        if not ids:
            return []
        with self._reading(agent_id) as conn:
            rows = conn.execute(f"SELECT {_ARCHIVED} FROM chunks_archive a WHERE a.agent_id = ? "
                                f"AND a.id IN ({_marks(len(ids))}) ORDER BY a.id", (agent_id, *ids)).fetchall()
        return [self._chunk_of(r) for r in rows]

    def list_archived(self, agent_id: str, *, limit: int, before: tuple[datetime, str] | None = None,
                      ids: Sequence[str] | None = None) -> list[ArchivedMemory]:
        if ids is not None and not ids:
            return []
        sql, params = f"SELECT {_ARCHIVED}, a.archived_at FROM chunks_archive a WHERE a.agent_id = ?", [agent_id]
        if before is not None:
            sql, params = sql + " AND (a.archived_at, a.id) < (?, ?)", [*params, to_iso(before[0]), before[1]]
        if ids is not None:
            sql, params = sql + f" AND a.id IN ({_marks(len(ids))})", [*params, *ids]
        with self._reading(agent_id) as conn:
            rows = conn.execute(sql + " ORDER BY a.archived_at DESC, a.id DESC LIMIT ?", (*params, limit)).fetchall()
        return [ArchivedMemory(self._chunk_of(r[:-1]), from_iso(r[-1])) for r in rows]

    def search_archive(self, agent_id: str, terms: Sequence[str], limit: int, *,
                       every_term: bool = False) -> list[tuple[Chunk, float]]:
        match = match_expression(terms, every=every_term)
        if match is None:
            return []
        with self._reading(agent_id) as conn:
            rows = conn.execute(
                f"SELECT {_ARCHIVED}, -bm25(chunks_archive_fts) FROM chunks_archive_fts JOIN chunks_archive a "
                "ON a.rowid = chunks_archive_fts.rowid WHERE chunks_archive_fts MATCH ? AND a.agent_id = ? "
                "ORDER BY bm25(chunks_archive_fts), a.id LIMIT ?", (match, agent_id, limit)).fetchall()
        return [(self._chunk_of(r[:-1]), float(r[-1])) for r in rows]

    def archived_vectors(self, agent_id: str) -> dict[str, bytes | None]:
        with self._reading(agent_id) as conn:
            rows = conn.execute("SELECT id, embedding_int8 FROM chunks_archive WHERE agent_id = ?",
                                (agent_id,)).fetchall()
        return {r[0]: r[1] for r in rows}

    def set_archived_vectors(self, agent_id: str, codes: dict[str, bytes]) -> None:
        if not codes:
            return
        with self.transaction():
            self._conn.executemany("UPDATE chunks_archive SET embedding_int8 = ? WHERE agent_id = ? AND id = ?",
                                   [(code, agent_id, i) for i, code in codes.items()])

    def clear_archived_vectors(self) -> None:
        with self.transaction():
            self._conn.execute("UPDATE chunks_archive SET embedding_int8 = NULL WHERE embedding_int8 IS NOT NULL")

    def restore_chunks(self, agent_id: str, ids: Sequence[str]) -> int:
        if not ids:
            return 0
        with self.transaction():
            moved = self._conn.execute(
                f"INSERT INTO chunks ({_MOVED}) SELECT {_MOVED} FROM chunks_archive "
                f"WHERE agent_id = ? AND id IN ({_marks(len(ids))})", (agent_id, *ids)).rowcount
            self._delete_archived(agent_id, ids)
        return moved

    def delete_archived(self, agent_id: str, ids: Sequence[str]) -> int:
        if not ids:
            return 0
        with self.transaction():
            self._release_sources("chunks_archive", agent_id, ids)
            return self._delete_archived(agent_id, ids)

    def _delete_archived(self, agent_id: str, ids: Sequence[str]) -> int:
        if not ids:
            return 0
        count = self._conn.execute(f"DELETE FROM chunks_archive WHERE agent_id = ? AND id IN ({_marks(len(ids))})",
                                   (agent_id, *ids)).rowcount
        if count:
            drop_deleted_terms(self._conn, "chunks_archive_fts")
            self._after_commit.append(self._scrub.after_delete)
        return count

    # -- links (seed 003's relations) --------------------------------------------------------

    def strengthen_links(self, agent_id: str, pairs: Sequence[tuple[str, str]], kind: str, now: datetime) -> None:
        if not pairs:
            return
        with self.transaction():
            self._conn.executemany(
                "INSERT INTO chunk_links (agent_id, kind, a, b, strength, updated_at) SELECT ?, ?, ?, ?, 1.0, ? "
                "WHERE (SELECT count(*) FROM chunks WHERE +agent_id = ? AND id IN (?, ?)) = 2 "
                "ON CONFLICT (agent_id, kind, a, b) DO UPDATE SET strength = strength + 1.0, "
                "updated_at = excluded.updated_at",
                [(agent_id, kind, a, b, to_iso(now), agent_id, a, b) for a, b in pairs])

    def write_retrievals(self, agent_id: str, batch: RetrievalBatch) -> None:
        with self.transaction():
            ids = list(batch.chunks)
            found = {r[0] for r in self._conn.execute(
                f"SELECT id FROM chunks WHERE +agent_id = ? AND id IN ({_marks(len(ids))})", (agent_id, *ids))}
            self._conn.executemany(
                "UPDATE chunks SET access_count = access_count + ?, last_accessed_at = ?, "
                "running_intensity = min(1.0, running_intensity + ?) WHERE +agent_id = ? AND id = ?",
                [(times, to_iso(last), boost, agent_id, chunk_id)
                 for chunk_id, (times, last, boost) in batch.chunks.items() if chunk_id in found])
            self._conn.executemany(  # both ends were found: nothing deletes inside this write
                "INSERT INTO chunk_links (agent_id, kind, a, b, strength, updated_at) "
                "VALUES (?, 'co_recall', ?, ?, ?, ?) ON CONFLICT (agent_id, kind, a, b) DO UPDATE "
                "SET strength = strength + excluded.strength, updated_at = excluded.updated_at",
                [(agent_id, a, b, float(times), to_iso(last))
                 for (a, b), (times, last) in batch.links.items() if a in found and b in found])
            count_retrieval_days(self._conn, agent_id, batch.day_counts(found))

    def prune_links(self, agent_id: str, *, before: datetime, keep: int | None) -> int:
        weak = f"chunk_links WHERE agent_id = ? AND kind = 'co_recall' AND strength < {STRONG_LINK}"
        with self.transaction():  # both through idx_links_weak
            gone = self._conn.execute(f"DELETE FROM {weak} AND updated_at < ?", (agent_id, to_iso(before))).rowcount
            if keep is not None:
                gone += self._conn.execute(
                    f"DELETE FROM chunk_links WHERE (agent_id, kind, a, b) IN (SELECT agent_id, kind, a, b "
                    f"FROM {weak.replace('chunk_links', 'chunk_links INDEXED BY idx_links_weak', 1)} "
                    f"ORDER BY updated_at DESC LIMIT -1 OFFSET ?)", (agent_id, keep)).rowcount
        return gone

    def links(self, agent_id: str, ids: Sequence[str],
              min_strength: float = 0.0) -> list[tuple[str, str, str, float, bool]]:
        if not ids:
            return []
        marks = _marks(len(ids))
        with self._reading(agent_id) as conn:
            rows = conn.execute(
                f"SELECT l.a, l.b, l.kind, l.strength, true FROM chunk_links l WHERE l.agent_id = ? "
                f"AND l.a IN ({marks}) AND l.strength >= ? UNION ALL "
                f"SELECT l.b, l.a, l.kind, l.strength, false FROM chunk_links l WHERE l.agent_id = ? "
                f"AND l.b IN ({marks}) AND l.strength >= ?",
                (agent_id, *ids, min_strength, agent_id, *ids, min_strength)).fetchall()
        return sorted(((r[0], r[1], r[2], float(r[3]), bool(r[4])) for r in rows), key=lambda r: (-r[3], r[1]))

    def count_archived(self, agent_id: str) -> int:
        with self._reading(agent_id) as conn:
            return int(conn.execute("SELECT count(*) FROM chunks_archive WHERE agent_id = ?",
                                    (agent_id,)).fetchone()[0])
