"""hippo serve's maintenance schedule (seed 003's prune_schedule, cron syntax)."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone

import pytest

import hippo
from hippo.errors import ConfigError
from hippo.providers.fake import FakeEmbedder

pytest.importorskip("cronsim")
from hippo.interfaces.http.schedule import MaintenanceSchedule, next_run  # noqa: E402


def test_next_run_reads_cron_in_utc():
    assert next_run("0 4 * * *", datetime(2026, 11, 25, 5, tzinfo=timezone.utc)) == \
        datetime(2026, 11, 26, 4, tzinfo=timezone.utc)
    assert next_run("*/15 * * * *", datetime(2026, 11, 25, 5, 7, tzinfo=timezone.utc)).minute == 15
    with pytest.raises(ConfigError, match="prune_schedule"):
        next_run("every day at four", datetime(2026, 11, 25, tzinfo=timezone.utc))


def test_the_schedule_runs_maintain_when_its_time_comes(db_path, clock):
    mem = hippo.open(db_path, agent_id="alice", embedder=FakeEmbedder(dimension=1024), clock=clock,
                     max_db_bytes=1, prune_schedule="*/5 * * * *")
    mem.store_memories([f"Note {i} about the pond" for i in range(20)])
    lines: list[str] = []
    said = threading.Event()

    def say(line: str) -> None:
        lines.append(line)
        if line.startswith("maintenance:"):
            said.set()

    schedule = MaintenanceSchedule(mem, mem.settings.prune_schedule, say)
    clock.set(schedule.next + timedelta(seconds=1))  # its time has come
    schedule.start()
    assert said.wait(10), lines
    schedule.stop()
    assert lines[0].startswith("maintenance (prune_schedule '*/5 * * * *'): next at")
    assert "archived 20" in lines[1] and mem.stats().archived == 20 and mem.stats().memories == 0
    mem.close()


def test_without_a_cap_it_says_so_and_a_bad_schedule_fails_at_start(db_path, clock):
    mem = hippo.open(db_path, agent_id="alice", embedder=FakeEmbedder(), clock=clock)
    assert MaintenanceSchedule(mem, "0 4 * * *", print).run_once() == \
        "maintenance: no size cap (max_db_bytes), nothing to do"
    with pytest.raises(ConfigError):
        MaintenanceSchedule(mem, "61 * * * *", print)
    mem.close()


def test_a_stopping_server_lets_the_agent_under_way_finish_and_starts_no_other(db_path, clock):
    from hippo.interfaces.http.schedule import CaptureSchedule
    from hippo.interfaces.http.service import Service

    base = hippo.open(db_path, agent_id="alice", embedder=FakeEmbedder(), clock=clock)
    service = Service(base)
    for agent in ("alice", "bob", "carol"):
        service.memory(agent).observe([{"role": "user", "content": f"I keep bees on the roof, says {agent}."}],
                                      session_id="roof")
    began, ran = threading.Event(), []

    class Slow(CaptureSchedule):
        def run_agent(self, agent: str) -> object | None:
            began.set()
            while not self.stopping:  # the server is asked to stop while this agent's run is under way
                threading.Event().wait(0.01)
            ran.append(agent)
            return super().run_agent(agent)

    schedule = Slow(service, 0.01, lambda line: None).start()
    assert began.wait(10)
    schedule.stop()  # returns once the run under way is done
    assert len(ran) == 1  # no other agent started
    waiting = set(service.base.pending_agents())
    assert waiting == {"alice", "bob", "carol"} - {ran[0]}  # the one under way finished: its messages processed
    service.close()


def test_with_a_retention_the_server_trims_every_trail_and_each_still_verifies(db_path, clock, monkeypatch):
    from hippo.interfaces.http.schedule import AuditTrimSchedule

    mem = hippo.open(db_path, agent_id="alice", embedder=FakeEmbedder(), clock=clock, audit_retention_days=30)
    for agent in ("alice", "bob"):
        with mem.for_agent(agent) as other:
            other.store_memories([f"{agent} note {i}" for i in range(3)])
    clock.advance(days=40)
    mem.for_agent("bob").store_memory("a fresh note")  # newer than the retention: kept
    lines: list[str] = []
    said = threading.Event()

    def say(line: str) -> None:
        lines.append(line)
        if line.startswith("audit trail: trimmed"):
            said.set()

    monkeypatch.setattr(AuditTrimSchedule, "FIRST", 0.05)  # a minute after the start, here at once
    schedule = AuditTrimSchedule(mem, 30, say).start()
    assert said.wait(10), lines
    schedule.stop()
    assert lines == ["audit trail (audit_retention_days 30): records older than that trimmed daily",
                     "audit trail: trimmed 2 records older than 30 days"]
    assert [r.kind for r in mem.audit().items] == ["checkpoint"]
    assert [r.kind for r in mem.for_agent("bob").audit().items] == ["checkpoint", "change"]  # newest first
    assert mem.verify_audit(every_agent=True).ok
    mem.close()


def test_the_server_hands_the_allocators_free_memory_back_now_and_then(monkeypatch):
    from hippo.interfaces.http import schedule as periodic

    trim = periodic._malloc_trim()
    assert trim is not None and trim(0) in (0, 1)  # glibc here: the real call answers
    calls = threading.Event()
    monkeypatch.setattr(periodic, "_malloc_trim", lambda: lambda pad: calls.set() or 1)
    monkeypatch.setattr(periodic.HeapRelease, "EVERY", 0.01)
    lines: list[str] = []
    release = periodic.HeapRelease(lines.append).start()
    assert calls.wait(5)
    release.stop()
    assert lines == []  # it says nothing
