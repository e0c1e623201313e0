"""The embedded store: one SQLite file, FTS5 for keywords, an exact in-memory vector index."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np

from hippo.clock import from_iso, to_iso
from hippo.config import DEFAULT_ANN_THRESHOLD
from hippo.errors import EmbedderMismatch, StorageError
from hippo.stores.base import UNCHANGED, ChunkFilter, StoreCapabilities, StrengthUpdate
from hippo.stores.neighbours import nearest_runs
from hippo.stores.retrievals import DEFAULT_DELAY, RetrievalQueue
from hippo.stores.sqlite.bm25 import Bm25
from hippo.stores.sqlite.capture import CaptureMixin
from hippo.stores.sqlite.conversation import has_messages_table, search_messages
from hippo.stores.sqlite.curation import CurationMixin
from hippo.stores.sqlite.experiences import ExperienceMixin
from hippo.stores.sqlite.filters import filter_sql
from hippo.stores.sqlite.fts import drop_deleted_terms, rebuild_grown
from hippo.stores.sqlite.index.cache import VectorCache
from hippo.stores.sqlite.keys import KeyMixin
from hippo.stores.sqlite.merges import MergeMixin
from hippo.stores.sqlite.schema import migrate
from hippo.stores.sqlite.scrub import Scrubber
from hippo.stores.sqlite.search import SearchMixin, match_expression
from hippo.stores.sqlite.summary import SummaryMixin, count_retrievals, register_math
from hippo.stores.sqlite.supersets import Supersets
from hippo.stores.sqlite.windows import split, write_windows
from hippo.stores.vectors import encode_vector
from hippo.types import Block, Chunk, ConversationHit

__all__ = ["SQLiteStore"]

_CHUNK_COLUMNS = (
    "id, agent_id, content, content_hash, metadata, kind, running_intensity, encounter_count, "
    "access_count, last_accessed_at, superseded_by, created_at, observed_at, embedding IS NOT NULL, "
    "feedback, reinforced_at, source, session_id"
)


def _row_to_chunk(row: tuple) -> Chunk:
    return Chunk(
        id=row[0],
        agent_id=row[1],
        content=row[2],
        content_hash=row[3],
        metadata=json.loads(row[4]) if row[4] else {},
        kind=row[5],
        running_intensity=row[6],
        encounter_count=row[7],
        access_count=row[8],
        last_accessed_at=from_iso(row[9]),
        superseded_by=row[10],
        created_at=from_iso(row[11]),
        observed_at=from_iso(row[12]) if row[12] else None,
        has_vector=bool(row[13]),
        feedback=row[14],
        reinforced_at=from_iso(row[15]) if row[15] else None,
        source=row[16],
        session_id=row[17],
    )


# Reads through a memory map where the platform has one that SQLite trusts (not Windows, where a
# mapped file cannot shrink): a search reads a few dozen rows at random, and each read that copies a
# page in costs ~20 µs on a slow machine against a mapped page's few (~1 ms of a recall at 100k).
# Writes still go through the file. The mapped pages count in the process's resident memory; they
# are the page cache's, shared and given back under pressure.
_MMAP_SIZE = 0 if os.name == "nt" else 1 << 31  # SQLite caps it at its own largest (2 GB)
_PRAGMAS = ("journal_mode=WAL", "busy_timeout=5000", "secure_delete=ON", "synchronous=NORMAL",
            f"mmap_size={_MMAP_SIZE}")


def _marks(n: int) -> str:
    return ",".join("?" * n)


class SQLiteStore(SearchMixin, CurationMixin, ExperienceMixin, CaptureMixin, SummaryMixin, KeyMixin, MergeMixin):
    """A :class:`hippo.stores.base.Store` over one SQLite file.

    One connection per store, guarded by a lock so a store can be shared by
    threads. Every connection runs WAL, ``busy_timeout=5000`` and
    ``secure_delete`` (and reads through a memory map: ``_MMAP_SIZE``); every write is one
    ``BEGIN IMMEDIATE`` transaction.
    """

    capabilities = StoreCapabilities(supports_ann=False, secure_delete=True, conversation=True)
    _chunk_of = staticmethod(_row_to_chunk)

    def __init__(self, path: str | Path, *, ann_threshold: int | None = DEFAULT_ANN_THRESHOLD,
                 retrieval_delay: float = DEFAULT_DELAY) -> None:
        self.path = str(path)
        self.location = self.path
        try:
            self._conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=5.0)
            for pragma in _PRAGMAS:
                self._conn.execute(f"PRAGMA {pragma}")
            migrate(self._conn)
            register_math(self._conn)
            self._fts_rebuilt = rebuild_grown(self._conn)
        except sqlite3.Error as exc:
            raise StorageError(f"cannot open database {self.path}: {exc}") from exc
        self._lock = threading.RLock()
        self._depth = 0
        self._after_commit: list[Callable[[], object]] = []
        # Absolute: the files beside the database and the identity check must not follow a chdir.
        plain = self.path not in ("", ":memory:") and not self.path.startswith("file:")
        self._file = os.path.abspath(self.path) if plain else self.path
        self._vectors = VectorCache(self._conn, self._file, ann_threshold=ann_threshold)
        self._scrub = Scrubber(self._file)
        self._scrub.at_open()
        self._identity = _identity(self._file)
        self._bm25 = Bm25(self._conn)
        self._kept: dict[tuple[Any, ...], Any] = {}  # see _kept_now
        self._supersets = Supersets()  # see FilteredSearch._narrowed
        self._kept_state: tuple[int, int] | None = None
        self.retrievals = RetrievalQueue(self, delay=retrieval_delay, writer=self._lock,
                                         in_write=lambda: self._depth > 0)

    # -- plumbing ---------------------------------------------------------

    def close(self) -> None:
        self.retrievals.close()
        self._scrub.close()
        with self._lock:
            self._vectors.close()  # saves ANN indexes that changed since they were loaded
            self._bm25.close()
            self._conn.close()

    @contextmanager
    def _reading(self, agent_id: str | None = None, *, bookkeeping: bool = True) -> Iterator[sqlite3.Connection]:
        """The connection for a read, once the recalls' queued bookkeeping it must see is written:
        ``agent_id``'s, or every agent's for a read of no one agent (none for a read of rows the
        bookkeeping never writes, ``bookkeeping=False``; see PostgresStore._read)."""
        if bookkeeping:
            self.retrievals.before_read(agent_id)
        with self._lock:
            try:
                yield self._conn
            except sqlite3.Error as exc:
                raise StorageError(f"database error: {exc}") from exc

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self._lock:
            if self._depth:
                self._depth += 1
                try:
                    yield
                finally:
                    self._depth -= 1
                return
            self._begin()
            self._depth = 1
            try:
                yield
                self._vectors.before_commit()
                self._conn.execute("COMMIT")
            except BaseException as exc:
                self._rollback()
                if isinstance(exc, sqlite3.Error):
                    raise StorageError(f"database error: {exc}") from exc
                raise
            finally:
                self._depth = 0
            self._vectors.commit()
            hooks, self._after_commit = self._after_commit, []
            for hook in hooks:
                hook()

    def _begin(self) -> None:
        self._check_file()
        try:
            self._conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise StorageError(f"cannot start a write: {exc}") from exc
        if not self._fts_rebuilt:  # skipped at open (fts.py): before this write touches the index
            self._fts_rebuilt = rebuild_grown(self._conn)
        self._vectors.begin()

    def _check_file(self) -> None:
        """Refuse to write into a file that was deleted or replaced under us: the write would
        succeed into an unlinked inode and be lost when the connection closes."""
        if self._identity is None:
            return
        try:
            found = os.stat(self._file)
            same = (found.st_dev, found.st_ino) == self._identity
        except OSError:
            same = False
        if not same:
            raise StorageError(f"the database file {self.path} was deleted or replaced while hippo had it open; "
                               "nothing was written. Restore the file, or restart hippo to start a new one")

    def _rollback(self) -> None:
        self._vectors.rollback()
        self._after_commit.clear()
        self._kept_state = None  # what a search kept inside the transaction: a rollback moves no counter
        try:
            self._conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass  # SQLite already rolled back (e.g. after SQLITE_FULL)

    # -- embedding model record ----------------------------------------------

    def embedder_record(self) -> tuple[str, int | None] | None:
        with self._reading(bookkeeping=False) as conn:
            row = conn.execute("SELECT model_id, dimension FROM embedding_model WHERE id = 1").fetchone()
        return (row[0], row[1]) if row else None

    def set_embedder_record(self, model_id: str, dimension: int | None) -> None:
        with self.transaction():
            self._conn.execute(
                "INSERT INTO embedding_model(id, model_id, dimension, recorded_at) "
                "VALUES (1, ?, ?, datetime('now')) ON CONFLICT(id) DO UPDATE SET "
                "model_id = excluded.model_id, dimension = excluded.dimension, recorded_at = excluded.recorded_at",
                (model_id, dimension),
            )

    # -- chunks ---------------------------------------------------------------

    def memories_by_hash(self, agent_id: str, hashes: Sequence[str]) -> dict[str, Chunk]:
        if not hashes:
            return {}
        with self._reading(agent_id) as conn:
            rows = conn.execute(
                # Named: the planner otherwise picks (agent_id, kind) and walks every memory of the
                # agent (590 ms for 1,000 hashes at 100k rows; 14 ms through this index).
                f"SELECT {_CHUNK_COLUMNS} FROM chunks INDEXED BY idx_chunks_memory_dedup "
                f"WHERE agent_id = ? AND kind = 'memory' AND content_hash IN ({_marks(len(hashes))})",
                (agent_id, *hashes),
            ).fetchall()
        return {chunk.content_hash: chunk for chunk in map(_row_to_chunk, rows)}  # type: ignore[misc]

    def _check_dimension(self, vectors: Iterable[np.ndarray | None]) -> None:
        """Inside the write: refuse vectors whose size is not the recorded model's (e.g. from a
        Memory left open while ``hippo.reembed`` switched the database to another model)."""
        sizes = {np.shape(v)[-1] for v in vectors if v is not None}
        row = self._conn.execute("SELECT model_id, dimension FROM embedding_model WHERE id = 1").fetchone()
        if sizes and row is not None and row[1] is not None and sizes != {row[1]}:
            raise EmbedderMismatch(
                f"this database's vectors are made with {row[0]} (dimension {row[1]}), refusing vectors of "
                f"dimension {', '.join(map(str, sorted(sizes)))}; reopen it with embedder={row[0]!r} "
                "or switch models with hippo.reembed()"
            )

    def insert_chunks(self, agent_id: str, chunks: Sequence[Chunk], vectors: Sequence[np.ndarray | None]) -> None:
        with self.transaction():
            self._check_dimension(vectors)
            for chunk, vector in zip(chunks, vectors):
                cur = self._conn.execute(
                    "INSERT INTO chunks(id, agent_id, content, content_hash, embedding, metadata, kind, "
                    "running_intensity, encounter_count, access_count, last_accessed_at, superseded_by, "
                    "created_at, observed_at, feedback, reinforced_at, source, session_id) "
                    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (
                        chunk.id, agent_id, chunk.content, chunk.content_hash,
                        encode_vector(split(vector)[0]) if vector is not None else None,
                        json.dumps(chunk.metadata, ensure_ascii=False) if chunk.metadata else None,
                        chunk.kind, chunk.running_intensity, chunk.encounter_count, chunk.access_count,
                        to_iso(chunk.last_accessed_at), chunk.superseded_by, to_iso(chunk.created_at),
                        to_iso(chunk.observed_at) if chunk.observed_at else None,
                        chunk.feedback, to_iso(chunk.reinforced_at) if chunk.reinforced_at else None,
                        chunk.source, chunk.session_id,
                    ),
                )
                if vector is not None:
                    write_windows(self._conn, cur.lastrowid or 0, vector)  # an INSERT always has a rowid
                if vector is not None and chunk.superseded_by is None:
                    self._vectors.stage_add(agent_id, cur.lastrowid or 0, vector)
                else:
                    self._vectors.stage_touch(agent_id)

    def update_strength(self, agent_id: str, updates: Sequence[StrengthUpdate]) -> None:
        if not updates:
            return
        with self.transaction():
            self._conn.executemany(
                "UPDATE chunks SET running_intensity = ?, encounter_count = ?, access_count = ?, "
                "last_accessed_at = ? WHERE agent_id = ? AND id = ?",
                [
                    (u.running_intensity, u.encounter_count, u.access_count, to_iso(u.last_accessed_at), agent_id, u.id)
                    for u in updates
                ],
            )

    def record_retrievals(self, agent_id: str, ids: Sequence[str], now: datetime, *, boost: float) -> None:
        if not ids:
            return
        with self.transaction():
            retrieved = self._conn.execute(
                "UPDATE chunks SET access_count = access_count + 1, last_accessed_at = ?, "
                "running_intensity = min(1.0, running_intensity + ?) "
                f"WHERE +agent_id = ? AND id IN ({_marks(len(ids))})",
                (to_iso(now), boost, agent_id, *ids),
            ).rowcount
            count_retrievals(self._conn, agent_id, now, retrieved)

    def supersede(self, agent_id: str, old_ids: Sequence[str], new_id: str) -> list[str]:
        if not old_ids:
            return []
        with self.transaction():
            rows = self._conn.execute(
                f"UPDATE chunks SET superseded_by = ? WHERE +agent_id = ? AND superseded_by IS NULL "
                f"AND id IN ({_marks(len(old_ids))}) RETURNING rowid, id",
                (new_id, agent_id, *old_ids),
            ).fetchall()
            self._vectors.stage_remove(agent_id, [r[0] for r in rows])
        return [r[1] for r in rows]

    def superseded_by(self, agent_id: str, chunk_id: str) -> list[Chunk]:
        with self._reading(agent_id) as conn:
            rows = conn.execute(
                f"SELECT {_CHUNK_COLUMNS} FROM chunks WHERE agent_id = ? AND superseded_by = ? ORDER BY created_at",
                (agent_id, chunk_id),
            ).fetchall()
        return [_row_to_chunk(r) for r in rows]

    def set_vectors(self, agent_id: str, vectors: dict[str, np.ndarray]) -> None:
        with self.transaction():
            self._check_dimension(vectors.values())
            for chunk_id, vector in vectors.items():
                row = self._conn.execute(
                    "UPDATE chunks SET embedding = ? WHERE agent_id = ? AND id = ? RETURNING rowid, superseded_by",
                    (encode_vector(split(vector)[0]), agent_id, chunk_id),
                ).fetchone()
                if row:
                    write_windows(self._conn, row[0], vector)  # the trigger took the old ones
                if row and row[1] is None:
                    self._vectors.stage_add(agent_id, row[0], vector)

    def get_chunks(self, agent_id: str, ids: Sequence[str]) -> list[Chunk]:
        return self._rows_by_id(agent_id, ids, _CHUNK_COLUMNS, _row_to_chunk)

    def lengths(self, agent_id: str, ids: Sequence[str]) -> dict[str, int]:
        return dict(self._rows_by_id(agent_id, ids, "id, length(content)", tuple))

    def _rows_by_id(self, agent_id: str, ids: Sequence[str], columns: str, convert: Callable[[tuple], Any]) -> list:
        """``columns`` of the agent's rows among ``ids``, converted, in the order of ``ids``."""
        if not ids:
            return []
        with self._reading(agent_id) as conn:
            rows = conn.execute(
                f"SELECT {columns} FROM chunks WHERE +agent_id = ? AND id IN ({_marks(len(ids))})", (agent_id, *ids)
            ).fetchall()
        by_id = {row[0]: convert(row) for row in rows}
        return [by_id[i] for i in ids if i in by_id]

    def neighbours(
        self, agent_id: str, ids: Sequence[str], reach: int, where: ChunkFilter
    ) -> dict[str, list[tuple[str, int]]]:
        if not ids:
            return {}
        condition, params = filter_sql(where)
        with self._reading(agent_id) as conn:
            seeds = dict(conn.execute(
                f"SELECT id, session_id FROM chunks WHERE +agent_id = ? AND kind = 'memory' "
                f"AND id IN ({_marks(len(ids))})", (agent_id, *ids)).fetchall())
            in_session = [seed for seed, session in seeds.items() if session is not None]
            if not in_session:
                return {seed: [] for seed in seeds}
            # Both sides of every seed in one statement: a seek on (agent_id, session_id, kind, id) each.
            side = (f"SELECT * FROM (SELECT ?, c.id, {condition} FROM chunks c INDEXED BY idx_chunks_session "
                    "WHERE c.agent_id = ? AND c.session_id = ? AND c.kind = 'memory' AND c.id {} ? "
                    "ORDER BY c.id {} LIMIT ?)")
            parts, values = [], []
            for seed in in_session:
                for sign, order in (("<", "DESC"), (">", "ASC")):
                    parts.append(side.format(sign, order))
                    values += [seed, *params, agent_id, seeds[seed], seed, reach]
            rows = conn.execute(" UNION ALL ".join(parts), values).fetchall()
        return nearest_runs(seeds, rows)

    def holds_nothing(self) -> bool:
        """No chunk, block or API key of any agent."""
        with self._reading() as conn:
            return not conn.execute("SELECT EXISTS(SELECT 1 FROM chunks) OR EXISTS(SELECT 1 FROM memory_blocks) "
                                    "OR EXISTS(SELECT 1 FROM api_keys)").fetchone()[0]

    def size_bytes(self) -> int:
        """The database file and its WAL, in bytes."""
        return sum(os.path.getsize(p) for p in (self.path, self.path + "-wal") if os.path.exists(p))

    def list_chunks(
        self, agent_id: str, *, limit: int, before: str | None = None, kind: str | None = None
    ) -> list[Chunk]:
        """Newest first (ULIDs sort by time), superseded facts included; ``before`` is the last id seen.
        Each kind walks the (agent, kind, id) index backwards and the two runs merge: one ordered scan
        of the agent's rows would sort all of them first (240 ms at 100k, against 5)."""
        branch = f"SELECT * FROM (SELECT {_CHUNK_COLUMNS} FROM chunks WHERE agent_id = ? AND kind = ?"
        branch += " AND id < ?" if before is not None else ""
        branch += " ORDER BY id DESC LIMIT ?)"
        kinds = [kind] if kind is not None else ["fact", "memory"]
        params: list[Any] = []
        for name in kinds:
            params += [agent_id, name, *([before] if before is not None else []), limit]
        with self._reading(agent_id) as conn:
            rows = conn.execute(" UNION ALL ".join([branch] * len(kinds)) + " ORDER BY 1 DESC LIMIT ?",
                                (*params, limit)).fetchall()
        return [_row_to_chunk(r) for r in rows]

    def update_metadata(self, agent_id: str, chunk_id: str, metadata: dict[str, Any]) -> bool:
        with self.transaction():
            cur = self._conn.execute("UPDATE chunks SET metadata = ? WHERE agent_id = ? AND id = ?",
                                     (json.dumps(metadata, ensure_ascii=False), agent_id, chunk_id))
        return cur.rowcount > 0

    def agent_ids(self, prefix: str) -> list[str]:
        # A range on the leading column of an index (LIKE would need escaping and case rules).
        sql, params = "SELECT DISTINCT agent_id FROM chunks WHERE agent_id >= ?", [prefix]
        if prefix:
            sql, params = sql + " AND agent_id < ?", [prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1)]
        with self._reading() as conn:
            return [row[0] for row in conn.execute(sql + " ORDER BY agent_id", params)]

    def known_ids(self, agent_id: str, ids: Sequence[str]) -> dict[str, bool]:
        if not ids:
            return {}
        with self._reading(agent_id) as conn:
            rows = conn.execute(f"SELECT id, agent_id = ? FROM chunks WHERE id IN ({_marks(len(ids))})",
                                (agent_id, *ids)).fetchall()
        return {row[0]: bool(row[1]) for row in rows}

    def counts(self, agent_id: str) -> dict[str, int]:
        """Live facts, superseded facts, memories, pending vectors and blocks of one agent."""
        # Each count from an index (kinds, superseded facts, pending vectors: a partial index), never
        # the rows, which carry text and vectors: a scan of them took 75 ms at 100k.
        with self._reading(agent_id) as conn:
            kinds = dict(conn.execute("SELECT kind, count(*) FROM chunks WHERE agent_id = ? GROUP BY kind",
                                      (agent_id,)).fetchall())
            superseded = conn.execute("SELECT count(*) FROM chunks INDEXED BY idx_chunks_summary WHERE agent_id = ? "
                                      "AND superseded_by IS NOT NULL", (agent_id,)).fetchone()[0]
            pending = conn.execute("SELECT count(*) FROM chunks WHERE agent_id = ? AND embedding IS NULL",
                                   (agent_id,)).fetchone()[0]
            blocks = conn.execute("SELECT count(*) FROM memory_blocks WHERE agent_id = ?", (agent_id,)).fetchone()
            lived = conn.execute("SELECT count(*) FROM experiences INDEXED BY idx_experiences_importance_chunk "
                                 "WHERE agent_id = ? AND chunk IS NOT NULL", (agent_id,)).fetchone()  # held
        facts = kinds.get("fact", 0)
        return {"facts": facts - superseded, "superseded_facts": superseded, "memories": kinds.get("memory", 0),
                "pending_vectors": pending, "blocks": blocks[0], "experiences": lived[0]}

    def delete_chunks(self, agent_id: str, ids: Sequence[str]) -> int:
        if not ids:
            return 0
        with self.transaction():
            self._release_sources("chunks", agent_id, ids)
            rows = self._conn.execute(
                f"DELETE FROM chunks WHERE +agent_id = ? AND id IN ({_marks(len(ids))}) RETURNING rowid",
                (agent_id, *ids),
            ).fetchall()
            if rows:
                self._text_removed(agent_id, [r[0] for r in rows])
        return len(rows)

    def _text_removed(self, agent_id: str, rowids: list[int]) -> None:
        """Inside a write that deleted or rewrote these rows: their vectors leave the index (and the
        saved ANN files), FTS5 rewrites its index without their terms (it only marks them deleted;
        secure_delete zeroes the pages it frees), and the WAL is scrubbed after the commit."""
        self._vectors.stage_remove(agent_id, rowids, forget=True)
        drop_deleted_terms(self._conn, "chunks_fts")
        self._after_commit.append(self._scrub.after_delete)  # see scrub.py: never waits on readers

    def add_feedback(self, agent_id: str, chunk_id: str, delta: int, reinforced_at: datetime | None) -> bool:
        with self.transaction():
            return self._conn.execute(
                "UPDATE chunks SET feedback = feedback + ?, reinforced_at = COALESCE(?, reinforced_at) "
                "WHERE agent_id = ? AND id = ?",
                (delta, to_iso(reinforced_at) if reinforced_at else None, agent_id, chunk_id)).rowcount > 0

    def update_content(self, agent_id: str, chunk_id: str, content: str, content_hash: str,
                       vector: np.ndarray | None, now: datetime) -> bool:
        with self.transaction():
            if vector is not None:
                self._check_dimension([vector])
            self._release_sources("chunks", agent_id, [chunk_id])
            row = self._conn.execute(
                "UPDATE chunks SET content = ?, content_hash = ?, embedding = ?, last_accessed_at = ? "
                "WHERE agent_id = ? AND id = ? RETURNING rowid, superseded_by",
                (content, content_hash, None if vector is None else encode_vector(split(vector)[0]), to_iso(now),
                 agent_id, chunk_id),
            ).fetchone()
            if row is None:
                return False
            self._text_removed(agent_id, [row[0]])  # the triggers reindexed the row, took its old windows
            if vector is not None:
                write_windows(self._conn, row[0], vector)
            if vector is not None and row[1] is None:
                self._vectors.stage_add(agent_id, row[0], vector)
        return True

    def delete_agent(self, agent_id: str) -> dict[str, int]:
        with self.transaction():
            rows = self._conn.execute("DELETE FROM chunks WHERE agent_id = ? RETURNING rowid, kind",
                                      (agent_id,)).fetchall()
            blocks = self._conn.execute("DELETE FROM memory_blocks WHERE agent_id = ?", (agent_id,)).rowcount
            short_term = self._erase_experiences(agent_id)
            inbox = self._erase_capture(agent_id)
            self._erase_daily(agent_id)
            archived = self._conn.execute("SELECT id FROM chunks_archive WHERE agent_id = ?", (agent_id,)).fetchall()
            self._delete_archived(agent_id, [r[0] for r in archived])
            if rows:
                self._text_removed(agent_id, [r[0] for r in rows])
            elif blocks or short_term or inbox:
                self._after_commit.append(self._scrub.after_delete)
        return {"memories": sum(r[1] == "memory" for r in rows) + len(archived),
                "facts": sum(r[1] == "fact" for r in rows), "blocks": blocks, "short_term": short_term}

    def scrub(self) -> None:
        """Try the checkpoint that removes deleted text from the WAL now (it also runs by itself)."""
        if self._scrub.pending:
            self._scrub.try_now()

    def pending_scrub(self) -> str | None:
        if not self._scrub.pending:
            return None
        return self._scrub.reason or "the write-ahead log is being checkpointed"

    def pending_vectors(self, agent_id: str | None, limit: int) -> list[tuple[str, str, str]]:
        sql = "SELECT agent_id, id, content FROM chunks WHERE embedding IS NULL"
        params: tuple = ()
        if agent_id is not None:
            sql, params = sql + " AND agent_id = ?", (agent_id,)
        with self._reading() as conn:
            return conn.execute(sql + " ORDER BY rowid LIMIT ?", (*params, limit)).fetchall()

    def count_pending(self, agent_id: str | None) -> int:
        sql = "SELECT count(*) FROM chunks WHERE embedding IS NULL"
        params: tuple = ()
        if agent_id is not None:
            sql, params = sql + " AND agent_id = ?", (agent_id,)
        with self._reading() as conn:
            return conn.execute(sql, params).fetchone()[0]

    def clear_vectors(self) -> None:
        with self.transaction():
            self._conn.execute("UPDATE chunks SET embedding = NULL WHERE embedding IS NOT NULL")
            self._vectors.stage_clear()

    # -- memory blocks ------------------------------------------------------

    def get_block(self, agent_id: str, key: str) -> Block | None:
        with self._reading(agent_id) as conn:
            row = conn.execute(
                "SELECT key, value, updated_at, char_limit FROM memory_blocks WHERE agent_id = ? AND key = ?",
                (agent_id, key),
            ).fetchone()
        return Block(row[0], row[1], from_iso(row[2]), row[3]) if row else None

    def put_block(self, agent_id: str, key: str, value: str, now: datetime, *, char_limit: Any = UNCHANGED) -> Block:
        with self.transaction():
            if char_limit is UNCHANGED:
                self._conn.execute(
                    "INSERT INTO memory_blocks(agent_id, key, value, updated_at) VALUES (?,?,?,?) "
                    "ON CONFLICT(agent_id, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
                    (agent_id, key, value, to_iso(now)),
                )
            else:
                self._conn.execute(
                    "INSERT INTO memory_blocks(agent_id, key, value, updated_at, char_limit) VALUES (?,?,?,?,?) "
                    "ON CONFLICT(agent_id, key) DO UPDATE SET value = excluded.value, "
                    "updated_at = excluded.updated_at, char_limit = excluded.char_limit",
                    (agent_id, key, value, to_iso(now), char_limit),
                )
            block = self.get_block(agent_id, key)
        assert block is not None
        return block

    def list_blocks(self, agent_id: str) -> list[Block]:
        with self._reading(agent_id) as conn:
            rows = conn.execute(
                "SELECT key, value, updated_at, char_limit FROM memory_blocks WHERE agent_id = ? ORDER BY key",
                (agent_id,),
            ).fetchall()
        return [Block(r[0], r[1], from_iso(r[2]), r[3]) for r in rows]

    # -- conversation -------------------------------------------------------

    def has_messages_table(self, table: str) -> bool:
        with self._reading() as conn:
            return has_messages_table(conn, table)

    def search_messages(self, agent_id: str, table: str, terms: Sequence[str], limit: int) -> list[ConversationHit]:
        match = match_expression(terms)
        if match is None:
            return []
        with self._reading(agent_id) as conn:
            return search_messages(conn, agent_id, table, match, limit)


def _identity(path: str) -> tuple[int, int] | None:
    """The file's (device, inode), None for an in-memory database."""
    if path in ("", ":memory:") or path.startswith("file:"):
        return None
    found = os.stat(path)
    return found.st_dev, found.st_ino
