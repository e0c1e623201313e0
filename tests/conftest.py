"""Shared fixtures: a movable clock and memories opened on real SQLite files with the fake embedder."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
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
def make_mem(db_path: Path, clock: Clock, embedder: FakeEmbedder, api: str) -> Iterator[Callable[..., "hippo.Memory"]]:
    """``make_mem("bob")`` opens the shared db file for another agent (same clock and embedder by default);
    under the ``async`` parameter, an AsyncMemory driven through its coroutines (support.SyncView)."""
    opened: list[Any] = []

    def make(agent_id: str = "alice", **kwargs: Any) -> "hippo.Memory":
        kwargs.setdefault("embedder", embedder)
        kwargs.setdefault("clock", clock)
        path = kwargs.pop("path", db_path)
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
