"""The hooks' background processing is debounced: a burst of requests starts one worker; a request
that comes while the worker runs, even just before it lets its lock go, makes it process once more;
and a worker that died blocks nothing."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest
from hook_runs import wait_until

from hippo.integrations import claude_code_hooks as hooks

fcntl = pytest.importorskip("fcntl")


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> hooks.Files:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return hooks.files(str(tmp_path / "hippo.db"), "alice")


def stand_in(tmp_path: Path) -> list[str]:
    """A worker that records its process id, then holds the lock it was handed until ``release`` exists."""
    script = (f"import os, pathlib, time\n"
              f"with open({str(tmp_path / 'started')!r}, 'a') as f: f.write(f'{{os.getpid()}}\\n')\n"
              f"while not pathlib.Path({str(tmp_path / 'release')!r}).exists(): time.sleep(0.01)\n")
    return [sys.executable, "-c", script]


def lock_is_free(files: hooks.Files) -> bool:
    fd = os.open(files.lock, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)  # lets go of the lock too


def started(tmp_path: Path) -> list[int]:
    path = tmp_path / "started"
    return [int(pid) for pid in path.read_text().split()] if path.exists() else []


def test_a_burst_of_requests_starts_one_worker(tmp_path, files):
    worker = stand_in(tmp_path)
    assert [hooks.request(files, worker) for _ in range(5)] == [True, False, False, False, False]
    assert files.pending.exists() and not lock_is_free(files)  # the worker holds the lock from its start
    wait_until(lambda: started(tmp_path), "the worker started")
    (tmp_path / "release").touch()
    wait_until(lambda: lock_is_free(files), "the worker ended")
    assert len(started(tmp_path)) == 1
    (tmp_path / "release").unlink()
    assert hooks.request(files, worker) is True  # the next request starts the next worker
    pid = wait_until(lambda: started(tmp_path)[1:], "the second worker started")[0]
    os.kill(pid, signal.SIGKILL)  # a worker killed while it works ...
    wait_until(lambda: lock_is_free(files), "the killed worker's lock is let go")
    (tmp_path / "release").touch()
    assert hooks.request(files, worker) is True  # ... blocks nothing


def held(files: hooks.Files) -> int:
    """The lock, taken as a hook takes it before it hands it to the worker."""
    fd = os.open(files.lock, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return fd


def test_the_worker_processes_again_when_asked_while_it_works(tmp_path, files):
    files.pending.parent.mkdir(parents=True)
    files.pending.touch()
    passes: list[bool] = []

    def process() -> None:
        if not passes:  # a Stop while the first pass runs: it finds the lock held
            passes.append(hooks.request(files, stand_in(tmp_path)))
        else:
            passes.append(True)

    fd = held(files)
    try:
        assert hooks.work(files, fd, process) == 2 and passes == [False, True]
    finally:
        os.close(fd)
    assert not files.pending.exists() and lock_is_free(files) and not started(tmp_path)


def test_a_request_just_before_the_worker_lets_go_is_not_lost(tmp_path, files, monkeypatch):
    files.pending.parent.mkdir(parents=True)
    files.pending.touch()
    consume, asked = hooks._consume, []

    def late(marker: Path) -> bool:
        took = consume(marker)
        if not took and not asked:  # a hook at the worst moment: after the worker's last look, before it lets go
            asked.append(hooks.request(files, stand_in(tmp_path)))
        return took

    monkeypatch.setattr(hooks, "_consume", late)
    passes: list[int] = []
    fd = held(files)
    try:
        assert hooks.work(files, fd, lambda: passes.append(1)) == 2
    finally:
        os.close(fd)
    assert asked == [False] and not started(tmp_path)  # the hook started nothing: the worker took its request


def test_a_worker_started_by_hand_processes_once(tmp_path, files):
    passes: list[int] = []
    assert hooks.work(files, None, lambda: passes.append(1)) == 1 and passes == [1]
