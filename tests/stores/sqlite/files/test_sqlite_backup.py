"""``hippo backup`` of a live SQLite database while a writer goes on: the copy is one snapshot.

A writer thread (a memory of its own: its own connection) keeps storing into one agent while
``hippo backup`` (the CLI, in-process) copies the file; the copy, restored with ``hippo restore``,
passes ``hippo check``, holds a prefix of the writer's acknowledged writes, and answers 100 recalls
of a second agent, whose memories were all stored before, with the same top 10 as the live file.
"""

from __future__ import annotations

import random
import sqlite3
import threading
import time
from pathlib import Path

import pytest
from support import Clock
from typer.testing import CliRunner

import hippo
from hippo.interfaces.cli import app
from hippo.providers.fake import FakeEmbedder
from hippo.stores.sqlite.upkeep import backup as backup_module

pytestmark = pytest.mark.sqlite_only  # SQLite's own files

# Every steady memory is six distinct words of one token each, and every query one of those words
# beside a word no memory holds: each memory that matches a query's word matches it once in a text
# of the same length, so the keyword side scores them alike whatever the rows of the writer's agent
# add to the index's statistics (its row count, its average length), which the live file has more of.
WORDS = ("heron", "willow", "granite", "lantern", "harbor", "copper", "meadow", "falcon", "cedar", "violet",
         "tundra", "saddle", "quarry", "marble", "thistle", "beacon", "canyon", "ember", "glacier", "orchard",
         "pepper", "raven", "sparrow", "timber", "walnut", "zephyr", "anchor", "basalt", "cobalt", "dune",
         "fennel", "garnet", "hazel", "indigo", "juniper", "kelp", "lilac", "mango", "nectar", "opal")
OTHER = ("plinth", "quiver", "rustle", "sconce", "trellis")


def _steady_texts(count: int = 300) -> list[str]:
    rng = random.Random(7)
    texts: dict[str, None] = {}
    while len(texts) < count:
        texts[" ".join(rng.sample(WORDS, 6))] = None
    return list(texts)


def _queries() -> list[str]:
    rng = random.Random(11)
    return [f"{rng.choice(WORDS)} {rng.choice(OTHER)}" for _ in range(100)]


def _top10s(path: Path, clock: Clock) -> list[list[str]]:
    with hippo.open(path, agent_id="steady", embedder=FakeEmbedder(), clock=clock) as mem:
        return [[hit.id for hit in mem.recall_memories(query, 10, touch=False)] for query in _queries()]


def _cli(runner: CliRunner, db: Path, *args: str):
    return runner.invoke(app, ["--db", str(db), "--agent", "steady", "--embedder", "fake", *args])


class Writer(threading.Thread):
    """Stores ``writer note N`` for N = 0, 1, ... into agent ``writer`` until stopped; ``acked``
    holds each N once its store returned."""

    def __init__(self, path: Path, clock: Clock) -> None:
        super().__init__(daemon=True)
        self.path, self.clock = path, clock
        self.acked: list[int] = []
        self.stop = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            with hippo.open(self.path, agent_id="writer", embedder=FakeEmbedder(), clock=self.clock) as mem:
                while not self.stop.is_set():
                    mem.store_memory(f"writer note {len(self.acked):06d}")
                    self.acked.append(len(self.acked))
        except BaseException as exc:  # reported by the test
            self.error = exc

    def wait_for(self, count: int, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while len(self.acked) < count and self.error is None:
            assert time.monotonic() < deadline, f"the writer acknowledged {len(self.acked)} of {count} writes"
            time.sleep(0.005)


def _writer_notes(path: Path) -> list[int]:
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT content FROM chunks WHERE agent_id = 'writer'").fetchall()
    return sorted(int(content.rsplit(" ", 1)[1]) for (content,) in rows)


def test_a_backup_under_a_writer_restores_a_prefix_and_the_same_recalls(tmp_path, monkeypatch):
    clock, runner = Clock(), CliRunner()
    live, copy, restored = tmp_path / "live.db", tmp_path / "copy.db", tmp_path / "restored.db"
    with hippo.open(live, agent_id="steady", embedder=FakeEmbedder(), clock=clock) as steady:
        steady.store_memories(_steady_texts())
    # A page a step (the default copies 4 MiB at once: this whole file): the writer's commits land
    # between the steps, which is what must not tear the copy.
    monkeypatch.setattr(backup_module, "STEP_PAGES", 1)
    writer = Writer(live, clock)
    writer.start()
    try:
        writer.wait_for(20)
        for _ in range(50):  # until a backup ran while the writer acknowledged a write (the first, as a rule)
            before = len(writer.acked)
            made = _cli(runner, live, "backup", str(copy), "--force")
            after = len(writer.acked)
            assert made.exit_code == 0, made.stderr
            if after > before:
                break
        writer.wait_for(after + 20)  # and it goes on after the backup
    finally:
        writer.stop.set()
        writer.join(30)
    assert writer.error is None, writer.error
    assert after > before, "no write was acknowledged while a backup ran"

    assert _cli(runner, restored, "restore", str(copy)).exit_code == 0
    checked = _cli(runner, restored, "check")
    assert checked.exit_code == 0, checked.stdout + checked.stderr

    notes = _writer_notes(restored)
    assert notes == list(range(len(notes)))  # a prefix: no write missing before the last one in it
    assert before <= len(notes) <= after + 1  # +1: committed, not yet counted by the writer
    expected = _top10s(live, clock)
    assert all(len(ids) == 10 for ids in expected) and len({tuple(ids) for ids in expected}) > 50
    assert _top10s(restored, clock) == expected


def test_a_backup_is_refused_over_a_file_and_written_whole_with_force(tmp_path):
    runner, live, target = CliRunner(), tmp_path / "live.db", tmp_path / "copy.db"
    with hippo.open(live, agent_id="steady", embedder=FakeEmbedder()) as mem:
        mem.store_memory("The heron waits at the weir.")
    target.write_text("keep me")
    refused = _cli(runner, live, "backup", str(target))
    assert refused.exit_code == 1 and "--force" in refused.stderr
    assert target.read_text() == "keep me"
    assert sorted(p.name for p in tmp_path.iterdir() if ".partial" in p.name) == []

    assert _cli(runner, live, "data", "backup", str(target), "--force").exit_code == 0
    with sqlite3.connect(target) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"  # one file, no log beside it
        assert conn.execute("SELECT content FROM chunks").fetchall() == [("The heron waits at the weir.",)]
    assert (target.stat().st_mode & 0o777) == 0o600  # every memory is in it: its owner's only
    assert [p.name for p in tmp_path.iterdir() if ".partial" in p.name] == []
