"""``hippo check`` and ``hippo backup`` on PostgreSQL.

A check reads one snapshot (a read-only, repeatable-read transaction), so a server using the
database goes on:

- **schema version**: every migration this hippo knows is applied;
- **counters**: every chunk row has its strength counters (``strength.py``) and no counters are
  left without their row;
- **keyword index**: the words table (``chunk_words``) holds exactly the live chunks;
- **vectors**: with an embedding model recorded, every chunk's vector (and window vector) has its
  dimension, or the chunk is pending (counted); no window belongs to a chunk without a vector.

PostgreSQL's own structure is PostgreSQL's to check (``amcheck``, ``pg_dump`` reading every row);
hippo does not back a server database up itself: ``backup_advice`` names the ``pg_dump`` command.
"""

from __future__ import annotations

from typing import Any

from hippo.core.ports.database import CheckReport, Finding
from hippo.stores.postgres.schema import MIGRATIONS

__all__ = ["backup_advice", "check", "restore_advice"]


def backup_advice(location: str, path: str) -> str:
    """Why ``hippo backup`` refuses a server database, and the command to use instead."""
    return (f"{location} is a PostgreSQL database: back it up with PostgreSQL's own tools, for example "
            f"pg_dump --format=custom --no-owner --file {path} 'postgresql://USER@HOST:PORT/DBNAME' "
            "(and pg_restore to put it back: see the backup guide)")


def restore_advice(location: str, path: str) -> str:
    """Why ``hippo restore`` refuses a server database, and the command to use instead."""
    return (f"{location} is a PostgreSQL database: restore a pg_dump file with pg_restore --no-owner "
            f"--dbname 'postgresql://USER@HOST:PORT/DBNAME' {path} into a new, empty database, then run "
            "hippo check --db on it (see the backup guide)")


def check(conn: Any, location: str) -> CheckReport:
    """Check the database behind ``conn`` (a psycopg connection, in autocommit)."""
    with conn.transaction():
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        counts = _counts(conn)
        model = conn.execute("SELECT model_id, dimension FROM embedding_model WHERE id = 1").fetchone()
        findings = (_schema(conn), _counters(conn), _keyword_index(conn), _vectors(conn, model, counts))
    return CheckReport(location, findings, counts)


def _one(conn: Any, sql: str, params: tuple[Any, ...] = ()) -> int:
    return int(conn.execute(sql, params).fetchone()[0])


def _counts(conn: Any) -> dict[str, int]:
    kinds = dict(conn.execute("SELECT kind, count(*) FROM chunk_rows GROUP BY kind").fetchall())
    return {"agents": _one(conn, "SELECT count(DISTINCT agent_id) FROM chunk_rows"),
            "memories": kinds.get("memory", 0), "facts": kinds.get("fact", 0),
            "archived": _one(conn, "SELECT count(*) FROM chunks_archive"),
            "pending_vectors": _one(conn, "SELECT count(*) FROM chunk_rows WHERE embedding IS NULL"),
            "window_vectors": _one(conn, "SELECT count(*) FROM chunk_windows"),
            "blocks": _one(conn, "SELECT count(*) FROM memory_blocks")}


def _schema(conn: Any) -> Finding:
    applied = _one(conn, "SELECT coalesce(max(number), 0) FROM hippo_migrations")
    known = len(MIGRATIONS)
    if applied == known:
        return Finding("schema version", True, f"version {applied}, the current one")
    newer = " (newer than this hippo)" if applied > known else ": opening it with hippo migrates it"
    return Finding("schema version", False, f"version {applied} of {known}{newer}")


def _counters(conn: Any) -> Finding:
    bare = _one(conn, "SELECT count(*) FROM chunk_rows r WHERE NOT EXISTS "
                      "(SELECT 1 FROM chunk_strength s WHERE s.id = r.id)")
    stray = _one(conn, "SELECT count(*) FROM chunk_strength s WHERE NOT EXISTS "
                       "(SELECT 1 FROM chunk_rows r WHERE r.id = s.id)")
    if bare or stray:
        return Finding("counters", False, f"{bare} chunks without their strength counters, {stray} counters "
                                          "without their chunk")
    return Finding("counters", True, "every chunk has its strength counters")


def _keyword_index(conn: Any) -> Finding:
    missing = _one(conn, "SELECT count(*) FROM chunk_rows r WHERE r.superseded_by IS NULL AND NOT EXISTS "
                         "(SELECT 1 FROM chunk_words w WHERE w.id = r.id)")
    extra = _one(conn, "SELECT count(*) FROM chunk_words w JOIN chunk_rows r ON r.id = w.id "
                       "WHERE r.superseded_by IS NOT NULL")
    if missing or extra:
        return Finding("keyword index", False, f"{missing} live chunks missing from the words table, {extra} "
                                               "superseded ones still in it")
    return Finding("keyword index", True, "the words table holds exactly the live chunks")


def _vectors(conn: Any, model: tuple[str, int | None] | None, counts: dict[str, int]) -> Finding:
    pending = f"{counts['pending_vectors']} pending (hippo data reembed fills them)"
    held = _one(conn, "SELECT count(*) FROM chunk_rows WHERE embedding IS NOT NULL")
    if model is None:
        if held:
            return Finding("vectors", False, f"{held} chunks have a vector but no embedding model is recorded")
        return Finding("vectors", True, "no embedding model recorded: keyword recall only; " + pending)
    model_id, dimension = model
    problems = []
    if dimension:
        for table, name in (("chunk_rows", "chunk vectors"), ("chunk_windows", "window vectors")):
            bad = _one(conn, f"SELECT count(*) FROM {table} WHERE embedding IS NOT NULL "
                             "AND vector_dims(embedding) != %s", (dimension,))
            if bad:
                problems.append(f"{bad} {name} are not of dimension {dimension} ({model_id})")
    orphans = _one(conn, "SELECT count(*) FROM chunk_windows w JOIN chunk_rows r ON r.id = w.chunk_id "
                         "WHERE r.embedding IS NULL")
    if orphans:
        problems.append(f"{orphans} window vectors belong to chunks without a vector")
    if problems:
        return Finding("vectors", False, "; ".join(problems))
    return Finding("vectors", True, f"every chunk has a vector of {model_id} or is pending: {pending}")
