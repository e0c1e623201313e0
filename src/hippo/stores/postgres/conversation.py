"""The application's messages table in PostgreSQL: a helper that creates one, and search over it.

As in SQLite, hippo does not own the table; it reads ``<table>`` through its ``tsv`` column (a
stored ``tsvector`` with a GIN index, which ``create_messages_table`` makes). When the table has
an ``agent_id`` column, search is scoped to the agent.
"""

from __future__ import annotations

from typing import Any, Sequence

from hippo.stores.postgres.search import tsquery
from hippo.stores.sql.conversation import Messages

__all__ = ["MESSAGES", "create_messages_table"]


def create_messages_table(url: str, name: str = "messages") -> None:
    """Create ``name`` (id, agent_id, session_id, role, content, created_at) with its full-text
    column and index, unless it exists (``name`` validated)."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn, conn.transaction():
        conn.execute(f"""
            CREATE TABLE IF NOT EXISTS "{name}" (
                id         bigserial PRIMARY KEY,
                agent_id   text,
                session_id text,
                role       text NOT NULL DEFAULT 'user',
                content    text NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now(),
                tsv        tsvector GENERATED ALWAYS AS (to_tsvector('hippo_english', hippo_fold(content))) STORED
            )""")
        conn.execute(f'CREATE INDEX IF NOT EXISTS "{name}_agent_session" ON "{name}" (agent_id, session_id)')
        conn.execute(f'CREATE INDEX IF NOT EXISTS "{name}_tsv" ON "{name}" USING gin (tsv)')


def _columns(conn: Any, table: str) -> list[str] | None:
    rows = conn.execute("SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() "
                        "AND table_name = %s ORDER BY ordinal_position", (table,)).fetchall()
    columns = [r[0] for r in rows]
    return columns if {"content", "tsv"} <= set(columns) else None


def _tsv_search(table: str, columns: Sequence[str], mine: str) -> tuple[str, list[str]]:
    shown = [c for c in columns if c != "tsv"]
    return ("SELECT m.id, ts_rank(m.tsv, q, 1)::float8 AS rank, "
            "ts_headline('hippo_english', m.content, q, 'StartSel=[, StopSel=], MaxWords=16, MinWords=4'), "
            + ", ".join(f'm."{c}"' for c in shown)
            + f" FROM \"{table}\" m, to_tsquery('hippo_english', hippo_fold(%s)) q WHERE m.tsv @@ q{mine}"
            + " ORDER BY rank DESC, m.id LIMIT %s"), shown


MESSAGES = Messages(columns=_columns, query=tsquery, statement=_tsv_search, missing="with a tsv column")
