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
from hippo.stores.checks import held, schema_finding, vectors_finding
from hippo.stores.postgres.schema import MIGRATIONS
from hippo.trust import PlaceCheck

__all__ = ["backup_advice", "check", "remnant_states", "restore_advice"]


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
        counts, model = held(conn.execute, "chunk_rows")
        findings = (_schema(conn), _counters(conn), _keyword_index(conn), _vectors(conn, model, counts))
    return CheckReport(location, findings, counts)


def remnant_states(conn: Any) -> list[PlaceCheck]:
    """What a receipt checks beside the rows: the words table holds the live chunks' words and
    nothing else (the removed ids in it are looked for with the rows), and no window vector is
    left of a chunk without a vector."""
    with conn.transaction():
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        counts, model = held(conn.execute, "chunk_rows")
        words, vectors = _keyword_index(conn), _vectors(conn, model, counts)
    return [PlaceCheck("full-text index", words.ok, words.detail), PlaceCheck("vectors", vectors.ok, vectors.detail)]


def _one(conn: Any, sql: str, params: tuple[Any, ...] = ()) -> int:
    return int(conn.execute(sql, params).fetchone()[0])


def _schema(conn: Any) -> Finding:
    return schema_finding(_one(conn, "SELECT coalesce(max(number), 0) FROM hippo_migrations"), len(MIGRATIONS))


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
    stale = _one(conn, "SELECT count(*) FROM chunk_words w JOIN chunk_rows r ON r.id = w.id WHERE w.tsv <> r.tsv")
    if missing or extra or stale:
        return Finding("keyword index", False, f"{missing} live chunks missing from the words table, {extra} "
                                               f"superseded ones still in it, {stale} with words of another text")
    return Finding("keyword index", True, "the words table holds exactly the live chunks")


def _vectors(conn: Any, model: tuple[str, int | None] | None, found: dict[str, int]) -> Finding:
    return vectors_finding(lambda sql: _one(conn, sql), model, found, rows="chunk_rows",
                           wrong_size=lambda dimension: f"vector_dims(embedding) != {dimension}",
                           orphans="SELECT count(*) FROM chunk_windows w JOIN chunk_rows r ON r.id = w.chunk_id "
                                   "WHERE r.embedding IS NULL")
