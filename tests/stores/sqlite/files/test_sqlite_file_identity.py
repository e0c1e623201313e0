"""A database file deleted or replaced under an open store: writes fail loudly instead of landing
in an unlinked file that vanishes when the store closes."""

from __future__ import annotations

import os
import re
import sqlite3

import pytest
from support import counts

import hippo
from hippo.errors import StorageError

pytestmark = pytest.mark.sqlite_only  # SQLite's own files and schema


def remove_files(db_path) -> None:
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(f"{db_path}{suffix}"):
            os.unlink(f"{db_path}{suffix}")


def test_a_write_after_the_file_was_deleted_raises_and_stores_nothing(mem, db_path):
    mem.store_memory("The first note lands in the file.")
    remove_files(db_path)
    with pytest.raises(StorageError, match=re.escape(str(db_path))) as raised:
        mem.store_memory("The second note has nowhere to go.")
    assert "deleted or replaced" in str(raised.value)
    with pytest.raises(StorageError, match="deleted or replaced"):
        mem.set_memory_block("persona", "a block has nowhere to go either")
    assert not db_path.exists()  # nothing recreated the file behind the caller's back
    assert mem.stats().memories == 1  # reads still see what the unlinked file held


def test_a_write_after_the_file_was_replaced_raises(mem, db_path, tmp_path):
    mem.store_memory("Stored before the swap.")
    other = tmp_path / "other.db"
    sqlite3.connect(other).close()
    os.replace(other, db_path)  # e.g. a backup restored over the open file
    with pytest.raises(StorageError, match="deleted or replaced"):
        mem.store_memory("Stored after the swap.")
    conn = sqlite3.connect(db_path)
    try:  # the file now there was not written into
        assert conn.execute("SELECT count(*) FROM sqlite_master").fetchone() == (0,)
    finally:
        conn.close()


def test_a_relative_path_keeps_working_after_a_chdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with hippo.open("relative.db", agent_id="alice", embedder="fake") as mem:
        mem.store_memory("Written from the starting directory.")
        (tmp_path / "elsewhere").mkdir()
        monkeypatch.chdir(tmp_path / "elsewhere")
        mem.store_memory("Written after a chdir.")
        assert mem.forget_memory("Written after a chdir.").scrubbed is True
    assert counts(tmp_path / "relative.db") == (1, 0)
    assert not (tmp_path / "elsewhere" / "relative.db").exists()
