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
from test_forget import FILLER, SECRET, occurrences, total

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
    alice, bob = make_mem("alice"), make_mem("bob")
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
    from hippo.surfaces.http.server import BackgroundServer

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
