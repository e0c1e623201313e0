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
whether its text has already left every file.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from urllib.request import pathname2url

__all__ = ["Scrubber"]

_log = logging.getLogger(__name__)
_BUSY_MS = 50  # how long one try waits for readers; writers wait behind a TRUNCATE checkpoint meanwhile
_RETRY_S = 0.25


class Scrubber:
    """Checkpoints one database's WAL after deletes; ``pending`` until one succeeds."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.reason: str | None = None  # why the last try did not finish, while pending
        self._pending = False
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._closed = False
        self._thread: threading.Thread | None = None

    @property
    def pending(self) -> bool:
        return self._pending

    def after_delete(self) -> bool:
        """Try now; on failure keep trying in the background. Whether the text is gone already."""
        with self._lock:
            self._pending = True
        if self.try_now():
            return True
        with self._lock:
            if self._thread is None and not self._closed and self.path not in ("", ":memory:"):
                self._thread = threading.Thread(target=self._retry, name="hippo-scrub", daemon=True)
                self._thread.start()
        return False

    def try_now(self) -> bool:
        """One checkpoint attempt; True when the WAL holds nothing any more."""
        if not self._pending:
            return True
        try:
            # mode=rw: never create a file where the database was deleted under us
            conn = sqlite3.connect(f"file:{pathname2url(self.path)}?mode=rw", uri=True, timeout=_BUSY_MS / 1000,
                                   isolation_level=None)
        except sqlite3.Error as exc:
            return self._failed(f"cannot open the database to checkpoint it: {exc}")
        try:
            conn.execute(f"PRAGMA busy_timeout={_BUSY_MS}")
            busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        except sqlite3.Error as exc:  # the main file cannot be written (read-only, disk full, ...)
            return self._failed(f"the write-ahead log could not be copied into the database: {exc}")
        finally:
            conn.close()
        if busy:
            return self._failed("another connection is still reading an older snapshot")
        with self._lock:
            self._pending, self.reason = False, None
        return True

    def _failed(self, reason: str) -> bool:
        self.reason = reason
        return False

    def _retry(self) -> None:
        while not self._closed:
            if self.try_now():
                _log.info("forgotten text scrubbed from the write-ahead log of %s", self.path)
                break
            self._wake.wait(_RETRY_S)
        with self._lock:
            self._thread = None

    def close(self) -> None:
        """Stop retrying; one last try, so a reader that has just let go still gets its scrub."""
        with self._lock:
            self._closed = True
            thread = self._thread
        self._wake.set()
        if thread is not None:
            thread.join(timeout=5)
        if self._pending and not self.try_now():
            _log.warning("closing %s with forgotten text still in its write-ahead log (%s); SQLite "
                         "removes the log when the last connection closes, or the next forget scrubs it",
                         self.path, self.reason)
