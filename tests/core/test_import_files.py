"""What an import reads: only regular files, and for a markdown folder only those inside it. A
symlink out of the folder is skipped and reported; a FIFO never blocks the import."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any, Callable

import pytest

import hippo
from hippo.errors import InvalidInput
from hippo.providers.fake import FakeEmbedder


@pytest.fixture
def mem(tmp_path: Path) -> Any:
    with hippo.open(tmp_path / "hippo.db", agent_id="alice", embedder=FakeEmbedder()) as memory:
        yield memory


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    (root / "memory").mkdir(parents=True)
    (root / "MEMORY.md").write_text("# User\n- Lives in Lisbon\n", encoding="utf-8")
    (root / "memory" / "day.md").write_text("- Fixed the login test\n", encoding="utf-8")
    return root


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "secret.md").write_text("- The root password is hunter2\n", encoding="utf-8")
    return outside


def texts(mem: Any) -> set[str]:
    return {c.content for c in mem.list_memories(limit=100).items}


def within(seconds: float, call: Callable[[], Any], fifo: Path) -> Any:
    """``call()`` in a thread; fails (after unblocking it by opening the FIFO) if it takes longer."""
    outcome: list[Any] = []
    worker = threading.Thread(target=lambda: outcome.append(call()), daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # let the stuck reader go
        worker.join(5)
        pytest.fail(f"the import blocked on the FIFO {fifo.name}")
    return outcome[0] if outcome else None


def test_a_symlink_out_of_the_folder_is_skipped(mem, folder, secret):
    (folder / "memory" / "leak.md").symlink_to(secret / "secret.md")
    (folder / "memory" / "inside.md").symlink_to(folder / "memory" / "day.md")  # stays in: read
    report = mem.import_from(str(folder), format="markdown")
    assert texts(mem) == {"Lives in Lisbon", "Fixed the login test"}
    leak = [s for s in report.skipped if s.where == "memory/leak.md"]
    assert len(leak) == 1 and "outside" in leak[0].reason and not leak[0].duplicate


def test_a_memory_folder_linked_elsewhere_is_not_read(mem, tmp_path, secret):
    root = tmp_path / "notes"
    root.mkdir()
    (root / "MEMORY.md").write_text("- Likes tea\n", encoding="utf-8")
    (root / "memory").symlink_to(secret)
    report = mem.import_from(str(root), format="markdown")
    assert texts(mem) == {"Likes tea"} and [s.where for s in report.skipped] == ["memory/secret.md"]


def test_a_fifo_in_the_folder_is_skipped_without_blocking(mem, folder):
    fifo = folder / "memory" / "x.md"
    os.mkfifo(fifo)
    report = within(10, lambda: mem.import_from(str(folder), format="markdown"), fifo)
    assert texts(mem) == {"Lives in Lisbon", "Fixed the login test"}
    assert [(s.where, "not a regular file" in s.reason) for s in report.skipped] == [("memory/x.md", True)]


@pytest.mark.parametrize("format", ["markdown", "mcp-memory", "mem0", "letta"])
def test_a_fifo_given_as_the_file_is_refused_without_blocking(mem, tmp_path, format):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)

    def attempt() -> str:
        with pytest.raises(InvalidInput) as refused:
            mem.import_from(str(fifo), format=format)
        return refused.value.message

    assert "not a regular file" in within(10, attempt, fifo)
    assert texts(mem) == set()
