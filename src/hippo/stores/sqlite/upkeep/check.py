"""``hippo check`` on SQLite: what a whole database file holds together, each check named.

- **integrity**: ``PRAGMA integrity_check`` (pages, records, every index against its table);
- **foreign keys**: ``PRAGMA foreign_key_check``;
- **keyword index**: each FTS5 index against its content table (FTS5's ``'integrity-check'`` with a
  rank of 1, which also compares the index with the rows it was built from);
- **vectors**: with an embedding model recorded, every chunk's vector has its dimension, or the
  chunk is pending (no vector yet: counted, filled by ``hippo data reembed``); every window vector
  belongs to a chunk that has a vector; none at all without a model recorded;
- **ANN files**: the saved ANN indexes beside the file name graph files that exist, of the model
  the database records (``index/annfiles.py``);
- **schema version**: every migration this hippo knows is applied.

The checks read through a connection of their own, so a server using the file goes on; the
keyword check is a statement SQLite runs as a write, so it takes the write lock for its duration
(a fraction of a second at 100k chunks) and changes nothing.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing

from hippo.core.ports.database import CheckReport, Finding
from hippo.errors import StorageError
from hippo.stores.sqlite.index.annfiles import AnnFiles
from hippo.stores.sqlite.index.windowed import WINDOW_BASE, WINDOW_SLOTS
from hippo.stores.sqlite.schema import MIGRATIONS

__all__ = ["check"]

_FTS = {"chunks_fts": "chunks", "chunks_archive_fts": "chunks_archive"}
_SHOWN = 5  # problems named in a finding's detail
_CORRUPT = 11  # SQLITE_CORRUPT, the primary code of FTS5's SQLITE_CORRUPT_VTAB: the index disagrees


def check(file: str, location: str) -> CheckReport:
    """Check the database file ``file`` (shown as ``location``)."""
    try:
        return _checked(file, location)
    except sqlite3.Error as exc:
        raise StorageError(f"the check of {location} could not finish: {exc}") from exc


def _checked(file: str, location: str) -> CheckReport:
    with closing(sqlite3.connect(file, isolation_level=None, timeout=5.0)) as conn:
        keywords = _keyword_index(conn)
        conn.execute("BEGIN")  # one snapshot for the rest
        try:
            counts = _counts(conn)
            model = conn.execute("SELECT model_id, dimension FROM embedding_model WHERE id = 1").fetchone()
            findings = [_integrity(conn), _foreign_keys(conn), keywords, _vectors(conn, model, counts),
                        _ann_files(file, model), _schema(conn)]
        finally:
            conn.execute("ROLLBACK")
    return CheckReport(location, tuple(findings), counts)


def _listed(problems: list[str]) -> str:
    more = f"; and {len(problems) - _SHOWN} more" if len(problems) > _SHOWN else ""
    return "; ".join(problems[:_SHOWN]) + more


def _integrity(conn: sqlite3.Connection) -> Finding:
    found = [row[0] for row in conn.execute("PRAGMA integrity_check(100)")]
    if found == ["ok"]:
        return Finding("integrity", True, "SQLite's integrity check: ok")
    return Finding("integrity", False, f"SQLite's integrity check found: {_listed(found)}")


def _foreign_keys(conn: sqlite3.Connection) -> Finding:
    found = conn.execute("PRAGMA foreign_key_check").fetchall()
    if not found:
        return Finding("foreign keys", True, "no row points at a missing one")
    return Finding("foreign keys", False,
                   _listed([f"a row of {table} (rowid {rowid}) points at a missing row of {parent}"
                            for table, rowid, parent, _ in found]))


def _keyword_index(conn: sqlite3.Connection) -> Finding:
    problems = []
    for index, table in _FTS.items():
        conn.execute("BEGIN IMMEDIATE")  # a busy database is an error of the check, not of the index
        try:
            conn.execute(f"INSERT INTO {index}({index}, rank) VALUES ('integrity-check', 1)")
        except sqlite3.DatabaseError as exc:
            if exc.sqlite_errorcode & 0xFF != _CORRUPT:
                raise
            problems.append(f"the keyword index of {table} does not match its rows ({exc})")
        finally:
            conn.execute("ROLLBACK")
    if problems:
        return Finding("keyword index", False, _listed(problems) + "; rebuild it as the backup guide's repairs "
                                                                   "say, or restore a backup that passes")
    return Finding("keyword index", True, "both full-text indexes match their chunks")


def _counts(conn: sqlite3.Connection) -> dict[str, int]:
    kinds = dict(conn.execute("SELECT kind, count(*) FROM chunks GROUP BY kind").fetchall())

    def one(sql: str) -> int:
        return int(conn.execute(sql).fetchone()[0])

    return {"agents": one("SELECT count(DISTINCT agent_id) FROM chunks"),
            "memories": kinds.get("memory", 0), "facts": kinds.get("fact", 0),
            "archived": one("SELECT count(*) FROM chunks_archive"),
            "pending_vectors": one("SELECT count(*) FROM chunks WHERE embedding IS NULL"),
            "window_vectors": one("SELECT count(*) FROM chunk_windows"),
            "blocks": one("SELECT count(*) FROM memory_blocks")}


def _vectors(conn: sqlite3.Connection, model: tuple[str, int | None] | None, counts: dict[str, int]) -> Finding:
    pending = f"{counts['pending_vectors']} pending (hippo data reembed fills them)"
    if model is None:
        held = conn.execute("SELECT count(*) FROM chunks WHERE embedding IS NOT NULL").fetchone()[0]
        if held:
            return Finding("vectors", False, f"{held} chunks have a vector but no embedding model is recorded")
        return Finding("vectors", True, "no embedding model recorded: keyword recall only; " + pending)
    model_id, dimension = model
    problems = []
    if dimension:
        size = 4 * dimension
        bad = conn.execute("SELECT id, length(embedding) FROM chunks WHERE embedding IS NOT NULL "
                           "AND length(embedding) != ?", (size,)).fetchall()
        problems += [f"chunk {chunk_id} has a vector of {length} bytes, not {size} ({model_id}, {dimension})"
                     for chunk_id, length in bad]
        bad_windows = conn.execute("SELECT count(*) FROM chunk_windows WHERE length(embedding) != ?",
                                   (size,)).fetchone()[0]
        if bad_windows:
            problems.append(f"{bad_windows} window vectors are not of dimension {dimension}")
    orphans = conn.execute(
        f"SELECT count(*) FROM chunk_windows w WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE "
        f"c.rowid = (w.key - {WINDOW_BASE}) / {WINDOW_SLOTS} AND c.embedding IS NOT NULL)").fetchone()[0]
    if orphans:
        problems.append(f"{orphans} window vectors belong to no chunk with a vector")
    if problems:
        return Finding("vectors", False, _listed(problems))
    return Finding("vectors", True, f"every chunk has a vector of {model_id} or is pending: {pending}")


def _ann_files(file: str, model: tuple[str, int | None] | None) -> Finding:
    files = AnnFiles(file)
    found, problems = files.problems(*(model or (None, None)))
    if problems:
        return Finding("ANN files", False, _listed(problems) + f"; removing {files.folder} is safe: they are "
                                                               "built again")
    if not found:
        return Finding("ANN files", True, "none saved (an ANN index is built when first needed)")
    return Finding("ANN files", True, f"{found} saved ANN indexes, each of the recorded model")


def _schema(conn: sqlite3.Connection) -> Finding:
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    applied = conn.execute("SELECT count(*) FROM hippo_migrations").fetchone()[0]
    known = len(MIGRATIONS)
    if version == known and applied == known:
        return Finding("schema version", True, f"version {version}, the current one")
    if version > known:
        return Finding("schema version", False, f"version {version} is newer than this hippo's ({known})")
    return Finding("schema version", False, f"version {version} ({applied} migrations recorded) of {known}: "
                                            "opening it with hippo migrates it")


