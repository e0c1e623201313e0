"""After a hard delete: copying the WAL into the file and truncating it, without waiting on readers.

A deleted row's text lives on in WAL frames written before the delete until a
``wal_checkpoint(TRUNCATE)`` copies the log into the main file (where
``secure_delete`` has zeroed the row) and empties it. That checkpoint must wait
for every reader still on an older snapshot. Waiting inside the forget made a
forget stall for minutes behind one long reader, holding the store's lock
(other agents' requests stalled with it), and then report a failure although
the rows were gone.

So the checkpoint runs on its own short-lived connection with a short busy
timeout: one try right after the delete commits, then, while a reader holds
on, a background thread tries again every quarter second until it succeeds or
the store closes (the last try is at close). A forget reports truthfully
whether its text has already left every file. A process that exits before its
scrub finished leaves a log behind; the next store to open the file tries once.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading

__all__ = ["Scrubber"]

_log = logging.getLogger(__name__)
_BUSY_MS = 50  # how long one try waits for readers; writers wait behind a TRUNCATE checkpoint meanwhile
_RETRY_S = 0.25


class Scrubber:
    """Checkpoints one database's WAL after deletes; ``pending`` until one succeeds after the last."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.reason: str | None = None  # why the last try did not finish, while pending
        # Deletes counted, and how many of them a successful checkpoint has covered: a try that
        # started before a delete committed must not count as that delete's scrub.
        self._wanted = 0
        self._done = 0
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._closed = False
        self._thread: threading.Thread | None = None

    @property
    def pending(self) -> bool:
        return self._done < self._wanted

    def at_open(self) -> None:
        """One try when the file comes with a non-empty log: a process that exited before its
        scrub finished left it, maybe. Not retried: this store has deleted nothing yet."""
        try:
            if os.path.getsize(self.path + "-wal") and self._checkpoint():
                _log.info("the write-ahead log of %s could not be emptied at open: a reader holds it", self.path)
        except (OSError, sqlite3.Error) as exc:  # no log (in-memory), or a file we cannot write
            _log.debug("no checkpoint at open: %s", exc)

    def after_delete(self) -> bool:
        """Try now; on failure keep trying in the background. Whether the text is gone already."""
        with self._lock:
            self._wanted += 1
        if self.try_now():
            return True
        with self._lock:
            if self._thread is None and not self._closed and self.path not in ("", ":memory:"):
                self._thread = threading.Thread(target=self._retry, name="hippo-scrub", daemon=True)
                self._thread.start()
        return False

    def try_now(self) -> bool:
        """One checkpoint attempt; True when no delete counted so far has text left in the log."""
        with self._lock:
            covers = self._wanted
        if self._done >= covers:
            return True
        try:
            busy = self._checkpoint()
        except sqlite3.Error as exc:  # the main file cannot be written (read-only, disk full, ...)
            self.reason = f"the write-ahead log could not be copied into the database: {exc}"
            return False
        if busy:
            self.reason = "another connection is still reading an older snapshot"
            return False
        with self._lock:
            self._done = max(self._done, covers)
            if not self.pending:
                self.reason = None
        return True

    def _checkpoint(self) -> bool:
        """``wal_checkpoint(TRUNCATE)`` on a connection of its own; whether readers kept it from finishing."""
        from urllib.request import pathname2url  # here: opening a store need not load urllib's HTTP client

        # mode=rw: never create a file where the database was deleted under us
        conn = sqlite3.connect(f"file:{pathname2url(self.path)}?mode=rw", uri=True, timeout=_BUSY_MS / 1000,
                               isolation_level=None)
        try:
            conn.execute(f"PRAGMA busy_timeout={_BUSY_MS}")
            busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        finally:
            conn.close()
        return bool(busy)

    def _retry(self) -> None:
        while True:
            with self._lock:  # decided under the lock: a delete counted after this starts a new thread
                if self._closed or not self.pending:
                    self._thread = None
                    return
            if self.try_now():
                _log.info("forgotten text scrubbed from the write-ahead log of %s", self.path)
            else:
                self._wake.wait(_RETRY_S)

    def close(self) -> None:
        """Stop retrying; one last try, so a reader that has just let go still gets its scrub."""
        with self._lock:
            self._closed = True
            thread = self._thread
        self._wake.set()
        if thread is not None:
            thread.join(timeout=5)
        if self.pending and not self.try_now():
            _log.warning("closing %s with forgotten text still in its write-ahead log (%s); SQLite "
                         "removes the log when the last connection closes, or the next store to open it "
                         "scrubs it", self.path, self.reason)
