"""Shared by the HTTP route tests: the server's own memory (agent ``default``, the fake embedder,
the test's clock) and a client of a real uvicorn server on loopback serving it."""

from __future__ import annotations

from typing import Iterator

import pytest

import hippo
from hippo.providers.fake import FakeEmbedder


@pytest.fixture
def base(db, clock) -> "hippo.Memory":
    return hippo.open(db, agent_id="default", embedder=FakeEmbedder(), clock=clock)


@pytest.fixture
def api(base) -> Iterator[object]:
    httpx = pytest.importorskip("httpx")
    pytest.importorskip("fastapi")
    from hippo.interfaces.http.server import BackgroundServer

    with BackgroundServer(base) as url, httpx.Client(base_url=url, timeout=30) as client:
        yield client
