"""PostgreSQL for the tests: a real server with pgvector, started once per test session without
root (the PyPI package ``pgserver``), and a fresh database per test made from a migrated template."""

from __future__ import annotations

import itertools
import os
import subprocess
import tempfile
import threading
import time
from pathlib import Path

__all__ = ["PostgresForTests"]


# Read when the module loads: the tests run with every HIPPO_* variable cleared (conftest.py).
_ROOT = os.environ.get("HIPPO_PGTEST_ROOT")
# Under pytest-xdist each worker has a server of its own: a CREATE DATABASE in one worker would
# otherwise hold back the byte checks of another's scrub.
_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")


def _started(pgserver, root: Path, attempts: int = 4):
    """The server at ``root``, started if it is not running. pgserver gives ``pg_ctl start`` 10 s;
    a data directory left by a killed run replays its log and syncs every file first, which on a
    busy two-core machine takes longer. The server goes on starting after the timeout, so asking
    again finds it up."""
    for attempt in range(attempts):
        try:
            return pgserver.get_server(root, cleanup_mode="stop")
        except subprocess.TimeoutExpired:
            if attempt == attempts - 1:
                raise
            time.sleep(5)
    raise AssertionError("unreachable")


class PostgresForTests:
    """One server for the session; ``new_database()`` a URL of an empty, migrated database."""

    _numbers = itertools.count(1)

    def __init__(self) -> None:
        runtime = Path(tempfile.gettempdir()) / f"hippo-xdg-{os.getuid()}"  # pgserver's platformdirs asks for one
        runtime.mkdir(mode=0o700, exist_ok=True)
        os.environ.setdefault("XDG_RUNTIME_DIR", str(runtime))
        import pgserver
        import psycopg

        # HIPPO_PGTEST_ROOT gives a run its own server (parallel runs otherwise share one, and a
        # CREATE DATABASE in one run holds back the byte checks of another's scrub).
        default = Path(tempfile.gettempdir()) / f"hippo-pgtest-{os.getuid()}"
        root = Path(_ROOT or default)
        if _WORKER:
            root = root.with_name(f"{root.name}-{_WORKER}")
        self.server = _started(pgserver, root)
        self.admin = self.server.get_uri()
        self._lock = threading.Lock()
        # One template per test process: a server can be shared by several runs at once.
        self.template = f"hippo_template_{os.getpid()}"
        with psycopg.connect(self.admin, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {self.template} WITH (FORCE)")
            conn.execute(f"CREATE DATABASE {self.template}")
        from hippo.stores.postgres import PostgresStore

        PostgresStore(self.url(self.template), pool_size=1).close()  # the extension and every migration

    def close(self) -> None:
        """Drop this run's template (the server stops with the last run that uses it)."""
        import psycopg

        with self._lock, psycopg.connect(self.admin, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {self.template} WITH (FORCE)")

    def url(self, name: str) -> str:
        return self.admin.replace("/postgres?", f"/{name}?", 1)

    def new_database(self) -> str:
        import psycopg

        name = f"hippo_test_{os.getpid()}_{next(self._numbers)}"
        with self._lock, psycopg.connect(self.admin, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name} TEMPLATE {self.template}")
        return self.url(name)

    def drop(self, url: str) -> None:
        import psycopg

        name = url.split("?", 1)[0].rsplit("/", 1)[1]
        with self._lock, psycopg.connect(self.admin, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
