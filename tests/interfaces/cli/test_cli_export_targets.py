"""``hippo export PATH`` writes to what PATH names: it never replaces a link, a FIFO or a device,
and never leaves a file more readable than it was."""

from __future__ import annotations

import json
import os
import stat
import threading

import pytest
from cli_helpers import ok

pytestmark = pytest.mark.sqlite_only  # the CLI runs on the SQLite file its --db names (the CLI on PostgreSQL: test_http_scaleout.py)


@pytest.fixture
def alice(make_mem):
    mem = make_mem("alice")
    mem.store_memory("The staging password rotates every Monday")
    mem.set_memory_block("human", "Name: Kris")
    return mem


def _records(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


def test_a_symlink_stays_a_link_and_its_target_gets_the_export(cli, alice, tmp_path):
    real = tmp_path / "exports" / "alice.jsonl"
    real.parent.mkdir()
    real.write_text("old\n")
    link = tmp_path / "latest.jsonl"
    link.symlink_to(real)
    ok(cli("export", link))
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert [r["type"] for r in _records(real.read_text())] == ["header", "chunk", "block"]
    assert not list(real.parent.glob(".*.partial")) and not list(tmp_path.glob(".*.partial"))


def test_a_dangling_symlink_creates_its_target(cli, alice, tmp_path):
    link = tmp_path / "latest.jsonl"
    link.symlink_to(tmp_path / "new.jsonl")
    ok(cli("export", link))
    assert link.is_symlink() and _records((tmp_path / "new.jsonl").read_text())[0]["type"] == "header"


def test_a_fifo_is_written_through_to_its_reader(cli, alice, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []

    def read() -> None:
        with open(fifo, "rb") as reader:  # blocks until the export opens the FIFO for writing
            received.append(reader.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    result = cli("export", fifo)
    reader.join(timeout=10)
    assert result.exit_code == 0, result.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced by a regular file"
    assert received and [r["type"] for r in _records(received[0].decode())] == ["header", "chunk", "block"]


def test_a_device_that_cannot_take_the_export_is_an_error_and_stays_a_device(cli, alice, tmp_path):
    full = tmp_path / "full"
    full.symlink_to("/dev/full")  # writes fail with ENOSPC
    result = cli("export", full)
    assert result.exit_code == 1 and result.stderr.startswith("error: ") and "space" in result.stderr
    assert full.is_symlink() and stat.S_ISCHR(os.stat("/dev/full").st_mode)
    assert "Traceback" not in result.output


def test_an_existing_file_keeps_its_permissions(cli, alice, tmp_path):
    out = tmp_path / "private.jsonl"
    out.write_text("")
    out.chmod(0o600)
    ok(cli("export", out))
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert _records(out.read_text())[0]["type"] == "header"


def test_a_new_file_follows_the_umask(cli, alice, tmp_path):
    old = os.umask(0o077)
    try:
        ok(cli("export", tmp_path / "new.jsonl"))
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.jsonl").stat().st_mode) == 0o600


def test_a_directory_is_refused_and_left_alone(cli, alice, tmp_path):
    folder = tmp_path / "out"
    folder.mkdir()
    result = cli("export", folder)
    assert result.exit_code == 1 and result.stderr.startswith("error: ") and "directory" in result.stderr
    assert folder.is_dir() and not list(folder.iterdir()) and not list(tmp_path.glob(".*.partial"))
