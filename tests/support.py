"""Helpers shared by the tests (importable as ``support`` since tests/ is on the path)."""

from __future__ import annotations

import importlib.util
import sqlite3
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

__all__ = ["START", "Clock", "counts", "load_bench", "sql"]

START = datetime(2025, 1, 1, 12, 0, tzinfo=timezone.utc)


class Clock:
    """A fake clock: ``clock()`` is the current time, ``advance(days=3)`` moves it."""

    def __init__(self, start: datetime = START) -> None:
        assert start.tzinfo is not None
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> datetime:
        self.now = self.now + timedelta(**delta)
        return self.now

    def set(self, when: datetime) -> None:
        assert when.tzinfo is not None
        self.now = when


def sql(path: Path, query: str, params: tuple = ()) -> list[tuple]:
    """Run one statement on a separate connection (as another process would) and return its rows."""
    conn = sqlite3.connect(str(path), isolation_level=None, timeout=5.0)
    try:
        conn.execute("PRAGMA busy_timeout=5000")
        return conn.execute(query, params).fetchall()
    finally:
        conn.close()


def counts(path: Path) -> tuple[int, int]:
    """Rows in chunks and memory_blocks."""
    return (sql(path, "SELECT count(*) FROM chunks")[0][0], sql(path, "SELECT count(*) FROM memory_blocks")[0][0])


def load_bench(name: str):
    """A script of bench/ as a module (bench/ is no package)."""
    path = Path(__file__).resolve().parents[1] / "bench" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"bench_{name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
