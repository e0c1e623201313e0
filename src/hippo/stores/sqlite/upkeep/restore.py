"""``hippo restore`` on SQLite: put a checked backup in place of a database file.

The backup is first copied (SQLite's backup API, from a read-only connection) to a private
temporary file beside the database, and the copy is checked: it opens as SQLite, ``PRAGMA
integrity_check`` says ok, it holds hippo's tables, and its schema version is one this hippo can
open (an older one is migrated when hippo next opens it). Nothing in place changes until all of
that held. Then the database's own write-ahead log and ANN index files (``<db>.hnsw/``, rebuilt
from the restored vectors) are removed and the copy is renamed over the database.

A database that another process has open (a server) is refused: SQLite deletes a database's
write-ahead log when its last connection closes, so a connection opened and closed here that leaves
the log behind means another connection holds the file (``_held_elsewhere``). A process that opens
the database in the moment between that test and the rename is not seen: stop servers first.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from contextlib import closing, suppress
from pathlib import Path
from urllib.parse import quote

from hippo.core.ports.database import Progress, RestoreResult
from hippo.errors import Conflict, InvalidInput, NotFound
from hippo.stores.sqlite.index.annfiles import AnnFiles
from hippo.stores.sqlite.schema import MIGRATIONS
from hippo.stores.sqlite.upkeep.backup import STEP_PAGES, fsync_folder, partial_beside

__all__ = ["restore", "verify"]

_TABLES = ("chunks", "chunks_fts", "memory_blocks", "hippo_migrations")  # what makes a file hippo's


def restore(backup: str, target: str, *, progress: Progress | None = None) -> RestoreResult:
    """Check the backup file ``backup``, then put it in place of the database file ``target``."""
    source = Path(os.path.abspath(os.path.expanduser(backup)))
    if not source.is_file():
        raise NotFound(f"no backup file at {backup}")
    database = Path(os.path.abspath(target))
    if database.exists() and os.path.samefile(database, source):
        raise InvalidInput(f"{backup} is the database itself: nothing to restore")
    if not database.parent.is_dir():
        raise NotFound(f"no folder {database.parent} for the database {target}")
    if database.exists() and _held_elsewhere(database):
        raise Conflict(f"the database {target} is open in another process (a running hippo serve or hippo mcp?): "
                       "stop it, then restore")
    partial = partial_beside(database)
    try:
        if database.exists():  # the restored file keeps the permissions of the one it replaces
            os.chmod(partial, stat.S_IMODE(database.stat().st_mode))
        _copy(source, partial, backup, progress)
        version = verify(partial, shown=backup)
        _clear_beside(database)
        os.replace(partial, database)
        fsync_folder(database.parent)
    finally:
        with suppress(FileNotFoundError):
            os.unlink(partial)
    return RestoreResult(str(source), str(database), database.stat().st_size, version)


def _copy(source: Path, partial: Path, shown: str, progress: Progress | None) -> None:
    try:
        with closing(sqlite3.connect(f"file:{quote(str(source))}?mode=ro", uri=True, isolation_level=None,
                                     timeout=5.0)) as src, \
                closing(sqlite3.connect(partial, isolation_level=None)) as dst:
            src.backup(dst, pages=STEP_PAGES,
                       progress=None if progress is None else lambda _, left, total: progress(total - left, total))
            dst.execute("PRAGMA journal_mode=DELETE")  # a live file given as the backup: read it as one file
    except sqlite3.Error as exc:
        raise InvalidInput(f"{shown} is not a hippo backup: SQLite cannot read it ({exc}); nothing was "
                           "restored") from None


def verify(path: Path, *, shown: str) -> int:
    """The schema version of the hippo database file ``path`` once its checks hold, else
    InvalidInput saying which failed (``shown`` names the file)."""
    refused = f"{shown} cannot be restored"
    try:
        with closing(sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True)) as conn:
            found = conn.execute("PRAGMA integrity_check(20)").fetchall()
            if [row[0] for row in found] != ["ok"]:
                problems = "; ".join(row[0] for row in found[:3])
                raise InvalidInput(f"{refused}: SQLite's integrity check failed ({problems}); nothing was restored")
            names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            version: int = conn.execute("PRAGMA user_version").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        raise InvalidInput(f"{refused}: it is not a SQLite database ({exc}); nothing was restored") from None
    missing = [name for name in _TABLES if name not in names]
    if missing or version < 1:
        raise InvalidInput(f"{refused}: it is a SQLite file but not a hippo database (no {', '.join(missing)} "
                           "table); nothing was restored")
    if version > len(MIGRATIONS):
        raise InvalidInput(f"{refused}: its schema version {version} is newer than this hippo knows "
                           f"({len(MIGRATIONS)}); upgrade hippo to restore it. Nothing was restored")
    return version


def _held_elsewhere(database: Path) -> bool:
    """Whether another connection has the database open: SQLite removes the write-ahead log when
    the last connection closes, so one left after ours closed is someone else's."""
    wal = Path(f"{database}-wal")
    try:
        with closing(sqlite3.connect(database, isolation_level=None, timeout=5.0)) as conn:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            journal = conn.execute("PRAGMA journal_mode").fetchone()[0]
    except sqlite3.DatabaseError:
        return False  # a file SQLite cannot read serves no one: what a restore is for
    return journal == "wal" and wal.exists()


def _clear_beside(database: Path) -> None:
    """The files that belong to the database being replaced: its write-ahead log (checkpointed
    by ``_held_elsewhere``'s close; one left would be read into the restored file) and its saved
    ANN indexes (zeroed first: they hold its vectors)."""
    for suffix in ("-wal", "-shm", "-journal"):
        with suppress(FileNotFoundError):
            os.unlink(f"{database}{suffix}")
    AnnFiles(str(database)).clear()
