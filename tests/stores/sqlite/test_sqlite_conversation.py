"""SQLite only: messages tables made by hand with FTS5 (the application's own schema). The behaviour
of conversation search is in the contract suite (tests/contract/recall/test_conversation.py)."""

from __future__ import annotations

import sqlite3

import pytest

import hippo

pytestmark = pytest.mark.sqlite_only  # FTS5 tables made by hand


def test_table_without_fts_is_missing(mem, db):
    conn = sqlite3.connect(str(db))
    conn.execute("CREATE TABLE messages (id INTEGER PRIMARY KEY, content TEXT)")
    conn.close()
    with pytest.raises(hippo.NotFound):
        mem.recall_conversation("anything")


def test_table_without_agent_column_is_shared(mem, db):
    conn = sqlite3.connect(str(db))
    conn.executescript(
        """
        CREATE TABLE messages (id INTEGER PRIMARY KEY, content TEXT NOT NULL);
        CREATE VIRTUAL TABLE messages_fts USING fts5(content, content=messages, content_rowid=id);
        CREATE TRIGGER messages_ai AFTER INSERT ON messages BEGIN
            INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
        END;
        INSERT INTO messages(content) VALUES ('a message for everyone');
        """
    )
    conn.close()
    assert [h.content for h in mem.recall_conversation("everyone")] == ["a message for everyone"]
