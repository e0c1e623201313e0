"""``hippo serve`` starts its maintenance schedule when ``prune_schedule`` is set, and not otherwise."""

from __future__ import annotations

import pytest

import hippo
from hippo.providers.fake import FakeEmbedder

pytest.importorskip("cronsim")
uvicorn = pytest.importorskip("uvicorn")


@pytest.mark.parametrize("schedule", [None, "0 4 * * *"])
def test_serve_runs_maintain_on_a_schedule_only_when_configured(db_path, monkeypatch, schedule):
    from hippo.interfaces.http import server
    from hippo.interfaces.http.schedule import MaintenanceSchedule

    started: list[object] = []
    stopped: list[object] = []
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: None)
    monkeypatch.setattr(MaintenanceSchedule, "start", lambda self: started.append(self) or self)
    monkeypatch.setattr(MaintenanceSchedule, "stop", lambda self: stopped.append(self))
    mem = hippo.open(db_path, agent_id="alice", embedder=FakeEmbedder(), max_db_bytes=10**9,
                     **({"prune_schedule": schedule} if schedule else {}))
    lines: list[str] = []
    server.serve(mem, port=0, announce=lines.append)
    assert len(started) == (1 if schedule else 0), lines
    assert len(stopped) >= len(started)  # stopped when serving ends
    mem.close()
