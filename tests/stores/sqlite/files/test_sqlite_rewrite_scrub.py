"""Which rewrites checkpoint the SQLite write-ahead log (issue 46): one that removes text empties
it as the call returns; one that removes nothing (an append, the same text again, a strengthened
memory's new sources) leaves it alone, since a checkpoint costs the write its fsyncs (about 10 ms,
bench/block_writes.py)."""

from __future__ import annotations

import os

import pytest

pytestmark = pytest.mark.sqlite_only  # SQLite's write-ahead log


def wal_bytes(db_path) -> int:
    wal = f"{db_path}-wal"
    return os.path.getsize(wal) if os.path.exists(wal) else 0


def test_a_new_text_empties_the_log_and_an_append_leaves_it(make_mem, db_path):
    mem = make_mem("alice")
    mem.set_memory_block("human", "Likes green tea.")
    mem.append_memory_block("human", "Climbs on Tuesdays.")
    mem.set_memory_block("human", "Likes green tea.\nClimbs on Tuesdays.")  # the same text again
    assert wal_bytes(db_path) > 0  # nothing removed: no checkpoint
    mem.set_memory_block("human", "Likes black coffee.")
    assert wal_bytes(db_path) == 0


def test_new_metadata_empties_the_log_and_a_strengthened_memory_leaves_it(make_mem, db_path):
    mem = make_mem("alice")
    chunk = mem.store_memory("The heron nests by the old mill", metadata={"_source_ids": ["m1"]})
    mem.update_metadata(chunk.id, {"_source_ids": ["m1"], "place": "mill"})
    assert wal_bytes(db_path) == 0
    mem.store_memory("The heron nests by the old mill", metadata={"_source_ids": ["m2"]})  # adds a source
    assert mem.get_memory(chunk.id).metadata["_source_ids"] == ["m1", "m2"]
    assert wal_bytes(db_path) > 0
