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

import numpy as np

from hippo.core.ports.database import CheckReport, Finding
from hippo.errors import StorageError
from hippo.stores.checks import held, listed, schema_finding, vectors_finding
from hippo.stores.sqlite.index.annfiles import AnnFiles
from hippo.stores.sqlite.index.cache import read_rowids
from hippo.stores.sqlite.index.windowed import WINDOW_BASE, WINDOW_SLOTS
from hippo.stores.sqlite.schema import MIGRATIONS
from hippo.trust import PlaceCheck

__all__ = ["check", "remnant_states"]

_FTS = {"chunks_fts": "chunks", "chunks_archive_fts": "chunks_archive"}
_ORPHANS = ("SELECT count(*) FROM chunk_windows w WHERE NOT EXISTS (SELECT 1 FROM chunks c "
            f"WHERE c.rowid = (w.key - {WINDOW_BASE}) / {WINDOW_SLOTS}")  # (closed by the caller)
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
            counts, model = held(conn.execute, "chunks")
            findings = [_integrity(conn), _foreign_keys(conn), keywords, _vectors(conn, model, counts),
                        _ann_files(file, model), _schema(conn)]
        finally:
            conn.execute("ROLLBACK")
    return CheckReport(location, tuple(findings), counts)


def remnant_states(conn: sqlite3.Connection, file: str, agent_id: str) -> list[PlaceCheck]:
    """What a receipt checks beside the rows (through the store's own connection, outside a
    write): each full-text index against its rows, no window vector without its chunk, and no
    vector in the agent's saved ANN index of a chunk that is gone."""
    keywords = _keyword_index(conn)
    stray = conn.execute(_ORPHANS + ")").fetchone()[0]
    vectors = PlaceCheck("vectors", not stray, f"{stray} window vectors of chunks that are gone" if stray
                         else "every window vector belongs to a chunk that is there")
    keys, files = AnnFiles(file).saved_keys(agent_id)
    held = read_rowids(conn, "SELECT rowid FROM chunks WHERE agent_id = ?", (agent_id,))
    gone = np.setdiff1d(keys, held)
    problems = [f"{len(gone)} vectors of chunks that are gone"] if len(gone) else []
    problems += [f"{name}, named by no saved index" for name in files]
    ann = PlaceCheck("ANN files", not problems, listed(problems) if problems else
                     f"the saved index holds {len(keys)} vectors, each of a chunk that is there" if len(keys)
                     else "no saved index of the agent")
    return [PlaceCheck("full-text index", keywords.ok, keywords.detail), vectors, ann]


def _integrity(conn: sqlite3.Connection) -> Finding:
    found = [row[0] for row in conn.execute("PRAGMA integrity_check(100)")]
    if found == ["ok"]:
        return Finding("integrity", True, "SQLite's integrity check: ok")
    return Finding("integrity", False, f"SQLite's integrity check found: {listed(found)}")


def _foreign_keys(conn: sqlite3.Connection) -> Finding:
    found = conn.execute("PRAGMA foreign_key_check").fetchall()
    if not found:
        return Finding("foreign keys", True, "no row points at a missing one")
    return Finding("foreign keys", False,
                   listed([f"a row of {table} (rowid {rowid}) points at a missing row of {parent}"
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
        return Finding("keyword index", False, listed(problems) + "; rebuild it as the backup guide's repairs "
                                                                   "say, or restore a backup that passes")
    return Finding("keyword index", True, "both full-text indexes match their chunks")


def _vectors(conn: sqlite3.Connection, model: tuple[str, int | None] | None, found: dict[str, int]) -> Finding:
    return vectors_finding(lambda sql: int(conn.execute(sql).fetchone()[0]), model, found, rows="chunks",
                           wrong_size=lambda dimension: f"length(embedding) != {4 * dimension}",
                           orphans=_ORPHANS + " AND c.embedding IS NOT NULL)")


def _ann_files(file: str, model: tuple[str, int | None] | None) -> Finding:
    files = AnnFiles(file)
    found, problems = files.problems(*(model or (None, None)))
    if problems:
        return Finding("ANN files", False, listed(problems) + f"; removing {files.folder} is safe: they are "
                                                               "built again")
    if not found:
        return Finding("ANN files", True, "none saved (an ANN index is built when first needed)")
    return Finding("ANN files", True, f"{found} saved ANN indexes, each of the recorded model")


def _schema(conn: sqlite3.Connection) -> Finding:
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    applied = conn.execute("SELECT count(*) FROM hippo_migrations").fetchone()[0]
    return schema_finding(version, len(MIGRATIONS), recorded=applied)
