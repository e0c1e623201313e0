"""Whether a text is left in the files that hold a database: the canary strings the forget
guarantee is tested with, the count of their bytes in SQLite's or PostgreSQL's files, and what a
backend needs before its files are clean. Shared by the contract suite and the store tests."""

from __future__ import annotations

from pathlib import Path

from support import sql

SECRET = "Zyzzogeton-Quibblefrump"
NEEDLES = [SECRET, SECRET.lower(), "Zyzzogeton", "zyzzogeton", "Quibblefrump", "quibblefrump"]
FILLER = [f"Gardening note {i}: tomatoes need sun and regular watering" for i in range(30)]


def occurrences(db: Path | str) -> dict[str, int]:
    """How often each needle occurs in the raw bytes of the files that hold the database: SQLite's
    file, WAL and shared memory; PostgreSQL's table, index and TOAST files of hippo's tables (after
    a CHECKPOINT writes them; its write-ahead log is PostgreSQL's, outside hippo's claim)."""
    found = {}
    for name, data in database_files(db):
        for needle in NEEDLES:
            for encoded in (needle.encode("utf-8"), needle.encode("utf-16-le")):
                found[f"{name}:{needle}:{len(encoded)}"] = data.count(encoded)
    return found


def database_files(db: Path | str) -> list[tuple[str, bytes]]:
    if not str(db).startswith("postgresql://"):
        paths = [Path(str(db) + suffix) for suffix in ("", "-wal", "-shm")]
        return [(p.name, p.read_bytes() if p.exists() else b"") for p in paths]
    sql(db, "CHECKPOINT")
    home = Path(sql(db, "SHOW data_directory")[0][0])
    # chunk_rows: the chunks' own table (``chunks`` is a view of it with the counters); chunk_words: their words
    tables = ("('chunk_rows', 'chunk_words', 'chunks_archive', 'memory_blocks', 'short_term', 'experiences', "
              "'observed_messages', 'session_items', 'fact_merges')")
    relations = sql(db, f"SELECT pg_relation_filepath(c.oid) FROM pg_class c WHERE c.relname IN {tables} "
                        "OR c.oid IN (SELECT i.indexrelid FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid "
                        f"WHERE t.relname IN {tables}) OR c.oid IN (SELECT reltoastrelid FROM pg_class "
                        f"WHERE relname IN {tables})")
    files = [f for (rel,) in relations if rel for f in home.glob(rel + "*")]
    return [(f.name, f.read_bytes()) for f in files]


def scrub(mem, result=None) -> None:
    """What the backend's forget guarantee needs before its files are clean: nothing on SQLite,
    which scrubs by itself (``result``, when given, says so); on PostgreSQL ``result`` says the
    bytes wait for ``hippo scrub``, and ``Memory.scrub`` (VACUUM FULL) removes them."""
    if not mem.database.startswith("postgresql://"):
        assert result is None or result.scrubbed
        return
    assert result is None or (not result.scrubbed and "hippo scrub" in result.note)
    assert mem.scrub() is None


def total(found: dict[str, int]) -> int:
    return sum(found.values())
