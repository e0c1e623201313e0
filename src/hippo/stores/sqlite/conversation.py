"""The application's messages table: a helper that creates one, and FTS5 search over it.

hippo does not own the messages table (seed 000). It reads ``<table>`` through
``<table>_fts`` (an FTS5 table with ``content=<table>, content_rowid=id``).
When the table has an ``agent_id`` column, search is scoped to the agent.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Sequence

from hippo.errors import NotFound
from hippo.stores.base import validate_table_name
from hippo.stores.sql.conversation import message_hits, scope
from hippo.stores.sql.dialect import SQLITE
from hippo.stores.sqlite.search import match_expression
from hippo.types import ConversationHit

__all__ = ["create_messages_table", "has_messages_table", "search_messages", "validate_table_name"]

def create_messages_table(target: str | Path | sqlite3.Connection, name: str = "messages") -> None:
    """Create ``name`` (id, agent_id, session_id, role, content, created_at), its FTS5
    table and the triggers that keep them in sync, unless they exist."""
    name = validate_table_name(name)
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


def has_messages_table(conn: sqlite3.Connection, table: str) -> bool:
    table = validate_table_name(table)
    fts = f"{table}_fts"
    existing = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE name IN (?, ?)", (table, fts))}
    return existing == {table, fts}


def search_messages(conn: sqlite3.Connection, agent_id: str, table: str, terms: Sequence[str],
                    limit: int) -> list[ConversationHit]:
    match = match_expression(terms)
    if match is None:
        return []
    table = validate_table_name(table)
    fts = f"{table}_fts"
    if not has_messages_table(conn, table):
        raise NotFound(
            f"no messages table {table!r} with its FTS table {fts!r} in this database; "
            "create them with hippo.create_messages_table()"
        )
    columns = [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]
    mine, params = scope(SQLITE, columns, match, agent_id, limit)
    sql = (
        f'SELECT m.rowid, -bm25("{fts}"), snippet("{fts}", 0, \'[\', \']\', \'…\', 16), m.* '
        f'FROM "{fts}" JOIN "{table}" m ON m.rowid = "{fts}".rowid WHERE "{fts}" MATCH ?{mine} '
        f'ORDER BY bm25("{fts}") LIMIT ?'
    )
    return message_hits(conn.execute(sql, params), columns)
