"""Recall's retrieval events, written behind the answer.

A recall that counts as a retrieval raises its hits' access counts and intensity and strengthens
the co-recall links among its best hits. Written inside recall, that write transaction was most of
what a touching recall cost over an untouched one (issue 34). A store queues the event instead
(:meth:`RetrievalQueue.add`) and writes it behind the answer, merged, one transaction per agent
(servers sharing a database then hold no agent's locks while waiting for another's; a write of
several agents takes them in order all the same):

- at most ``delay`` seconds after the first queued event, every agent's (a thread of the store's own);
- before any read of an agent's rows other than a recall's own (:meth:`RetrievalQueue.recall_reads`
  marks those), that agent's events, queued or being written by another thread: counts, links and
  strengths read after a recall are the ones it left. Other agents' events are not that read's to
  wait for (under load, every read waiting for every agent's bookkeeping was what bounded a
  server, issue 34); a read of no one agent writes them all. A recall itself waits only for its
  agent's events older than ``delay`` by its clock (the writer would have written them by then:
  with a clock of its own, as in tests, a month's recalls still see each other);
- when the queue holds ``limit`` events (the recall that fills it writes them);
- at close, and when the process exits normally.

A process that is killed loses what was queued: at most ``delay`` seconds of boosts (their counts,
intensity and links), never a memory. ``delay = 0`` writes the event before recall returns. On
PostgreSQL the write commits without waiting for its WAL to reach the disk (``synchronous_commit =
off``, for that transaction alone): a crash of the database server may lose the last moments of
committed bookkeeping too (at most three times ``wal_writer_delay``, 0.6 s by default), never a
memory nor any other write, and leaves the database consistent (PostgreSQL's asynchronous commit).

Merging changes nothing the events would have left one by one: counts add, an intensity boost is
capped at 1.0 either way, the last access is the latest, and a link's strength grows by the number
of recalls that returned both ends. Events for a memory forgotten meanwhile change nothing.

The same write keeps the co-recall links bounded by curation's rules
(:mod:`hippo.core.curation.rules`): a weak link fades after ``LINK_FADE``, and an agent keeps at most
``WEAK_LINKS_KEPT`` weak links (checked every ``PRUNE_EVERY`` links written).
"""

from __future__ import annotations

import atexit
import logging
import threading
import weakref
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Callable, ContextManager, Iterator, Sequence

from hippo.core.curation.rules import LINK_FADE, WEAK_LINKS_KEPT
from hippo.core.ports.audit import unaudited
from hippo.core.ports.retrievals import RetrievalBatch, RetrievalEvent
from hippo.errors import StorageError

if TYPE_CHECKING:
    from hippo.core.ports import Store

__all__ = ["DEFAULT_DELAY", "QUEUE_LIMIT", "RetrievalQueue", "merge"]

log = logging.getLogger("hippo")

DEFAULT_DELAY = 0.2  # seconds: what a killed process may lose of its recalls' boosts
QUEUE_LIMIT = 1_000  # events: the recall that fills the queue writes it
PRUNE_EVERY = 1_000  # links written between two checks of an agent's weak links against the cap

_RECALLING: ContextVar[bool] = ContextVar("hippo_recall_reads", default=False)


def merge(events: Sequence[RetrievalEvent]) -> dict[str, RetrievalBatch]:
    """Events by agent, merged in the order they happened."""
    batches: dict[str, RetrievalBatch] = {}
    for event in events:
        batch = batches.setdefault(event.agent_id, RetrievalBatch())
        batch.events.append(event)
        for chunk_id in dict.fromkeys(event.ids):
            times, last, boost = batch.chunks.get(chunk_id, (0, event.at, 0.0))
            batch.chunks[chunk_id] = (times + 1, max(last, event.at), boost + event.boost)
        for pair in dict.fromkeys(event.pairs):
            times, last = batch.links.get(pair, (0, event.at))
            batch.links[pair] = (times + 1, max(last, event.at))
    return batches


def _closer(ref: "weakref.ref[RetrievalQueue]") -> Callable[[], None]:
    """At the process's normal exit: write what a queue still holds (it may be gone already)."""
    def close() -> None:
        queue = ref()
        if queue is not None:
            queue.close()
    return close


class RetrievalQueue:
    """A store's queued retrieval events and the thread that writes them (see the module)."""

    def __init__(self, store: "Store", *, delay: float = DEFAULT_DELAY, limit: int = QUEUE_LIMIT,
                 writer: "threading.RLock | None" = None, in_write: Callable[[], bool] = lambda: False,
                 transaction: "Callable[[], ContextManager[object]] | None" = None) -> None:
        """``writer`` is the store's own lock when it has one (SQLite's one connection: taken
        around each agent's write, before the queue's; a read holding it may write the queue);
        ``in_write`` says whether this thread is inside a write (a read there does not wait for
        the queue); ``transaction`` opens the write's own transaction (the store's by default;
        PostgreSQL's commits without waiting for its WAL to reach the disk)."""
        self._store = store
        self._since_prune: dict[str, int] = {}
        self.delay = delay
        self.limit = limit
        self._events: list[RetrievalEvent] = []
        self._lock = threading.Lock()  # the queue itself: held for list work only, never across a write
        self._writing: dict[str, tuple[int, datetime]] = {}  # agent -> (thread writing it, its oldest event)
        self._written = threading.Condition(self._lock)  # an agent's write ended
        self._serial = writer if writer is not None else nullcontext()
        self._transaction = transaction if transaction is not None else store.transaction
        self._in_write = in_write
        self._wake = threading.Condition(self._lock)
        self._closed = False
        self._thread: threading.Thread | None = None
        self._at_exit = _closer(weakref.ref(self))
        atexit.register(self._at_exit)

    def add(self, event: RetrievalEvent) -> None:
        """Queue one recall's event (written at once when ``delay`` is 0 or the queue is full; a
        write that fails then leaves the recall's answer alone and the events queued)."""
        with self._lock:
            if self._closed:
                return
            self._events.append(event)
            full = len(self._events) >= self.limit
            if not full and self.delay > 0:
                self._start()
                return
        self._try(self.flush)

    def flush(self) -> None:
        """Write what is queued, now, in the caller's thread: one transaction per agent, agents
        in order (servers sharing a database lock agents in the same order: no deadlock). What
        a failed write did not reach stays queued (the oldest dropped past the limit)."""
        with self._lock:
            agents = sorted({event.agent_id for event in self._events})
        for agent_id in agents:
            self.write_agent(agent_id)

    def write_agent(self, agent_id: str, before: datetime | None = None) -> None:
        """Write one agent's queued events (those older than ``before``, when given) in one
        transaction, after any write of that agent another thread has under way: what a read of
        the agent must see is then written. Other agents' events stay queued, and other threads
        write them meanwhile. A failed write puts its events back (re-raised)."""
        with self._serial:
            events = self._claim(agent_id, before)
            if not events:
                return
            try:
                self._write(agent_id, merge(events)[agent_id])
            except BaseException:
                with self._lock:
                    self._events = [*events, *self._events][-self.limit:]
                raise
            finally:
                with self._lock:
                    del self._writing[agent_id]
                    self._written.notify_all()

    def _claim(self, agent_id: str, before: datetime | None) -> list[RetrievalEvent]:
        """The agent's events to write, taken off the queue and marked as being written by this
        thread, once no other thread writes the agent (the only wait of a read: py-spy shows it
        as this frame, for bench/load.py)."""
        me = threading.get_ident()
        with self._lock:
            while agent_id in self._writing:
                if self._writing[agent_id][0] == me:  # a read inside this thread's own write
                    return []
                self._written.wait()
            mine: list[RetrievalEvent] = []
            rest: list[RetrievalEvent] = []
            for event in self._events:
                (mine if event.agent_id == agent_id and (before is None or event.at < before) else rest).append(event)
            if mine:
                self._events = rest
                self._writing[agent_id] = (me, min(event.at for event in mine))
            return mine

    def _write(self, agent_id: str, batch: RetrievalBatch) -> None:
        """One agent's merged events in one transaction, and its links kept bounded."""
        written = self._since_prune.get(agent_id, 0) + len(batch.links)
        capped = written >= PRUNE_EVERY
        latest = max(event.at for event in batch.events)
        with unaudited(), self._transaction():  # bookkeeping, not a change (hippo.core.audit)
            self._store.write_retrievals(agent_id, batch)
            self._store.prune_links(agent_id, before=latest - LINK_FADE, keep=WEAK_LINKS_KEPT if capped else None)
        self._since_prune[agent_id] = 0 if capped else written

    def before_read(self, agent_id: str | None = None) -> None:
        """A read of the store (of ``agent_id``'s rows, when the store knows): that agent's queued
        events are written first, and any write of them under way is waited for; other agents'
        events are not the read's business (a read of no one agent writes them all). A recall's
        own reads and reads inside a write do not wait. A write that fails (another server
        holding the agent, a busy file) leaves the read to go on: the events stay queued."""
        if _RECALLING.get() or self._in_write():
            return
        if agent_id is None:
            if self._events:
                self._try(self.flush)
        elif self._waits(agent_id, None):
            self._try(lambda: self.write_agent(agent_id))

    def _waits(self, agent_id: str, before: datetime | None) -> bool:
        """Whether the agent has events (older than ``before``) queued or being written."""
        with self._lock:
            busy = self._writing.get(agent_id)
            if busy is not None and (before is None or busy[1] < before):
                return True
            return any(e.agent_id == agent_id and (before is None or e.at < before) for e in self._events)

    def _try(self, write: Callable[[], None]) -> None:
        """A write for a read or a recall: its failure is logged, never the caller's."""
        try:
            write()
        except StorageError as exc:
            log.warning("hippo: recall's retrieval counts not written yet: %s", exc)

    @contextmanager
    def recall_reads(self, agent_id: str, now: datetime) -> Iterator[None]:
        """Reads of ``agent_id``'s recall at ``now``: they rank what is written and do not wait
        for events younger than ``delay``; the agent's older ones (which the writer would have
        written by then, by the recall's own clock) are written first. Other agents' are not."""
        before = now - timedelta(seconds=self.delay)
        if (self._events or self._writing) and self._waits(agent_id, before):
            self._try(lambda: self.write_agent(agent_id, before))
        token = _RECALLING.set(True)
        try:
            yield
        finally:
            _RECALLING.reset(token)

    def pending(self) -> int:
        with self._lock:
            return len(self._events)

    def close(self) -> None:
        """Write what is queued and stop the thread (the store closes after this)."""
        with self._lock:
            self._closed = True
            self._wake.notify()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()
        atexit.unregister(self._at_exit)
        try:
            self.flush()
        except Exception as exc:  # closing all the same: what could not be written is lost
            log.warning("hippo: recall's retrieval counts lost at close: %s", exc)

    def _start(self) -> None:
        """Under the queue's lock: a thread that writes the queue ``delay`` seconds from now."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="hippo-retrievals", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        """Wait ``delay`` (a close cuts it short), write, and go once the queue is empty."""
        while True:
            with self._lock:
                if not self._closed:
                    self._wake.wait(self.delay)  # the moment's recalls join this write
                if self._closed or not self._events:
                    self._thread = None
                    return
            try:
                self.flush()
            except Exception as exc:  # kept for the next try
                log.warning("hippo: recall's retrieval counts not written yet: %s", exc)
