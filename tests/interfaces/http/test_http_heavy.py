"""One agent's heavy call beside everyone else's light ones (issue 32), on a real uvicorn server on
loopback: while agent alice's ``POST process`` is inside the model, ``/healthz`` answers and bob
recalls and stores; heavy calls beyond the bounded pool wait without holding a request thread.
Behaviour only: the timings are bench/contention.py's."""

from __future__ import annotations

import threading
import time
from typing import Iterator, Sequence

import httpx
import numpy as np
import pytest

import hippo
from hippo.providers.fake import FakeEmbedder

pytest.importorskip("fastapi")
from hippo.interfaces.http.server import BackgroundServer  # noqa: E402
from hippo.interfaces.http.service import HEAVY_WORKERS  # noqa: E402


class HeldModel(FakeEmbedder):
    """A fake embedder whose batches (more than one text: what capture embeds) wait for ``release``,
    as the local model's seconds would; single texts (a query, one stored memory) pass at once."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.inside = 0
        self.most_inside = 0
        self._count = threading.Lock()

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if len(texts) > 1:
            with self._count:
                self.inside += 1
                self.most_inside = max(self.most_inside, self.inside)
            try:
                self.release.wait(timeout=60)
            finally:
                with self._count:
                    self.inside -= 1
        return super().embed_documents(texts)

    def wait_inside(self, count: int) -> None:
        deadline = time.monotonic() + 30
        while self.inside < count and time.monotonic() < deadline:
            time.sleep(0.01)
        assert self.inside >= count, f"{self.inside} heavy calls reached the model, expected {count}"


@pytest.fixture
def held(db, clock) -> Iterator[tuple[HeldModel, str]]:
    model = HeldModel()
    base = hippo.open(db, agent_id="default", embedder=model, clock=clock)
    try:
        with BackgroundServer(base) as url:
            yield model, url
    finally:
        model.release.set()


def _talk(agent: str, n: int = 6) -> list[dict[str, str]]:
    return [{"role": "user", "id": f"{agent}-{i}", "content": f"{agent} moved the nightly build {i} to the "
             f"Frankfurt rack {i} after the outage"} for i in range(n)]


def _process_in_background(url: str, agent: str, results: dict[str, httpx.Response]) -> threading.Thread:
    def run() -> None:
        results[agent] = httpx.post(f"{url}/v1/agents/{agent}/process", timeout=60)

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_healthz_and_another_agent_answer_while_one_agent_processes(held):
    model, url = held
    with httpx.Client(base_url=url, timeout=5) as client:
        bob = "/v1/agents/bob"
        assert client.post(f"{bob}/memories", json={"content": "Bob's VPN moved to wireguard"}).status_code == 201
        assert client.post("/v1/agents/alice/sessions/s-1/messages",
                           json={"messages": _talk("alice")}).status_code == 202
        results: dict[str, httpx.Response] = {}
        runner = _process_in_background(url, "alice", results)
        model.wait_inside(1)  # alice's process holds the model until released
        try:
            assert client.get("/healthz").json()["status"] == "ok"
            (hit,) = client.get(f"{bob}/memories", params={"q": "which VPN does bob use", "limit": 1}).json()["hits"]
            assert hit["chunk"]["content"] == "Bob's VPN moved to wireguard"
            assert client.post(f"{bob}/memories", json={"content": "Bob's laptop is a ThinkPad"}).status_code == 201
            assert "alice" not in results  # all of it answered while alice's call was still running
        finally:
            model.release.set()
        runner.join(timeout=30)
    assert results["alice"].json()["messages"] == 6


def test_heavy_calls_beyond_the_pool_wait_off_the_request_threads(held):
    model, url = held
    agents = [f"agent{i}" for i in range(HEAVY_WORKERS + 3)]
    for agent in agents:
        httpx.post(f"{url}/v1/agents/{agent}/sessions/s-1/messages", json={"messages": _talk(agent)})
    results: dict[str, httpx.Response] = {}
    runners = [_process_in_background(url, agent, results) for agent in agents]
    model.wait_inside(HEAVY_WORKERS)
    time.sleep(0.3)  # room for any call beyond the pool to reach the model too
    try:
        assert model.inside == HEAVY_WORKERS  # the rest wait for the pool
        assert httpx.get(f"{url}/healthz", timeout=5).json()["status"] == "ok"
    finally:
        model.release.set()
    for runner in runners:
        runner.join(timeout=30)
    assert model.most_inside == HEAVY_WORKERS
    assert sorted(r.json()["messages"] for r in results.values()) == [6] * len(agents)
