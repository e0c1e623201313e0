"""Helpers shared by the tests (importable as ``support`` since tests/ is on the path)."""

from __future__ import annotations

import os
import re
import sqlite3
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

__all__ = ["BACKENDS", "START", "Clock", "Served", "SyncView", "counts", "internal_names", "load_bench", "sql",
           "untouched", "vector_sizes"]

START = datetime(2025, 1, 1, 12, 0, tzinfo=timezone.utc)
# The backends this run tests (``HIPPO_TEST_BACKENDS=sqlite`` for a quick local run), read before any
# test clears the HIPPO_* variables.
BACKENDS = tuple(os.environ.get("HIPPO_TEST_BACKENDS", "sqlite,postgres").split(","))


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


def sql(path: Path | str, query: str, params: tuple = ()) -> list[tuple]:
    """Run one statement on a separate connection (as another process would) and return its rows;
    ``path`` is a SQLite file or a PostgreSQL URL (``?`` placeholders work on both)."""
    if str(path).startswith("postgresql://"):
        import psycopg

        with psycopg.connect(str(path), autocommit=True) as pg:
            cur = pg.execute(query.replace("%", "%%").replace("?", "%s"), params) if params else pg.execute(query)
            return [tuple(row) for row in cur.fetchall()] if cur.description else []
    conn = sqlite3.connect(str(path), isolation_level=None, timeout=5.0)
    try:
        conn.execute("PRAGMA busy_timeout=5000")
        return conn.execute(query, params).fetchall()
    finally:
        conn.close()


def vector_sizes(path: Path | str, where: str = "embedding IS NOT NULL") -> list[tuple[int, int]]:
    """(dimension, how many chunks) of the stored vectors, on either backend."""
    size = "vector_dims(embedding)" if str(path).startswith("postgresql://") else "length(embedding) / 4"
    return [tuple(r) for r in sql(path, f"SELECT {size}, count(*) FROM chunks WHERE {where} GROUP BY 1 ORDER BY 1")]


def untouched(db: Path | str) -> bool:
    """Nothing was created or written: no SQLite file, or a PostgreSQL database without a row of hippo's."""
    if not str(db).startswith("postgresql://"):
        return not Path(db).exists()
    return sql(db, "SELECT (SELECT count(*) FROM chunks) + (SELECT count(*) FROM memory_blocks) "
                   "+ (SELECT count(*) FROM api_keys)") == [(0,)]


def counts(path: Path | str) -> tuple[int, int]:
    """Rows in chunks and memory_blocks."""
    return (sql(path, "SELECT count(*) FROM chunks")[0][0], sql(path, "SELECT count(*) FROM memory_blocks")[0][0])


def load_bench(name: str):
    """A script of bench/ as a module (bench/ is no package: its scripts load each other by
    ``siblings.load``, found on sys.path as when they run)."""
    bench = str(Path(__file__).resolve().parents[1] / "bench")
    if bench not in sys.path:
        sys.path.append(bench)
    import siblings

    return siblings.load(name)


class SyncView:
    """An :class:`hippo.AsyncMemory` driven through its coroutines, seen as a sync ``Memory``: the
    behaviour tests run unchanged against both APIs (parametrised in conftest, not copied). Each
    coroutine runs on one event loop in a thread of its own, as an application's loop would."""

    _loop: Any = None  # one event loop for the whole test session: a loop per test would leak its descriptors

    def __init__(self, amem: Any) -> None:
        import asyncio
        import threading

        object.__setattr__(self, "amem", amem)
        if SyncView._loop is None:
            SyncView._loop = asyncio.new_event_loop()
            threading.Thread(target=SyncView._loop.run_forever, daemon=True, name="SyncView loop").start()
        object.__setattr__(self, "loop", SyncView._loop)

    def _run(self, coroutine: Any) -> Any:
        import asyncio

        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout=300)

    def __getattr__(self, name: str) -> Any:
        from hippo.aio import ASYNC_OPERATIONS

        if name in (*ASYNC_OPERATIONS, "close"):
            method = getattr(self.amem, name)
            return lambda *args, **kwargs: self._run(method(*args, **kwargs))
        if name == "export_records":  # a list when awaited; Memory's is an iterator
            return lambda *args, **kwargs: iter(self._run(self.amem.export_records(*args, **kwargs)))
        if name == "for_agent":
            return lambda agent_id: SyncView(self.amem.for_agent(agent_id))
        return getattr(self.amem.sync, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self.amem.sync, name, value)

    def __enter__(self) -> "SyncView":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Served:
    """A test's own memory (its clock, embedder, LLM) served by ``hippo serve``'s app on a loopback
    port in this process, and ``client``, a ``hippo.connect`` client of it for the memory's agent:
    the behaviour tests run unchanged against the HTTP client (parametrised in conftest, not copied).

    A test's servers are asked to stop when it ends, and are not waited for: each shutdown pauses
    0.15-0.25 s (uvicorn's), which would add two minutes to the contract suite. The next tests run
    meanwhile; :meth:`wait_all` (at the end of the session) waits for the last of them."""

    stopping: "list[Served]" = []  # asked to stop, perhaps still shutting down

    def __init__(self, memory: Any) -> None:
        import hippo
        from hippo.interfaces.http.server import BackgroundServer

        self.server = BackgroundServer(memory)  # owns the memory: the server's shutdown closes it
        self.client = hippo.connect(self.server.__enter__(), agent_id=memory.agent_id)

    @classmethod
    def stop_all(cls, served: "list[Served]") -> None:
        for one in served:
            one.server.stop()
        cls.stopping = [one for one in cls.stopping if not one.server.stopped] + served

    @classmethod
    def wait_all(cls) -> None:
        for one in cls.stopping:
            one.server.wait()
        cls.stopping = []


# The internal design documents hippo was built from, which nothing a user reads may name.
INTERNAL_NAMES = re.compile(r"seed[ -]?0\d\d|seed's|\bseeds?/|hippocampus", re.I)
# An input format hippo still reads: the compaction settings file of the extension it replaces.
READ_ONLY_NAMES = ("hippocampus.config.json",)


def internal_names(text: str) -> list[str]:
    """The internal document names in ``text`` (a file name hippo reads is not one)."""
    for name in READ_ONLY_NAMES:
        text = text.replace(name, "")
    return INTERNAL_NAMES.findall(text)
