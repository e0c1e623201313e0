"""Shared fixtures: a movable clock, and memories opened with the fake embedder on a real SQLite
file or a real PostgreSQL database. ``tests/contract`` is the contract suite: every test there runs
on both backends (its conftest makes sure of it). Elsewhere, a test that asks for ``db`` or builds
its memories with ``make_mem`` runs on both too, unless it says ``@pytest.mark.sqlite_only`` (it
reads SQLite's own files, plans or schema; those live under ``tests/stores``).
``HIPPO_TEST_BACKENDS=sqlite`` skips PostgreSQL for a quick local run.

A contract test that builds its memories with ``make_mem`` runs through three APIs (``api``):
``hippo.open`` (sync), ``hippo.open_async`` (async) and ``hippo.connect`` to a loopback server
serving the test's own memory (remote; on SQLite only: the client does not see which store is
behind the server); the other tests through the first two. A contract test that reads what a
client cannot have (``mem.store``, the settings, the agent tools, a file the server would read)
says ``@pytest.mark.embedded_only("why")`` and runs on the first two only.

The suite runs in tiers: the markers registered in pyproject.toml (postgres, remote, async_api,
model, chromium, node, install, slow) say what a test needs beyond the core on SQLite, and
``bash scripts/test.sh --fast`` leaves out every marked test. Most are set here, from the test's
parameters, fixtures and folder (``_tiers``); the few a test cannot show that way are marked by
hand where the test is written."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from pg import PostgresForTests  # before any test clears HIPPO_*: it reads HIPPO_PGTEST_ROOT
from support import BACKENDS, START, Clock, Served, SyncView, counts, sql  # noqa: F401  (re-exported for tests)

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


CONTRACT = Path(__file__).parent / "contract"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "sqlite_only: reads SQLite's files or tables; runs on SQLite only")
    config.addinivalue_line("markers", "embedded_only(reason): reads what a hippo.connect client cannot have; "
                                       "runs through hippo.open and hippo.open_async only")


TESTS = Path(__file__).parent
# A folder's tier: the fuzz (thousands of generated calls a test) and the benchmark scripts' smoke
# runs are slow; tests/client reaches a server through hippo.connect; tests/clients runs node.
FOLDER_TIERS = {"fuzz": "slow", "bench": "slow", "client": "remote", "clients": "node"}


def _tiers(item: pytest.Item) -> set[str]:
    """The tier markers a test shows by its parameters, its fixtures and its folder."""
    callspec = getattr(item, "callspec", None)
    params = callspec.params if callspec is not None else {}
    fixtures = set(getattr(item, "fixturenames", ()))
    found = set()
    if params.get("backend") == "postgres" or "postgres" in fixtures:
        found.add("postgres")  # the scale-out tests too: their servers share one PostgreSQL database
    if params.get("api") == "remote":
        found.add("remote")
    if params.get("api") == "async":
        found.add("async_api")  # the same behaviour again through hippo.open_async (its own tests are unmarked)
    if "local_embedder" in fixtures:
        found.add("model")
    if "browser" in fixtures or "chromium" in item.name:
        found.add("chromium")
    folder = item.path.relative_to(TESTS).parts[0] if TESTS in item.path.parents else ""
    if folder in FOLDER_TIERS:
        found.add(FOLDER_TIERS[folder])
    return found


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for name in sorted(_tiers(item) - {marker.name for marker in item.iter_markers()}):
            item.add_marker(name)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" not in metafunc.fixturenames:
        return
    if "make_mem" in metafunc.fixturenames and CONTRACT in metafunc.definition.path.parents:
        return  # tests/contract/conftest.py parametrises the api and the backend together
    only = metafunc.definition.get_closest_marker("sqlite_only") is not None
    metafunc.parametrize("backend", ["sqlite"] if only else list(BACKENDS), scope="function")


@pytest.fixture(scope="session", autouse=True)
def _served_memories_closed() -> Iterator[None]:
    """The remote API's loopback servers shut down before the session ends (support.Served)."""
    yield
    Served.wait_all()


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
    """Every behaviour test through ``hippo.open`` and again through ``hippo.open_async``; the
    contract suite's through ``hippo.connect`` too (tests/contract/conftest.py parametrises those)."""
    return request.param


@pytest.fixture
def make_mem(db: str, clock: Clock, embedder: FakeEmbedder, api: str) -> Iterator[Callable[..., "hippo.Memory"]]:
    """``make_mem("bob")`` opens the test's database for another agent (same clock and embedder by
    default); under the ``async`` parameter, an AsyncMemory driven through its coroutines (support.SyncView);
    under ``remote``, that memory served on loopback and reached through ``hippo.connect`` (support.Served)."""
    opened: list[Any] = []
    served: list[Any] = []

    def make(agent_id: str = "alice", **kwargs: Any) -> "hippo.Memory":
        kwargs.setdefault("embedder", embedder)
        kwargs.setdefault("clock", clock)
        path = kwargs.pop("path", db)
        if api == "async":
            memory: Any = SyncView(hippo.open_async(path, agent_id=agent_id, **kwargs))
        elif api == "remote":
            served.append(Served(hippo.open(path, agent_id=agent_id, **kwargs)))
            memory = served[-1].client
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
    Served.stop_all(served)


@pytest.fixture
def mem(make_mem: Callable[..., "hippo.Memory"]) -> "hippo.Memory":
    return make_mem("alice")


@pytest.fixture(scope="session")
def local_embedder():
    """The real all-MiniLM-L6-v2, loaded once for the session."""
    pytest.importorskip("onnxruntime")
    from hippo.providers.local import LocalEmbedder

    return LocalEmbedder()
