"""Shared fixtures: a movable clock, and memories opened with the fake embedder on a real SQLite
file or a real PostgreSQL database. ``tests/contract`` is the contract suite: every test there runs
on both backends (its conftest makes sure of it). Elsewhere, a test that asks for ``db`` or builds
its memories with ``make_mem`` runs on both too, unless it says ``@pytest.mark.sqlite_only`` (it
reads SQLite's own files, plans or schema; those live under ``tests/stores``).
``HIPPO_TEST_BACKENDS=sqlite`` skips PostgreSQL for a quick local run."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from pg import PostgresForTests  # before any test clears HIPPO_*: it reads HIPPO_PGTEST_ROOT
from support import START, Clock, SyncView, counts, sql  # noqa: F401  (re-exported for tests)

import hippo
from hippo.providers.fake import FakeEmbedder


@pytest.fixture(autouse=True)
def _no_ambient_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Keep a developer's hippo.toml or HIPPO_* variables out of the tests."""
    import os

    for name in list(os.environ):
        if name.startswith("HIPPO_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HIPPO_CONFIG", str(tmp_path / "no-such-hippo.toml"))


BACKENDS = tuple(os.environ.get("HIPPO_TEST_BACKENDS", "sqlite,postgres").split(","))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "sqlite_only: reads SQLite's files or tables; runs on SQLite only")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" in metafunc.fixturenames:
        only = metafunc.definition.get_closest_marker("sqlite_only") is not None
        metafunc.parametrize("backend", ["sqlite"] if only else list(BACKENDS), scope="function")


@pytest.fixture(scope="session")
def postgres() -> Iterator[Any]:
    """The session's PostgreSQL server (started on first use)."""

    server = PostgresForTests()
    yield server
    server.close()


@pytest.fixture
def db(backend: str, db_path: Path, request: pytest.FixtureRequest) -> Iterator[str]:
    """This test's database: a SQLite file, or a fresh PostgreSQL database."""
    if backend == "sqlite":
        yield str(db_path)
        return
    server = request.getfixturevalue("postgres")
    url = server.new_database()
    yield url
    server.drop(url)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "hippo.db"


@pytest.fixture
def embedder() -> FakeEmbedder:
    return FakeEmbedder()


@pytest.fixture(params=["sync", "async"])
def api(request: pytest.FixtureRequest) -> str:
    """Every behaviour test through ``hippo.open`` and again through ``hippo.open_async``."""
    return request.param


@pytest.fixture
def make_mem(db: str, clock: Clock, embedder: FakeEmbedder, api: str) -> Iterator[Callable[..., "hippo.Memory"]]:
    """``make_mem("bob")`` opens the test's database for another agent (same clock and embedder by
    default); under the ``async`` parameter, an AsyncMemory driven through its coroutines (support.SyncView)."""
    opened: list[Any] = []

    def make(agent_id: str = "alice", **kwargs: Any) -> "hippo.Memory":
        kwargs.setdefault("embedder", embedder)
        kwargs.setdefault("clock", clock)
        path = kwargs.pop("path", db)
        if api == "async":
            memory: Any = SyncView(hippo.open_async(path, agent_id=agent_id, **kwargs))
        else:
            memory = hippo.open(path, agent_id=agent_id, **kwargs)
        opened.append(memory)
        return memory

    yield make
    for memory in opened:
        try:
            memory.close()
        except Exception:
            pass


@pytest.fixture
def mem(make_mem: Callable[..., "hippo.Memory"]) -> "hippo.Memory":
    return make_mem("alice")


@pytest.fixture(scope="session")
def local_embedder():
    """The real all-MiniLM-L6-v2, loaded once for the session."""
    pytest.importorskip("onnxruntime")
    from hippo.providers.local import LocalEmbedder

    return LocalEmbedder()
