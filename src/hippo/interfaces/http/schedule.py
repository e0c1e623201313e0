"""Maintenance on a schedule, for ``hippo serve`` only: the core starts no thread of its own (an
embedded ``Memory`` works only when it is called).

``prune_schedule`` (for example ``"0 4 * * *"``, 4 am daily) is a cron expression read by ``cronsim``
in UTC; unset, nothing is scheduled. At each time the server runs ``maintain()``, which archives
only when the database is over ``max_db_bytes``, and reports one line.

``consolidate_every`` (seconds; unset, nothing is scheduled): at each interval the server
runs ``consolidate()`` for every agent with short-term entries (``Memory.short_term_agents``: this
server's in-process buffers, and the database's buffer whichever server recorded its entries), and
reports one line.

``capture_every`` (seconds; unset, nothing is scheduled): at each interval the server runs
``process_pending()`` for every agent with observed messages, and reports a line when there were any.

``audit_retention_days`` (unset, the trail is kept whole): once a day the server trims every audit
trail to that many days, each leaving a signed checkpoint, and reports a line when it removed any.
"""

from __future__ import annotations

import threading
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Callable, Self

from hippo.errors import ConfigError, HippoError
from hippo.interfaces.http.service import Run

if TYPE_CHECKING:
    from hippo.core.memory import Memory
    from hippo.interfaces.http.service import Service

__all__ = ["AuditTrimSchedule", "CaptureSchedule", "ConsolidationSchedule", "HeapRelease", "MaintenanceSchedule",
           "next_run"]

STOP_GRACE = 60  # seconds a stopping server waits for a scheduled run under way


def next_run(expression: str, after: datetime) -> datetime:
    """The first time after ``after`` that the cron ``expression`` names (ConfigError if it is not one)."""
    from cronsim import CronSim, CronSimError

    try:
        return next(CronSim(expression, after.astimezone(timezone.utc)))
    except (CronSimError, StopIteration) as exc:
        raise ConfigError(f"setting prune_schedule is not a cron expression ({expression!r}): {exc}") from None


class _Periodic:
    """A daemon thread that runs :meth:`run_once` whenever :meth:`_wait` has passed and says its
    line; ``stop()`` ends it. Subclasses name the thread, the first line and the wait."""

    name = "hippo-periodic"
    task = "periodic"  # names the run in a failure line and in the metrics

    def __init__(self, say: Callable[[str], None], *, on_run: Callable[[Run], None] | None = None) -> None:
        self.say = say
        self.on_run = on_run  # told of each run (the server's metrics)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)

    def start(self) -> Self:
        if line := self.first_line():
            self.say(line)
        self._thread.start()
        return self

    @property
    def stopping(self) -> bool:
        """Whether :meth:`stop` was called: a run under way finishes its agent and starts no other."""
        return self._stop.is_set()

    def stop(self) -> None:
        """Stop after the run under way, if any: an agent's run ends with its last batch committed
        (capture moves each session's cursor with the memories it wrote), and no further agent starts."""
        self._stop.set()
        self._thread.join(timeout=STOP_GRACE)

    def _run(self) -> None:
        while not self._stop.wait(self._wait()):
            line = self.run_once()
            if line:  # an empty line: nothing worth saying this time
                self.say(line)
            self._ran()

    def first_line(self) -> str:
        raise NotImplementedError

    def _wait(self) -> float:
        raise NotImplementedError

    def _ran(self) -> None:
        """After each run (the next cron time is worked out here)."""

    def run_once(self) -> str:
        raise NotImplementedError

    def _report(self, ok: bool, archived: int = 0) -> None:
        if self.on_run is not None:
            self.on_run(Run(self.task, "schedule", ok, archived))


class MaintenanceSchedule(_Periodic):
    """Runs ``mem.maintain()`` at each time of the cron ``expression``."""

    name = "hippo-maintain"
    task = "maintenance"

    def __init__(self, mem: "Memory", expression: str, say: Callable[[str], None], *,
                 on_run: Callable[[Run], None] | None = None) -> None:
        self.mem, self.expression = mem, expression
        self.next = next_run(expression, mem.now())  # a bad expression fails at start, not at 4 am
        super().__init__(say, on_run=on_run)

    def first_line(self) -> str:
        return f"maintenance (prune_schedule {self.expression!r}): next at {self.next.isoformat()}"

    def _wait(self) -> float:
        return max(0.0, (self.next - self.mem.now()).total_seconds())

    def _ran(self) -> None:
        self.next = next_run(self.expression, max(self.mem.now(), self.next))

    def run_once(self) -> str:
        try:
            result = self.mem.maintain()
        except HippoError as exc:
            self._report(False)
            return f"maintenance failed: {exc}"
        self._report(True, result.archived)
        if result.cap is None:
            return "maintenance: no size cap (max_db_bytes), nothing to do"
        return (f"maintenance: {result.bytes_before:,} bytes, cap {result.cap:,}; archived {result.archived}, "
                f"now {result.bytes_after:,}" + (f" ({result.note})" if result.note else ""))


class HeapRelease(_Periodic):
    """Every ``EVERY`` seconds, hands the memory the C allocator holds free back to the system
    (glibc's ``malloc_trim``; elsewhere nothing runs). A server's threads free what each request
    allocated in many arenas, and glibc keeps most of it: in a 12-minute soak of ``hippo serve``
    on SQLite the server's own memory grew 22.8 % without this and 10.1 % with it (``bench/soak.py``)."""

    name = "hippo-heap"
    task = "heap_release"
    EVERY = 30.0

    def __init__(self, say: Callable[[str], None]) -> None:
        self._trim = _malloc_trim()
        super().__init__(say)

    def start(self) -> Self:
        return super().start() if self._trim is not None else self

    def stop(self) -> None:
        if self._trim is not None:
            super().stop()

    def first_line(self) -> str:
        return ""

    def _wait(self) -> float:
        return self.EVERY

    def run_once(self) -> str:
        assert self._trim is not None
        self._trim(0)
        return ""


def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or None where the C library is another (macOS, musl, Windows)."""
    import ctypes
    import platform

    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return None
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


class AuditTrimSchedule(_Periodic):
    """Trims every audit trail of the database to ``audit_retention_days`` once a day, the first
    time a minute after the start (each trim leaves a signed checkpoint)."""

    name = "hippo-audit-trim"
    task = "audit_trim"
    FIRST, EVERY = 60.0, 86_400.0

    def __init__(self, mem: "Memory", days: int, say: Callable[[str], None], *,
                 on_run: Callable[[Run], None] | None = None) -> None:
        self.mem, self.days, self._first = mem, days, True
        super().__init__(say, on_run=on_run)

    def first_line(self) -> str:
        return f"audit trail (audit_retention_days {self.days}): records older than that trimmed daily"

    def _wait(self) -> float:
        return self.FIRST if self._first else self.EVERY

    def _ran(self) -> None:
        self._first = False

    def run_once(self) -> str:
        try:
            removed = self.mem.trim_audit(every_agent=True)
        except HippoError as exc:
            self._report(False)
            return f"audit trim failed: {exc}"
        self._report(True)
        return f"audit trail: trimmed {removed} records older than {self.days} days" if removed else ""


class _EachAgent(_Periodic):
    """Every ``every`` seconds, runs :meth:`run_agent` for each agent :meth:`agents` names and adds
    up the ``counters`` of what the runs gave; :meth:`summary` makes the line, and an agent whose
    run failed is named after it (the others still ran)."""

    counters: tuple[str, ...] = ()

    def __init__(self, service: "Service", every: float, say: Callable[[str], None]) -> None:
        self.service, self.every = service, every
        super().__init__(say, on_run=service.ran)

    def _wait(self) -> float:
        return self.every

    def agents(self) -> list[str]:
        raise NotImplementedError

    def run_agent(self, agent: str) -> object | None:
        """One agent's run, or None when it had nothing to do (then it is not counted)."""
        raise NotImplementedError

    def summary(self, agents: int, ran: int, totals: dict[str, int]) -> str:
        """The line for ``agents`` named, ``ran`` of them run, with these totals ("" says nothing)."""
        raise NotImplementedError

    def run_once(self) -> str:
        try:
            agents = self.agents()
        except HippoError as exc:
            self._report(False)
            return f"{self.task} failed: {exc}"
        totals, failed, ran = dict.fromkeys(self.counters, 0), [], 0
        for agent in agents:
            if self.stopping:  # the server is stopping: the other agents wait for the next start
                break
            try:
                done = self.run_agent(agent)
            except HippoError as exc:
                failed.append(f"{agent}: {exc}")
                continue
            if done is None:
                continue
            ran += 1
            for name in totals:
                totals[name] += getattr(done, name)
        self._report(not failed)
        line = self.summary(len(agents), ran, totals)
        return line + (f"; failed for {len(failed)}: {failed[0]}" if failed else "")


class ConsolidationSchedule(_EachAgent):
    """Consolidates every agent with short-term entries each ``every`` seconds."""

    name = "hippo-consolidate"
    task = "consolidation"
    counters = ("consolidated", "merged", "pruned", "remaining")

    def first_line(self) -> str:
        return f"consolidation (consolidate_every {self.every:g} s): every agent with short-term entries"

    def agents(self) -> list[str]:
        """The agents with short-term entries, in the database or in this server's buffers."""
        return self.service.base.short_term_agents()

    def run_agent(self, agent: str) -> object | None:
        mem = self.service.memory(agent)
        return mem.consolidate() if mem.short_term() else None

    def summary(self, agents: int, ran: int, totals: dict[str, int]) -> str:
        return (f"consolidation: {ran} agent{'' if ran == 1 else 's'} with short-term entries; "
                f"consolidated {totals['consolidated']} (merged {totals['merged']}), pruned {totals['pruned']}, "
                f"{totals['remaining']} remain short-term")


class CaptureSchedule(_EachAgent):
    """Processes what every agent observed each ``every`` seconds; says a line only when there was
    something to process (or a failure), so a short period does not fill the log."""

    name = "hippo-capture"
    task = "capture"
    counters = ("messages", "windows", "memories", "merged", "facts")

    def first_line(self) -> str:
        return f"capture (capture_every {self.every:g} s): every agent with observed messages"

    def agents(self) -> list[str]:
        """The agents with messages observed and not yet processed."""
        return self.service.base.pending_agents()

    def run_agent(self, agent: str) -> object | None:
        return self.service.memory(agent).process_pending()

    def summary(self, agents: int, ran: int, totals: dict[str, int]) -> str:
        if not agents:
            return ""
        return (f"capture: {agents} agent{'' if agents == 1 else 's'} with observed messages; processed "
                f"{totals['messages']} in {totals['windows']} windows: {totals['memories']} memories (merged "
                f"{totals['merged']}), {totals['facts']} facts")
