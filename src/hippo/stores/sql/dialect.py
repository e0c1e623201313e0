"""What SQLite and PostgreSQL write differently, for the statements both stores share.

A shared statement is written once, with ``?`` for each parameter; :meth:`Dialect.sql` writes it
in the dialect's own style (psycopg's ``%s``, its literal ``%`` doubled). The rest is what the two
databases spell or type differently: a list of values (``IN (?, ?)`` against ``= ANY(?)`` with one
array), times (ISO-8601 text in SQLite, ``timestamptz`` in PostgreSQL), JSON (text against
``jsonb``), vectors (float32 bytes against pgvector's type), the planner hints only SQLite takes,
and where a chunk's row and its strength counters are (one table in SQLite; two in PostgreSQL, the
counters apart so that a retrieval's update touches no index: ``postgres/strength.py``).
"""

from __future__ import annotations

import json
from datetime import date, datetime
from functools import lru_cache
from typing import Any, Sequence

import numpy as np

from hippo.clock import from_iso, to_iso
from hippo.stores.vectors import decode_vector, encode_vector

__all__ = ["POSTGRES", "SQLITE", "Dialect"]


class Dialect:
    """The SQLite dialect; :class:`_Postgres` overrides what PostgreSQL writes otherwise."""

    name = "sqlite"
    iso_times = True  # times travel as ISO-8601 text of fixed width (string order is time order)
    # The schema's foreign keys refuse a row of a chunk that is gone (PostgreSQL); SQLite's triggers
    # clean up after the chunk instead, so its inserts need no test.
    foreign_keys = False
    rows = "chunks"  # the table of the chunks' rows (text, metadata, vector)
    strength = "chunks"  # the table of their strength counters
    stored_order = "rowid"  # the order chunks were stored in
    chunks = "chunks c"  # a chunk's row (``c``) and its counters, as one FROM
    counters = "c"  # the alias the counters are read from
    bytewise = ""  # how ORDER BY compares text byte by byte (SQLite's default collation does)
    skip = "LIMIT -1 OFFSET ?"  # all rows past the first ``?`` (SQLite wants a LIMIT before an OFFSET)
    ordered_join = "CROSS JOIN"  # a join SQLite's planner keeps in the order written
    # An experience record keeps its chunk's rowid while the chunk is held (NULL while archived:
    # ``sqlite/narrowing/driving.py``), and joins it by that; PostgreSQL joins by id.
    held = "chunks c ON c.rowid = e.chunk"
    record_order = "e.rowid"  # the order of records observed at the same time
    record_chunk = (", chunk", ", c.rowid FROM chunks c WHERE c.id = ? AND c.agent_id = ?")
    now = "datetime('now')"  # the time of the statement, as a recorded time column holds it

    def sql(self, text: str) -> str:
        """A shared statement in this dialect's parameter style."""
        return text

    @staticmethod
    def marks(n: int) -> str:
        """``n`` parameters, for a VALUES list."""
        return ",".join("?" * n)

    def among(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        """The test that ``column`` is one of ``values``, and its parameters."""
        return f"{column} IN ({self.marks(len(values))})", list(values)

    def unindexed(self, column: str) -> str:
        """``column`` in a test the planner must not pick an index for. SQLite's ``+`` keeps it on
        the primary key where a test of ``agent_id`` would otherwise drive the statement through
        every row of the agent; PostgreSQL's planner weighs that from its statistics."""
        return f"+{column}"

    def indexed_by(self, index: str) -> str:
        """A FROM's named index: SQLite plans without statistics, so some statements name theirs."""
        return f" INDEXED BY {index}"

    def time(self, value: datetime | None) -> Any:
        return None if value is None else to_iso(value)

    def read_time(self, value: Any) -> datetime | None:
        return from_iso(value) if value else None

    def day(self, value: date) -> Any:
        return value.isoformat()

    json_mark = "?"  # a JSON parameter (PostgreSQL casts the text to jsonb)

    @staticmethod
    def read_json(value: Any) -> Any:
        """A JSON column's value (SQLite: text; PostgreSQL: already decoded)."""
        return json.loads(value) if isinstance(value, str) and value else value

    def vector(self, value: np.ndarray) -> Any:
        return encode_vector(value)

    def read_vector(self, value: Any) -> np.ndarray:
        return decode_vector(value)

    @staticmethod
    def least(a: str, b: str) -> str:
        return f"min({a}, {b})"

    @staticmethod
    def position(haystack: str) -> str:
        """Where a parameter first stands in ``haystack`` (0: nowhere)."""
        return f"instr({haystack}, ?)"

    @staticmethod
    def json_texts(column: str, key: str) -> str:
        """A FROM item ``s`` whose ``s.value`` are the texts of the JSON array at ``key`` of ``column``."""
        return f"json_each({column}, '$.{key}') s"

    def run(self, conn: Any, text: str, params: Sequence[Any] = ()) -> Any:
        """Execute a shared statement on ``conn``; its cursor."""
        return conn.execute(self.sql(text), params)

    def many(self, conn: Any, text: str, rows: Sequence[Sequence[Any]]) -> None:
        """Execute a shared statement once per row of parameters."""
        conn.executemany(self.sql(text), rows)


@lru_cache(maxsize=512)
def _pyformat(text: str) -> str:
    return text.replace("%", "%%").replace("?", "%s")


class _Postgres(Dialect):
    name = "postgresql"
    iso_times = False
    foreign_keys = True
    rows = "chunk_rows"
    strength = "chunk_strength"
    stored_order = "id"
    chunks = "chunk_rows c JOIN chunk_strength s ON s.id = c.id"
    counters = "s"
    bytewise = ' COLLATE "C"'
    skip = "OFFSET ?"
    ordered_join = "JOIN"
    held = "chunk_rows c ON c.id = e.id"
    record_order = "e.id"
    record_chunk = ("", " WHERE EXISTS (SELECT 1 FROM chunk_rows c WHERE c.id = ? AND c.agent_id = ?)")
    json_mark = "?::jsonb"
    now = "now()"

    def sql(self, text: str) -> str:
        return _pyformat(text)

    def among(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        return f"{column} = ANY(?)", [list(values)]

    def unindexed(self, column: str) -> str:
        return column

    def indexed_by(self, index: str) -> str:
        return ""

    def time(self, value: datetime | None) -> Any:
        return value

    def read_time(self, value: Any) -> datetime | None:
        return value

    def day(self, value: date) -> Any:
        return value

    def vector(self, value: np.ndarray) -> Any:
        return value

    def read_vector(self, value: Any) -> np.ndarray:
        """pgvector hands a ``vector`` back as its ``Vector`` (an array in older releases)."""
        return np.asarray(value.to_numpy() if hasattr(value, "to_numpy") else value, dtype=np.float32)

    @staticmethod
    def least(a: str, b: str) -> str:
        return f"least({a}, {b})"

    @staticmethod
    def position(haystack: str) -> str:
        return f"strpos({haystack}, ?)"

    @staticmethod
    def json_texts(column: str, key: str) -> str:
        # Only an array has elements: jsonb_array_elements_text raises on anything else.
        field = f"{column} -> '{key}'"
        return f"jsonb_array_elements_text(CASE WHEN jsonb_typeof({field}) = 'array' THEN {field} END) s(value)"

    def many(self, conn: Any, text: str, rows: Sequence[Sequence[Any]]) -> None:
        with conn.cursor() as cur:  # a psycopg connection runs many rows through a cursor
            cur.executemany(self.sql(text), rows)


SQLITE = Dialect()
POSTGRES: Dialect = _Postgres()
