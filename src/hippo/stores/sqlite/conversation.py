"""The application's messages table: a helper that creates one, and FTS5 search over it.

hippo does not own the messages table: the application writes it. It reads ``<table>`` through
``<table>_fts`` (an FTS5 table with ``content=<table>, content_rowid=id``).
When the table has an ``agent_id`` column, search is scoped to the agent.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Sequence

from hippo.stores.sql.conversation import Messages
from hippo.stores.sqlite.search import match_expression

__all__ = ["MESSAGES", "create_messages_table"]

def create_messages_table(target: str | Path | sqlite3.Connection, name: str = "messages") -> None:
    """Create ``name`` (id, agent_id, session_id, role, content, created_at), its FTS5
    table and the triggers that keep them in sync, unless they exist (``name`` validated)."""
    conn = target if isinstance(target, sqlite3.Connection) else sqlite3.connect(str(target), isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA busy_timeout=5000")
        conn.executescript(
            f"""
            BEGIN IMMEDIATE;
            CREATE TABLE IF NOT EXISTS "{name}" (
                id         INTEGER PRIMARY KEY,
                agent_id   TEXT,
                session_id TEXT,
                role       TEXT NOT NULL DEFAULT 'user',
                content    TEXT NOT NULL,
                created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
            );
            CREATE INDEX IF NOT EXISTS "{name}_agent_session" ON "{name}"(agent_id, session_id);
            CREATE VIRTUAL TABLE IF NOT EXISTS "{name}_fts" USING fts5(
                content, content="{name}", content_rowid=id, tokenize='porter unicode61 remove_diacritics 2'
            );
            CREATE TRIGGER IF NOT EXISTS "{name}_fts_ai" AFTER INSERT ON "{name}" BEGIN
                INSERT INTO "{name}_fts"(rowid, content) VALUES (new.id, new.content);
            END;
            CREATE TRIGGER IF NOT EXISTS "{name}_fts_ad" AFTER DELETE ON "{name}" BEGIN
                INSERT INTO "{name}_fts"("{name}_fts", rowid, content) VALUES ('delete', old.id, old.content);
            END;
            CREATE TRIGGER IF NOT EXISTS "{name}_fts_au" AFTER UPDATE OF content ON "{name}" BEGIN
                INSERT INTO "{name}_fts"("{name}_fts", rowid, content) VALUES ('delete', old.id, old.content);
                INSERT INTO "{name}_fts"(rowid, content) VALUES (new.id, new.content);
            END;
            COMMIT;
            """
        )
    finally:
        if not isinstance(target, sqlite3.Connection):
            conn.close()


def _columns(conn: sqlite3.Connection, table: str) -> list[str] | None:
    fts = f"{table}_fts"
    existing = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE name IN (?, ?)", (table, fts))}
    return [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')] if existing == {table, fts} else None


def _fts_search(table: str, columns: Sequence[str], mine: str) -> tuple[str, list[str]]:
    fts = f"{table}_fts"
    return (f'SELECT m.rowid, -bm25("{fts}"), snippet("{fts}", 0, \'[\', \']\', \'…\', 16), m.* '
            f'FROM "{fts}" JOIN "{table}" m ON m.rowid = "{fts}".rowid WHERE "{fts}" MATCH ?{mine} '
            f'ORDER BY bm25("{fts}") LIMIT ?'), list(columns)


MESSAGES = Messages(columns=_columns, query=match_expression, statement=_fts_search,
                    missing="with its FTS5 table (<table>_fts)")
