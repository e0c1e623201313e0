"""The scale-out store: PostgreSQL with pgvector, shared by any number of ``hippo serve`` processes.

Behaviour equals the SQLite store's (one contract suite runs against both), and what the two
write alike is written once (``stores/sql``); what differs is where state lives. Everything is in
the database: chunks, blocks, API keys, the embedding model record. A process keeps nothing another
process would need to see, so any server answers any request. Writes are serialised per agent
(``connection.py``), not per database.

Forgetting: a hard delete removes the rows in its transaction, and from then on no query of any
server returns the text. PostgreSQL keeps the bytes of deleted rows in the table and index files
until their pages are rewritten, and in its write-ahead log until segments are recycled (and in
replicas and backups, which are the operator's). ``scrub()`` (``hippo scrub``) rewrites the
tables with ``VACUUM FULL``, after which the table and index files no longer hold the text; WAL
recycling is PostgreSQL's. ``pending_scrub`` says so after every delete, until a scrub ran.
"""

from __future__ import annotations

import json
import time
from datetime import datetime
from typing import Any, Sequence

import numpy as np

from hippo.core.ports import SchemaVersion, StoreCapabilities
from hippo.core.ports.database import BackupResult, CheckReport, Progress
from hippo.errors import ConfigError
from hippo.stores.audit import KEYS_CHAIN, audit_time
from hippo.stores.names import shown
from hippo.stores.postgres.checks import backup_advice, remnant_states
from hippo.stores.postgres.checks import check as check_database
from hippo.stores.postgres.connection import Connections, storage_errors
from hippo.stores.postgres.conversation import MESSAGES
from hippo.stores.postgres.curation import Curation
from hippo.stores.postgres.schema import MIGRATIONS, migrate, vector_index
from hippo.stores.postgres.search import SearchMixin
from hippo.stores.postgres.strength import CHUNKS, insert_counters
from hippo.stores.postgres.summary import Summary
from hippo.stores.postgres.windows import write_windows
from hippo.stores.retrievals import DEFAULT_DELAY, RetrievalQueue
from hippo.stores.sql.database import fetch
from hippo.stores.sql.dialect import POSTGRES
from hippo.stores.sql.rows import chunk_columns, chunk_of
from hippo.stores.sql.store import Rewrite, SqlStore
from hippo.stores.vectors import split
from hippo.trust import PlaceCheck
from hippo.types import Chunk

__all__ = ["PostgresStore"]

# The tables that hold text, rewritten by a scrub.
_SCRUBBED = ("chunk_rows", "chunk_words", "chunk_windows", "chunks_archive", "memory_blocks", "short_term",
             "experiences", "observed_messages", "session_items", "fact_merges")
_NOT_SCRUBBED = ("deleted: no query returns it; PostgreSQL keeps the bytes in its files until `hippo scrub` "
                 "(VACUUM FULL) rewrites the tables, and in its write-ahead log until the log is recycled")
SCRUB_WAIT = 30.0  # seconds scrub waits for older transactions before it reports that it could not
_CHUNK_COLUMNS = chunk_columns(POSTGRES)


class PostgresStore(SqlStore, SearchMixin, Curation, Summary):
    """A :class:`hippo.core.ports.Store` over a PostgreSQL database with the pgvector extension."""

    capabilities = StoreCapabilities(supports_ann=True, secure_delete=False, conversation=True, shared=True)
    db: Connections
    messages = MESSAGES

    def __init__(self, url: str, *, ann_threshold: int | None = 50_000, pool_size: int = 10,
                 retrieval_delay: float = DEFAULT_DELAY) -> None:
        import psycopg

        self.location = shown(url)
        self.ann_threshold = ann_threshold
        with storage_errors(f"cannot open {self.location}"), psycopg.connect(url, autocommit=True) as conn:
            migrate(conn)
        self.db = Connections(url, max_size=pool_size)
        self._unscrubbed = False
        self._scrub_blocked: str | None = None
        self._counts: dict[str, tuple[float, int, int, int]] = {}
        self._words: dict[tuple[str, str], tuple[float, int]] = {}
        self._table_rows: tuple[float, float] | None = None
        self._indexed = False  # whether this process has seen the HNSW index built (search.py)
        self._search_threads = None  # a search's keyword side runs beside its vector side (search.py)
        self._shares: dict[tuple[str, str, str], tuple[float, int]] = {}  # what walks found per filter (search.py)
        self._queue_retrievals(RetrievalQueue(self, delay=retrieval_delay, in_write=lambda: self.db.in_transaction,
                                              transaction=lambda: self.db.transaction(durable=False)))
        self.db.on_deleted = self._deleted

    def close_search(self) -> None:
        if self._search_threads is not None:
            self._search_threads.shutdown()

    def _recording_embedder(self, conn: Any) -> None:
        conn.execute("SELECT pg_advisory_xact_lock(hashtextextended('hippo:model', 1))")

    def _embedder_recorded(self, conn: Any, dimension: int | None) -> None:
        vector_index(conn, dimension, create=False)  # a new model's graph: built when an agent needs it

    # -- chunks and their vectors ------------------------------------------------

    def _write_chunks(self, conn: Any, agent_id: str, chunks: Sequence[Chunk],
                      vectors: Sequence[np.ndarray | None]) -> None:
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO chunk_rows (id, agent_id, content, content_hash, embedding, metadata, kind, "
                "superseded_by, created_at, observed_at, feedback, reinforced_at, source, session_id) "
                "VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
                [(c.id, agent_id, c.content, c.content_hash, None if v is None else split(v)[0],
                  json.dumps(c.metadata or {}, ensure_ascii=False), c.kind, c.superseded_by, c.created_at,
                  c.observed_at, c.feedback, c.reinforced_at, c.source, c.session_id)
                 for c, v in zip(chunks, vectors)])
            insert_counters(cur, agent_id, [(c.id, c.running_intensity, c.encounter_count, c.access_count,
                                             c.last_accessed_at) for c in chunks])
            write_windows(cur, agent_id, [(c.id, v) for c, v in zip(chunks, vectors)])

    def _chunks_inserted(self, agent_id: str) -> None:
        self._counts.pop(agent_id, None)

    def _write_vectors(self, conn: Any, agent_id: str, vectors: dict[str, np.ndarray]) -> None:
        with conn.cursor() as cur:
            cur.executemany("UPDATE chunk_rows SET embedding = %s WHERE agent_id = %s AND id = %s",
                            [(split(v)[0], agent_id, i) for i, v in vectors.items()])
            # The trigger took the old windows; only chunks of this agent get new ones.
            mine = {r[0] for r in cur.execute("SELECT id FROM chunk_rows WHERE agent_id = %s AND id = ANY(%s)",
                                              (agent_id, list(vectors))).fetchall()}
            if write_windows(cur, agent_id, [(i, v) for i, v in vectors.items() if i in mine]):
                self._counts.pop(agent_id, None)

    def _rewrite_chunk(self, conn: Any, agent_id: str, rewrite: Rewrite) -> int:
        count = conn.execute("UPDATE chunk_rows SET content = %s, content_hash = %s, embedding = %s "
                             "WHERE agent_id = %s AND id = %s",
                             (rewrite.content, rewrite.content_hash,
                              None if rewrite.vector is None else split(rewrite.vector)[0], agent_id,
                              rewrite.chunk_id)).rowcount
        conn.execute("UPDATE chunk_strength SET last_accessed_at = %s WHERE agent_id = %s AND id = %s",
                     (rewrite.now, agent_id, rewrite.chunk_id))
        if count:  # the trigger took the old text's windows
            with conn.cursor() as cur:
                write_windows(cur, agent_id, [(rewrite.chunk_id, rewrite.vector)])
        return int(count)

    def _chunk_rewritten(self, agent_id: str, count: int) -> None:
        self._deleted(agent_id, count)

    def _restored(self, agent_id: str) -> None:
        self.db.text_deleted(agent_id, 0)  # its counts change: nothing was forgotten

    # -- listings ---------------------------------------------------------------

    def list_chunks(self, agent_id: str, *, limit: int, before: str | None = None,
                    kind: str | None = None) -> list[Chunk]:
        sql, params = f"SELECT {_CHUNK_COLUMNS} FROM {CHUNKS} WHERE c.agent_id = ?", [agent_id]
        if before is not None:
            sql, params = sql + " AND c.id < ?", [*params, before]
        if kind is not None:
            sql, params = sql + " AND c.kind = ?", [*params, kind]
        rows = fetch(self.db, agent_id, sql + " ORDER BY c.id DESC LIMIT ?", (*params, limit))
        return [chunk_of(POSTGRES, r) for r in rows]

    def agent_ids(self, prefix: str) -> list[str]:
        rows = fetch(self.db, None, "SELECT DISTINCT agent_id FROM chunk_rows WHERE starts_with(agent_id, ?) "
                     "ORDER BY agent_id", (prefix,))
        return [r[0] for r in rows]

    def size_bytes(self) -> int:
        return int(fetch(self.db, None, "SELECT pg_database_size(current_database())")[0][0])

    def counts(self, agent_id: str) -> dict[str, int]:
        [row] = fetch(
            self.db, agent_id, "SELECT count(*) FILTER (WHERE kind = 'fact' AND superseded_by IS NULL), "
            "count(*) FILTER (WHERE kind = 'fact' AND superseded_by IS NOT NULL), "
            "count(*) FILTER (WHERE kind = 'memory'), count(*) FILTER (WHERE embedding IS NULL), "
            "(SELECT count(*) FROM memory_blocks WHERE agent_id = ?), (SELECT count(*) FROM experiences e "
            "JOIN chunk_rows x ON x.id = e.id WHERE e.agent_id = ?) FROM chunk_rows WHERE agent_id = ?",
            (agent_id, agent_id, agent_id))
        return {"facts": row[0], "superseded_facts": row[1], "memories": row[2], "pending_vectors": row[3],
                "blocks": row[4], "experiences": row[5]}

    def schema_version(self) -> SchemaVersion:
        [row] = fetch(self.db, None, "SELECT coalesce(max(number), 0) FROM hippo_migrations", bookkeeping=False)
        return SchemaVersion(int(row[0]), len(MIGRATIONS))

    # -- upkeep: backup and check (checks.py) ------------------------------------

    def backup(self, path: str, *, overwrite: bool = False, progress: Progress | None = None) -> BackupResult:
        raise ConfigError(backup_advice(self.location, path))

    def check(self) -> CheckReport:
        with self.db.connection() as conn:
            return check_database(conn, self.location)

    # -- a receipt's places: the words table's and windows' ids, the dead rows ----

    _extra_ids = (("full-text index", "chunk_words", ("id",)), ("vectors", "chunk_windows", ("chunk_id",)))
    _log_place = "dead rows"

    def _index_states(self, conn: Any, agent_id: str) -> list[PlaceCheck]:
        return remnant_states(conn)

    def _log_since(self, since: datetime) -> PlaceCheck:
        """Whether the tables were rewritten since the delete (at ``since``), so that their files no
        longer hold the deleted rows' bytes: each scrub leaves an audit record."""
        [row] = fetch(self.db, None, "SELECT max(at) FROM audit_records WHERE agent_id = ? AND operation = 'scrub'",
                      (KEYS_CHAIN,), bookkeeping=False)
        if row[0] is not None and str(row[0]) >= audit_time(since):
            return PlaceCheck("dead rows", True, f"the tables were rewritten by hippo scrub at {row[0]}")
        return PlaceCheck("dead rows", False, "deleted: no query returns it; PostgreSQL keeps the bytes in its files "
                                              "until `hippo scrub` rewrites them, and none has run since")

    # -- scrubbing --------------------------------------------------------------

    def _deleted(self, agent_id: str, count: int) -> None:
        self._counts.pop(agent_id, None)
        for key in [k for k in list(self._words) if k[0] == agent_id]:
            self._words.pop(key, None)
        if count:
            self._unscrubbed = True

    def pending_scrub(self) -> str | None:
        return (self._scrub_blocked or _NOT_SCRUBBED) if self._unscrubbed else None

    def scrub(self) -> None:
        """Rewrite the tables that hold text (``VACUUM FULL``: an exclusive lock while it runs), so
        that their files no longer hold deleted rows' bytes. An operator's command, not a per-delete step.

        A rewrite keeps every row an open transaction may still see, so it first waits (up to
        ``SCRUB_WAIT`` seconds) for the transactions older than this call to end; if one stays open,
        nothing is rewritten and ``pending_scrub`` says why."""
        import psycopg

        with self.db.reading() as conn:
            blocker = self._older_transactions(conn)
            if blocker is not None:
                self._scrub_blocked = blocker
                return
            for table in _SCRUBBED:
                conn.execute(f"VACUUM (FULL) {table}")
            try:  # the rewritten files on disk, not only in shared buffers (needs pg_checkpoint or superuser)
                conn.execute("CHECKPOINT")
            except psycopg.errors.InsufficientPrivilege:
                pass  # PostgreSQL writes them at its next checkpoint
        self._unscrubbed, self._scrub_blocked = False, None
        with self.db.writing(KEYS_CHAIN):  # the database's own trail: receipts read when the tables were rewritten
            self.db.note(KEYS_CHAIN, tables_rewritten=len(_SCRUBBED))

    @staticmethod
    def _older_transactions(conn: Any) -> str | None:
        """Wait until no transaction that began before now is open (in any database: they hold back
        what VACUUM may remove) and no other session of this database holds an older snapshot;
        None then, else what still holds them after ``SCRUB_WAIT`` seconds."""
        target = conn.execute("SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint").fetchone()[0]
        deadline = time.monotonic() + SCRUB_WAIT
        while True:
            row = conn.execute(
                "SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint < %s, EXISTS (SELECT 1 FROM "
                "pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_xmin "
                "IS NOT NULL AND age(backend_xmin) > age((%s %% 4294967296)::text::xid))", (target, target)).fetchone()
            if not (row[0] or row[1]):
                return None
            if time.monotonic() > deadline:
                return (f"not scrubbed: a transaction older than the delete is still open on the server after "
                        f"{SCRUB_WAIT:g} s (PostgreSQL keeps what it may see); run `hippo scrub` again when it ends")
            time.sleep(0.05)
