"""``hippo backup`` on SQLite: a consistent copy of a live database through SQLite's backup API.

The copy is read inside one read transaction of a connection of its own: in WAL mode that is a
snapshot, so writers (this process's store, other processes) go on while the pages are copied,
and the copy holds each committed write whole or not at all. Without the held transaction, SQLite
starts a backup again from its first page whenever another connection writes, and under a steady
writer it might never finish. Pages are copied a step at a time so a large file shows progress.

What is copied: the database, write-ahead log included (the snapshot reads through it). What is
not: the ANN index files beside it (``<db>.hnsw/``), which are a cache of the vectors the database
holds: a restored database has none and builds them again at its first vector search.

The copy is written to a private temporary file beside the target (mode 0600: it holds every
memory), switched to a rollback journal so it is one self-contained file, flushed to the disk
and renamed over the target once complete: a failed backup leaves nothing half-written.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
from contextlib import closing, suppress
from pathlib import Path

from hippo.core.ports.database import BackupResult, Progress
from hippo.errors import ConfigError, InvalidInput, StorageError

__all__ = ["STEP_PAGES", "backup", "fsync_folder", "partial_beside"]

STEP_PAGES = 1024  # pages per step of the copy: 4 MiB at SQLite's default page size


def backup(source: str, target: str, *, overwrite: bool = False, progress: Progress | None = None) -> BackupResult:
    """Copy the database file ``source`` (open or not, with writers or not) to ``target``."""
    if source in ("", ":memory:") or source.startswith("file:"):
        raise ConfigError("an in-memory database has no file to back up; use hippo data export")
    destination = _destination(source, target, overwrite=overwrite)
    partial = partial_beside(destination)
    try:
        version = _copy(source, partial, progress)
        _flush(partial)
        os.replace(partial, destination)
        fsync_folder(destination.parent)
    except sqlite3.Error as exc:
        raise StorageError(f"the backup of {source} failed: {exc}; nothing was written to {target}") from exc
    finally:
        with suppress(FileNotFoundError):
            os.unlink(partial)
    return BackupResult(str(destination), destination.stat().st_size, version)


def _destination(source: str, target: str, *, overwrite: bool) -> Path:
    destination = Path(os.path.abspath(os.path.expanduser(target)))
    if destination.is_dir():
        raise InvalidInput(f"{target} is a folder: name the backup file to write")
    if not destination.parent.is_dir():
        raise InvalidInput(f"no folder {destination.parent} to write the backup into")
    if destination.exists():
        if os.path.samefile(destination, source):
            raise InvalidInput(f"{target} is the database itself: back it up to another file")
        if not overwrite:
            raise InvalidInput(f"{target} exists already: choose another name, or pass --force to replace it")
    return destination


def partial_beside(target: Path) -> Path:
    """A new private (0600) temporary file in ``target``'s folder, to be renamed over it."""
    handle, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".partial")
    os.close(handle)
    return Path(name)


def _copy(source: str, partial: Path, progress: Progress | None) -> int:
    """Copy ``source`` into ``partial`` from one snapshot; the copy's schema version."""
    with closing(sqlite3.connect(source, isolation_level=None, timeout=5.0)) as src, \
            closing(sqlite3.connect(partial, isolation_level=None)) as dst:
        src.execute("BEGIN")
        src.execute("SELECT count(*) FROM sqlite_master").fetchone()  # the snapshot starts here, held to the end
        try:
            src.backup(dst, pages=STEP_PAGES,
                       progress=None if progress is None else lambda _, left, total: progress(total - left, total))
        finally:
            src.execute("ROLLBACK")
        dst.execute("PRAGMA journal_mode=DELETE")  # one file: no -wal beside the copy
        version: int = dst.execute("PRAGMA user_version").fetchone()[0]
    return version


def _flush(path: Path) -> None:
    with open(path, "rb+") as handle:
        os.fsync(handle.fileno())


def fsync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable (where the platform lets a folder be opened)."""
    with suppress(OSError):
        handle = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(handle)
        finally:
            os.close(handle)
