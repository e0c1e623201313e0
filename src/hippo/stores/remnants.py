"""Where a removed memory could still be, read for a receipt (``hippo.core.ports.receipts``):
the ids and texts of one agent's rows, written once for both backends (through the Dialect).

Each place a receipt names is a list of the tables that make it. A backend adds what only it
has (PostgreSQL's words table holds ids; SQLite's full-text indexes hold no id of ours: their
check is the index against its rows) and answers ``index_states`` and ``log_state`` itself.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Iterator, Sequence

from hippo.core.ports.receipts import StoredText
from hippo.stores.sql.database import SqlDatabase
from hippo.trust import PlaceCheck

__all__ = ["SqlRemnants"]

_PAGE = 2_000  # rows read at a time: an agent's texts are never held whole


def _texts(rows: str) -> tuple[tuple[str, str, str, tuple[str, ...], tuple[str, ...]], ...]:
    """Per place: the table, the column that names a row, its text columns and its JSON columns."""
    return (("memories", rows, "id", ("content",), ("metadata",)),
            ("archive", "chunks_archive", "id", ("content",), ("metadata",)),
            ("history", "fact_merges", "id", ("content",), ("metadata",)),
            ("experiences", "short_term", "id", ("content",), ("context", "tags")),
            ("experiences", "experiences", "id", (), ("context",)),
            ("capture inbox", "observed_messages", "seq", ("content", "name"), ()),
            ("session items", "session_items", "seq", (), ("item",)),
            ("blocks", "memory_blocks", "key", ("value",), ()),
            ("audit trail", "audit_records", "seq", ("body",), ()))


def _ids(rows: str) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    """Per place: the table and its columns that hold a memory's id."""
    return (("memories", rows, ("id", "superseded_by")),
            ("archive", "chunks_archive", ("id", "superseded_by")),
            ("history", "fact_merges", ("id", "fact_id")),
            ("experiences", "short_term", ("id",)),
            ("experiences", "experiences", ("id",)),
            ("links", "chunk_links", ("a", "b")),
            ("links", "surfaced", ("chunk_id",)))


def _strings(value: Any) -> Iterator[str]:
    """Every string in a JSON value (its keys too)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _json_text(raw: Any) -> str:
    if raw is None:
        return ""
    try:
        value = json.loads(raw) if isinstance(raw, (str, bytes)) else raw
    except ValueError:
        return str(raw)  # not JSON after all: its text as it is
    return "\n".join(_strings(value))


class SqlRemnants:
    """The shared reads of a receipt's places (see the module's docstring)."""

    db: SqlDatabase
    _extra_ids: tuple[tuple[str, str, tuple[str, ...]], ...] = ()  # a backend's own places of ids

    _own_places: tuple[str, ...] = ()  # a backend's own places beside its rows
    _log_place: str  # where a delete's bytes wait: the write-ahead log, PostgreSQL's dead rows

    def remnant_places(self) -> tuple[str, ...]:
        return ("memories", "full-text index", "vectors", *self._own_places, "archive", "history", "experiences",
                "capture inbox", "session items", "links", "blocks", "audit trail", self._log_place)

    def index_states(self, agent_id: str) -> list[PlaceCheck]:
        with self.db.connection() as conn:
            return self._index_states(conn, agent_id)

    def log_state(self, since: datetime | None) -> PlaceCheck:
        """Just after a delete (``since`` None), whether its bytes have left the log; later, asked again."""
        if since is None:
            note = self.pending_scrub()
            return PlaceCheck(self._log_place, note is None, note or "emptied right after the delete")
        return self._log_since(since)

    def pending_scrub(self) -> str | None:
        raise NotImplementedError

    def _index_states(self, conn: Any, agent_id: str) -> list[PlaceCheck]:
        raise NotImplementedError

    def _log_since(self, since: datetime) -> PlaceCheck:
        raise NotImplementedError

    def remaining_ids(self, agent_id: str, ids: Sequence[str]) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        if not ids:
            return found
        d = self.db.dialect
        with self.db.reading(agent_id, bookkeeping=False) as conn:
            for place, table, columns in (*_ids(d.rows), *self._extra_ids):
                for column in columns:
                    among, values = d.among(column, ids)
                    rows = d.run(conn, f"SELECT {column} FROM {table} WHERE agent_id = ? AND {among}",
                                 (agent_id, *values)).fetchall()
                    found.setdefault(place, []).extend(f"{table} {row[0]}" for row in rows)
        return {place: rows for place, rows in found.items() if rows}

    def stored_texts(self, agent_id: str) -> Iterator[StoredText]:
        d = self.db.dialect
        for place, table, label, texts, jsons in _texts(d.rows):
            columns = ", ".join([label, *texts, *(f"CAST({c} AS TEXT)" for c in jsons)])
            after: Any = None
            while True:  # a page at a time, in the order of the label, each page its own read
                more = "" if after is None else f" AND {label} > ?"
                with self.db.reading(agent_id, bookkeeping=False) as conn:
                    rows = d.run(conn, f"SELECT {columns} FROM {table} WHERE agent_id = ?{more} ORDER BY {label} "
                                 "LIMIT ?", (agent_id, *(() if after is None else (after,)), _PAGE)).fetchall()
                for row in rows:
                    values = [*(v for v in row[1:1 + len(texts)] if v), *(_json_text(v) for v in row[1 + len(texts):])]
                    yield StoredText(place, f"{table} {row[0]}", "\n".join(values))
                if len(rows) < _PAGE:
                    break
                after = rows[-1][0]
