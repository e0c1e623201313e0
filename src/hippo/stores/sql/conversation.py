"""The application's messages table, as both relational stores search it (see ``ConversationStore``).

hippo does not own the table: each backend finds it and searches it its own way (SQLite through
``<table>_fts``, an FTS5 table; PostgreSQL through a stored ``tsvector`` column), scoped to the
agent when the table has an ``agent_id`` column. What the two do alike is written here: the
connection each call reads through, the agent's scope and the hits made of the rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from hippo.errors import NotFound
from hippo.stores.names import validate_table_name
from hippo.stores.sql.database import SqlDatabase
from hippo.stores.sql.dialect import Dialect
from hippo.types import ConversationHit

__all__ = ["Messages", "SqlConversation", "message_hits", "scope"]


@dataclass(frozen=True)
class Messages:
    """A backend's reading of an application's messages table (``table`` already validated)."""

    # (connection, table): the table's columns when it is there and searchable, else None
    columns: Callable[[Any, str], list[str] | None]
    query: Callable[[Sequence[str]], str | None]  # the words as the backend's full-text query, None: nothing to ask
    # (table, columns, the agent's test): the search statement and the columns its rows show after
    # id, rank and snippet
    statement: Callable[[str, Sequence[str], str], tuple[str, list[str]]]
    missing: str  # what a missing table lacks, for the error


class SqlConversation:
    """The ``ConversationStore`` methods of a relational store, through ``db`` and its ``messages``."""

    db: SqlDatabase
    messages: Messages

    def has_messages_table(self, table: str) -> bool:
        with self.db.reading() as conn:
            return self.messages.columns(conn, validate_table_name(table)) is not None

    def search_messages(self, agent_id: str, table: str, terms: Sequence[str], limit: int) -> list[ConversationHit]:
        table = validate_table_name(table)
        with self.db.reading(agent_id) as conn:
            columns = self.messages.columns(conn, table)
            if columns is None:
                raise NotFound(f"no messages table {table!r} {self.messages.missing} in this database; "
                               "create one with hippo.create_messages_table()")
            query = self.messages.query(terms)
            if query is None:
                return []
            mine, params = scope(self.db.dialect, columns, query, agent_id, limit)
            sql, shown = self.messages.statement(table, columns, mine)
            return message_hits(conn.execute(sql, params), shown)


def scope(d: Dialect, columns: Sequence[str], query: str, agent_id: str, limit: int) -> tuple[str, tuple[Any, ...]]:
    """The agent's test of a search of a table with ``columns`` (none when it has no ``agent_id``),
    in the dialect's parameter style, and the search's parameters: the query, the agent, the limit."""
    if "agent_id" in columns:
        return d.sql(" AND m.agent_id = ?"), (query, agent_id, limit)
    return "", (query, limit)


def message_hits(rows: Any, shown: Sequence[str]) -> list[ConversationHit]:
    """The hits of a search's rows: id, rank (higher is better), snippet, then the ``shown`` columns
    (times as ISO-8601 text; the content apart)."""
    hits = []
    for row in rows:
        fields = {k: v.isoformat() if hasattr(v, "isoformat") else v for k, v in zip(shown, row[3:])}
        content = fields.pop("content", "")
        hits.append(ConversationHit(id=row[0], content=content, rank=row[1], snippet=row[2], fields=fields))
    return hits
