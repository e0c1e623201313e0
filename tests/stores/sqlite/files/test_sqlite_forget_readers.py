"""A forget behind a long reader: it returns at once and truthfully, other agents are not held
up, and the text leaves the files as soon as the reader lets go."""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
import time

import httpx
import pytest
from traces import FILLER, SECRET, occurrences, total

pytestmark = [pytest.mark.sqlite_only,  # SQLite's readers, WAL checkpoints and scrub retries
              pytest.mark.slow]  # readers held open in other processes while the scrub waits for them

READER = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN")
conn.execute("SELECT count(*) FROM chunks").fetchone()  # a snapshot from before the forget
print("reading", flush=True)
time.sleep(float(sys.argv[2]))
conn.execute("COMMIT")
"""


class Reader:
    """Another process holding a read transaction on the database for ``seconds``."""

    def __init__(self, db_path, seconds: float) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", READER, str(db_path), str(seconds)],
                                     stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout.readline().strip() == "reading"

    def wait(self) -> None:
        self.proc.wait(timeout=60)


def wait_until(condition, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


def timed(call) -> tuple[object, float]:
    start = time.monotonic()
    result = call()
    return result, time.monotonic() - start


def test_a_forget_behind_a_30_second_reader_returns_at_once_and_finishes_the_scrub(make_mem, db_path):
    alice = make_mem("alice")
    bob = alice.for_agent("bob")  # one store for both, as `hippo serve` has: its lock is shared
    alice.store_memories(FILLER[:5])
    alice.store_memory(f"The vault code is {SECRET}")
    bob.store_memories(FILLER[5:10])
    reader = Reader(db_path, 30)

    other: list[float] = []

    def bobs_requests() -> None:  # another agent's requests while the forget runs and after
        for _ in range(10):
            other.append(timed(lambda: (bob.stats(), bob.recall_memories("tomatoes")))[1])
            time.sleep(0.2)

    background = threading.Thread(target=bobs_requests)
    background.start()
    result, took = timed(lambda: alice.forget_memory(SECRET))
    background.join()

    assert took < 5, f"forget took {took:.1f} s behind a reader"
    assert result.count == 1 and result.deleted[0].content == f"The vault code is {SECRET}"
    assert result.scrubbed is False and "reading" in result.note  # truthful: the WAL still holds it
    assert total(occurrences(db_path)) > 0
    assert max(other) < 1, f"another agent waited {max(other):.1f} s"
    assert alice.forget_memory(SECRET, preview=True).count == 0  # the row is gone all the same

    reader.wait()
    assert wait_until(lambda: alice.store.pending_scrub() is None)
    assert total(occurrences(db_path)) == 0


def test_delete_memory_reports_a_pending_scrub_too(mem, db_path):
    target = mem.store_memory(f"Locker combination {SECRET}")
    reader = Reader(db_path, 3)
    gone = mem.delete_memory(target.id)
    assert (gone.id, gone.scrubbed) == (target.id, False)
    reader.wait()
    assert wait_until(lambda: mem.store.pending_scrub() is None)
    assert total(occurrences(db_path)) == 0


def test_without_readers_a_forget_is_scrubbed_before_it_returns(mem, db_path):
    mem.store_memory(f"Bike lock code {SECRET}")
    result = mem.forget_memory(SECRET)
    assert (result.count, result.scrubbed, result.note) == (1, True, None)
    assert total(occurrences(db_path)) == 0


def test_closing_the_store_tries_the_scrub_once_more(make_mem, db_path):
    mem = make_mem("alice")
    mem.store_memory(f"Gate code {SECRET}")
    reader = Reader(db_path, 2)
    assert mem.forget_memory(SECRET).scrubbed is False
    reader.wait()
    mem.close()
    assert total(occurrences(db_path)) == 0


def test_http_forget_behind_a_reader_answers_200_with_the_truth(make_mem, db_path):
    pytest.importorskip("fastapi")
    from hippo.interfaces.http.server import BackgroundServer

    mem = make_mem("alice")
    mem.store_memory(f"Alarm code {SECRET}")
    reader = Reader(db_path, 4)
    with BackgroundServer(mem) as url:
        response = httpx.post(f"{url}/v1/agents/alice/forget", json={"description": SECRET}, timeout=10)
    assert response.status_code == 200, response.text
    body = response.json()
    assert len(body["deleted"]) == 1 and body["scrubbed"] is False and body["note"]
    reader.wait()


def test_a_main_file_that_cannot_be_written_is_reported_not_raised(mem, db_path):
    """The delete lands in the WAL; copying it into an immutable main file fails. The forget says
    so (it deleted), and the scrub completes once the file can be written again."""
    if shutil.which("chattr") is None:
        pytest.skip("chattr is not installed")
    mem.store_memory(f"Safe code {SECRET}")
    if subprocess.run(["chattr", "+i", str(db_path)], capture_output=True).returncode != 0:
        pytest.skip("this file system or user cannot set the immutable flag")
    try:
        result = mem.forget_memory(SECRET)
    finally:
        subprocess.run(["chattr", "-i", str(db_path)], check=True)
    assert (result.count, result.scrubbed) == (1, False) and "could not be copied" in result.note
    assert mem.forget_memory(SECRET, preview=True).count == 0  # deleted all the same: a retry finds nothing
    assert wait_until(lambda: mem.store.pending_scrub() is None)
    assert total(occurrences(db_path)) == 0


LATER = "Plumtwaddle-Hexagram"


def raw(db_path) -> bytes:
    return b"".join(p.read_bytes() for p in (db_path, db_path.with_name(db_path.name + "-wal")) if p.exists())


def test_a_delete_after_the_retry_succeeded_is_not_taken_as_scrubbed(make_mem, db_path, monkeypatch):
    """The background retry's checkpoint succeeds for a first forget; a second forget commits behind
    a new reader before the retry records that success. The retry carries on for the second."""
    from hippo.stores.sqlite.scrub import Scrubber

    paused, resume = threading.Event(), threading.Event()
    checkpoint = Scrubber._checkpoint

    def held(self) -> bool:  # the retry thread stops between its checkpoint and its bookkeeping
        busy = checkpoint(self)
        if not busy and threading.current_thread().name == "hippo-scrub" and not paused.is_set():
            paused.set()
            resume.wait(30)
        return busy

    monkeypatch.setattr(Scrubber, "_checkpoint", held)
    mem = make_mem("alice")
    mem.store_memories([f"Door code {SECRET}", f"Shed code {LATER}"])
    first = Reader(db_path, 1)
    assert mem.forget_memory(SECRET).scrubbed is False
    first.wait()
    assert paused.wait(10), "the retry never succeeded"
    second = Reader(db_path, 1)
    assert mem.forget_memory(LATER).scrubbed is False
    resume.set()
    second.wait()
    assert wait_until(lambda: mem.store.pending_scrub() is None)
    assert LATER.encode() not in raw(db_path), "the scrub was taken as done with the second forget's text left"


def test_a_failing_checkpoint_is_reported_and_retried(mem, db_path, monkeypatch):
    """Any SQLite error of the checkpoint (here injected: an I/O error) is the forget's note, not
    its exception; the retry finishes once the checkpoint works again."""
    import sqlite3

    from hippo.stores.sqlite.scrub import Scrubber

    failing = threading.Event()
    failing.set()
    checkpoint = Scrubber._checkpoint

    def flaky(self) -> bool:
        if failing.is_set():
            raise sqlite3.OperationalError("disk I/O error")
        return checkpoint(self)

    monkeypatch.setattr(Scrubber, "_checkpoint", flaky)
    mem.store_memory(f"Cellar code {SECRET}")
    result = mem.forget_memory(SECRET)
    assert (result.count, result.scrubbed) == (1, False) and "disk I/O error" in result.note
    assert result.to_dict()["scrubbed"] is False and "disk I/O error" in result.to_dict()["note"]
    assert mem.forget_memory(SECRET, preview=True).count == 0  # deleted: a retry would find nothing
    assert total(occurrences(db_path)) > 0
    failing.clear()
    assert wait_until(lambda: mem.store.pending_scrub() is None)
    assert total(occurrences(db_path)) == 0


HOLDER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN")
conn.execute("SELECT count(*) FROM chunks").fetchone()
print("reading", flush=True)
sys.stdin.readline()
conn.execute("COMMIT")  # the snapshot goes, the connection stays
print("idle", flush=True)
sys.stdin.readline()
"""

FORGETTER = """
import os, sys
import hippo
mem = hippo.open(sys.argv[1], agent_id="alice", embedder="fake")
print(mem.forget_memory(sys.argv[2]).scrubbed, flush=True)
os._exit(0)  # gone before the reader let go, without closing
"""


def test_the_next_open_finishes_a_scrub_a_process_left_behind(make_mem, db_path):
    with make_mem("alice") as mem:
        mem.store_memory(f"Garage code {SECRET}")
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(db_path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "reading"
        forgetter = subprocess.run([sys.executable, "-c", FORGETTER, str(db_path), SECRET],
                                   capture_output=True, text=True, timeout=60)
        assert forgetter.stdout.strip() == "False", forgetter.stderr
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert holder.stdout.readline().strip() == "idle"
        assert total(occurrences(db_path)) > 0  # nobody left to checkpoint: the holder stays connected
        make_mem("bob")
        assert total(occurrences(db_path)) == 0
    finally:
        holder.kill()
