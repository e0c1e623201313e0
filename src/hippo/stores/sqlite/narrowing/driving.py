"""Driving indexes: the rows a narrow filter may pass, listed from the filter's own indexes.

A filtered search that does not find its answer among the best rows of all (``AFTERWARDS``)
needs the rows the filter passes. Testing the filter on every row of the agent reads every row,
and a tag test parses each row's JSON (150 ms at 100k rows). Instead, each part of a filter that
has an index of its own lists the chunk rowids it passes without reading a row: a tag from
``chunk_tags``, an experience's type and importance from the experiences' indexes (each record
keeps its chunk's rowid), a period from the chunks' time index, a session from the session index,
a metadata value (equality, ``$in``) or a source from ``chunk_keys``.
The narrowest part, intersected with the parts not much wider than what is left, is a *superset*
of the rows the filter passes; the search looks among it and tests the whole filter only on the
best rows it finds there (``search.py``), so the answer is exactly the filter's.

``MIGRATION`` keeps those indexes: ``chunk_tags`` (a chunk's tags, by triggers on ``chunks``) and
the experiences' ``chunk`` column (NULL while the chunk is archived: a restored chunk gets a new
rowid, set by trigger). ``chunk_tags`` holds no text, only a 64-bit key of each (agent, tag)
(``tag_key``, registered on the store's connection by ``register``): a table of tags would be an
index over user text, and a B-tree that rebalances copies cells between pages where
``secure_delete`` never zeroes the old copies, so a forgotten memory's tags would stay in the file
(measured: 2 of 750 forgotten tags at 6,000 tagged memories). A key that two tags share only
widens the listed superset. The delete trigger needs no key, so any connection may delete; an
insert into ``chunks`` needs a connection that knows ``hippo_tag_key`` (every store's does).

``KEYS_MIGRATION`` keeps ``chunk_keys`` the same way, for the filters that tested every row's JSON
or source before (100-150 ms at 100k rows): a key of each (agent, top-level field, plain value)
(``meta_key``: JSON types apart as the equality test keeps them, 1 and 1.0 one key; an object or
array holds none) and of each (agent, source) (``source_key``). A condition on a value no key
stands for (a number beyond a double) adds no part: it is tested on the rows, as before.
"""

from __future__ import annotations

import hashlib
import json
import math
import sqlite3
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from hippo.core.ports import ChunkFilter
from hippo.stores.sql.dialect import SQLITE
from hippo.stores.sql.filters import experience_tests
from hippo.stores.sqlite.filters import filter_sql
from hippo.stores.sqlite.index.exact import top_positions
from hippo.stores.sqlite.index.hnsw import RESCORE_EXTRA
from hippo.stores.sqlite.narrowing.supersets import Lister, Supersets, listed

if TYPE_CHECKING:
    from hippo.stores.sqlite.index.cache import VectorCache

__all__ = ["AFTERWARDS", "KEYS_MIGRATION", "MIGRATION", "FilteredSearch", "drivers", "meta_key", "narrowed",
           "next_batch", "register", "source_key", "tag_key"]

# The keys of a chunk's tags, as the tag filter reads them: the text values at '$.tags' of its metadata.
_TAG_KEYS = ("INSERT OR IGNORE INTO chunk_tags (tag_key, chunk) SELECT hippo_tag_key({row}.agent_id, t.value), "
             "{row}.rowid FROM {rows}json_each(CASE WHEN json_valid({row}.metadata) THEN {row}.metadata END, "
             "'$.tags') t WHERE t.type = 'text'")


def tag_key(agent_id: str, tag: str) -> int:
    """The key of an agent's tag in ``chunk_tags``: 64 bits of BLAKE2b, signed as SQLite keeps them."""
    return _hashed(f"{agent_id}\x00{tag}")


def _hashed(text: str) -> int:
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def _atom(kind: str, value: Any) -> str | None:
    """A metadata value as the equality filter compares it: JSON types apart (true is not 1), but
    an integer and a real of the same value alike (1 = 1.0, 0 = -0.0). None: no key (a number
    too large for a double)."""
    if kind in ("integer", "real"):
        try:
            return "n" + repr(float(value) + 0.0)
        except OverflowError:
            return None
    if kind == "text":
        return "t" + str(value)
    return kind  # null, true, false


def meta_key(agent_id: str, key: str, kind: str, value: Any) -> int | None:
    """The key in ``chunk_keys`` of a top-level metadata field ``key`` holding ``value`` of JSON
    type ``kind`` (as ``json_each`` names it); None for a value no key stands for."""
    atom = _atom(kind, value)
    return None if atom is None else _hashed(f"{agent_id}\x00meta\x00{key}\x00{atom}")


def source_key(agent_id: str, source: str) -> int:
    """The key in ``chunk_keys`` of an agent's chunks with this ``source``."""
    return _hashed(f"{agent_id}\x00source\x00{source}")


def _value_key(agent_id: str, key: str, value: Any) -> int | None:
    """``meta_key`` of a filter's value (a Python value: None, bool, number or text)."""
    if value is None:
        return meta_key(agent_id, key, "null", None)
    if isinstance(value, bool):
        return meta_key(agent_id, key, "true" if value else "false", None)
    if isinstance(value, (int, float)):
        return meta_key(agent_id, key, "real", value)
    return meta_key(agent_id, key, "text", value) if isinstance(value, str) else None


def register(conn: sqlite3.Connection) -> None:
    """Make the key functions the chunk_tags and chunk_keys triggers call known to ``conn``."""
    conn.create_function("hippo_tag_key", 2, tag_key, deterministic=True)
    conn.create_function("hippo_meta_key", 4, lambda *a: meta_key(*a) if a[1] is not None else None,
                         deterministic=True)
    conn.create_function("hippo_source_key", 2, lambda a, s: source_key(a, str(s)), deterministic=True)


MIGRATION = f"""
CREATE TABLE chunk_tags (
    tag_key INTEGER NOT NULL,    -- tag_key(agent_id, tag): no text
    chunk   INTEGER NOT NULL,    -- the rowid of the chunk in chunks
    PRIMARY KEY (tag_key, chunk)
) WITHOUT ROWID;
CREATE INDEX idx_chunk_tags_chunk ON chunk_tags(chunk);
{_TAG_KEYS.format(row='c', rows='chunks c, ')};
CREATE TRIGGER chunk_tags_ai AFTER INSERT ON chunks BEGIN
    {_TAG_KEYS.format(row='new', rows='')};
END;
CREATE TRIGGER chunk_tags_ad AFTER DELETE ON chunks BEGIN
    DELETE FROM chunk_tags WHERE chunk = old.rowid;
END;
CREATE TRIGGER chunk_tags_au AFTER UPDATE OF agent_id, metadata ON chunks BEGIN
    DELETE FROM chunk_tags WHERE chunk = old.rowid;
    {_TAG_KEYS.format(row='new', rows='')};
END;

ALTER TABLE experiences ADD COLUMN chunk INTEGER;
UPDATE experiences SET chunk = (SELECT c.rowid FROM chunks c WHERE c.id = experiences.id);
DROP INDEX IF EXISTS idx_experiences_type;
DROP INDEX IF EXISTS idx_experiences_importance;
CREATE INDEX idx_experiences_type_chunk ON experiences(agent_id, type, importance, chunk);
CREATE INDEX idx_experiences_importance_chunk ON experiences(agent_id, importance, chunk);
CREATE TRIGGER experiences_chunk_ai AFTER INSERT ON chunks BEGIN
    UPDATE experiences SET chunk = new.rowid WHERE id = new.id;
END;
CREATE TRIGGER experiences_chunk_gone AFTER DELETE ON chunks BEGIN
    UPDATE experiences SET chunk = NULL WHERE id = old.id;
END;
"""

# The keys of a chunk's top-level metadata fields that hold a plain value (what the equality and
# ``$in`` filters compare), and of its source.
_VALUE_KEYS = ("INSERT OR IGNORE INTO chunk_keys (key, chunk) "
               "SELECT hippo_meta_key({row}.agent_id, m.key, m.type, m.atom), {row}.rowid "
               "FROM {rows}json_each(CASE WHEN json_valid({row}.metadata) THEN {row}.metadata END) m "
               "WHERE m.key IS NOT NULL AND m.type NOT IN ('object', 'array')")
_SOURCE_KEY = ("INSERT OR IGNORE INTO chunk_keys (key, chunk) "
               "SELECT hippo_source_key({row}.agent_id, {row}.source), {row}.rowid "
               "{rows}WHERE {row}.source IS NOT NULL")

# ``chunk_keys``: as ``chunk_tags`` for tags, the keys (no text) of each chunk's plain metadata
# values and of its source (``meta_key``, ``source_key``), which the metadata equality, ``$in``
# and source filters list their rows from.
KEYS_MIGRATION = f"""
CREATE TABLE chunk_keys (
    key   INTEGER NOT NULL,    -- meta_key(agent_id, field, type, value) or source_key(agent_id, source)
    chunk INTEGER NOT NULL,    -- the rowid of the chunk in chunks
    PRIMARY KEY (key, chunk)
) WITHOUT ROWID;
CREATE INDEX idx_chunk_keys_chunk ON chunk_keys(chunk);
{_VALUE_KEYS.format(row='c', rows='chunks c, ')};
{_SOURCE_KEY.format(row='c', rows='FROM chunks c ')};
CREATE TRIGGER chunk_keys_ai AFTER INSERT ON chunks BEGIN
    {_VALUE_KEYS.format(row='new', rows='')};
    {_SOURCE_KEY.format(row='new', rows='')};
END;
CREATE TRIGGER chunk_keys_ad AFTER DELETE ON chunks BEGIN
    DELETE FROM chunk_keys WHERE chunk = old.rowid;
END;
CREATE TRIGGER chunk_keys_au AFTER UPDATE OF agent_id, metadata, source ON chunks BEGIN
    DELETE FROM chunk_keys WHERE chunk = old.rowid;
    {_VALUE_KEYS.format(row='new', rows='')};
    {_SOURCE_KEY.format(row='new', rows='')};
END;
"""

# A filtered vector search first looks among the best 2·limit of all rows, then (as many as the share
# that passed says) at most 10·limit, before it lists the rows the filter passes: a filter that
# passes one row in ten or more is answered there.
AFTERWARDS = (2, 10)
# A part of a filter is listed when it passes at most WIDER times the rows left by the narrower
# parts: listing costs ~0.1 µs a row from an index, testing the filter on a row a few µs.
WIDER = 4


def drivers(where: ChunkFilter, agent_id: str) -> list[tuple[str, list[Any]]]:
    """One query per part of ``where`` with an index of its own, each listing (index only) a
    superset of the chunk rowids that part passes; the parts usually narrowest first. An
    experience filter with neither type nor importance has none: nearly every row of an agent
    that records experiences is one."""
    parts: list[tuple[str, list[Any]]] = [
        ("SELECT chunk FROM chunk_tags WHERE tag_key = ?", [tag_key(agent_id, tag)]) for tag in where.tags]
    parts += [_keyed(keys) for keys in _metadata_keys(where, agent_id)]
    if where.session_id is not None:
        parts.append(("SELECT rowid FROM chunks INDEXED BY idx_chunks_session WHERE agent_id = ? AND session_id = ?",
                      [agent_id, where.session_id]))
    if where.sources:
        parts.append(_keyed([source_key(agent_id, source) for source in where.sources]))
    wanted = where.experience
    if wanted is not None and wanted.types:
        tests, params = experience_tests(SQLITE, wanted, "x")
        parts.append((f"SELECT x.chunk FROM experiences x INDEXED BY idx_experiences_type_chunk "
                      f"WHERE {' AND '.join(['x.agent_id = ?', *tests])} AND x.chunk IS NOT NULL", [agent_id, *params]))
    if where.since is not None or where.until is not None:
        period, params = filter_sql(ChunkFilter(since=where.since, until=where.until,
                                                include_superseded=where.reaches_superseded))
        parts.append((f"SELECT c.rowid FROM chunks c INDEXED BY idx_chunks_when WHERE c.agent_id = ? AND {period}",
                      [agent_id, *params]))
    if wanted is not None and not wanted.types and wanted.min_importance is not None:
        parts.append(("SELECT x.chunk FROM experiences x INDEXED BY idx_experiences_importance_chunk "
                      "WHERE x.agent_id = ? AND x.importance >= ? AND x.chunk IS NOT NULL",
                      [agent_id, wanted.min_importance]))
    return parts


def _metadata_keys(where: ChunkFilter, agent_id: str) -> list[list[int]]:
    """The ``chunk_keys`` keys of each equality or ``$in`` condition of ``where`` (a row passes
    only if it has one of them); a condition with a value no key stands for lists nothing."""
    found = []
    for condition in where.metadata:
        values = (condition.value,) if condition.op == "eq" else condition.value if condition.op == "in" else None
        keys = None if values is None else [_value_key(agent_id, condition.key, v) for v in values]
        if keys and None not in keys:
            found.append([key for key in keys if key is not None])
    return found


def _keyed(keys: list[int]) -> tuple[str, list[Any]]:
    """The chunks with any of ``keys`` in ``chunk_keys``, each once."""
    if len(keys) == 1:
        return "SELECT chunk FROM chunk_keys WHERE key = ?", keys
    return f"SELECT DISTINCT chunk FROM chunk_keys WHERE key IN ({','.join('?' * len(keys))})", keys


def narrowed(conn: sqlite3.Connection, agent_id: str, where: ChunkFilter, cap: int,
             lister: Lister | None = None) -> np.ndarray | None:
    """A sorted superset of the agent's rowids that pass ``where``, listed from the indexes of its
    parts (``drivers``), by ``lister`` when given (``supersets.py``: kept listings, used whatever
    their size); None when no part has an index or every one passes more than ``cap``."""
    part = lister or (lambda sql, params, bound: listed(conn, sql, params, bound))
    found: np.ndarray | None = None
    for sql, params in drivers(where, agent_id):
        rowids = part(sql, params, cap if found is None else WIDER * len(found))
        if rowids is None:
            continue
        found = rowids if found is None else _both(found, rowids)
        if not len(found):
            break
    return found


def _both(one: np.ndarray, other: np.ndarray) -> np.ndarray:
    """The rowids in both sorted arrays: each of the shorter looked up in the longer."""
    short, long = (one, other) if len(one) <= len(other) else (other, one)
    if not len(long):
        return long
    at = np.minimum(np.searchsorted(long, short), len(long) - 1)
    return short[long[at] == short]


def _wider(limit: int, seen: int, passed: int) -> int:
    """How many rows to look at next for ``limit`` that pass, when ``passed`` of the first ``seen``
    did: as many as that share says, half as many again (a width that falls short costs a search)."""
    return max(seen + limit, math.ceil(1.5 * limit * seen / max(1, passed)))


def next_batch(size: int, limit: int, missing: int, seen: int, passed: int) -> int:
    """How many rows to test next, in rank order, for ``missing`` more that pass when ``passed`` of
    the first ``seen`` did: as many as that share says, half as many again; at least ``limit``, at
    most four times the last batch (``size``)."""
    return min(4 * size, max(limit, math.ceil(1.5 * missing * seen / max(1, passed))))


class FilteredSearch:
    """The filtered vector search of :class:`~hippo.stores.sqlite.search.SearchMixin`: among the
    rows the filter's indexes list (``narrowed``) when few can pass, else among the best of all
    rows first, those outside the listing failing untested."""

    _vectors: "VectorCache"
    _supersets: Supersets  # see _narrowed
    _kept_now: Callable[[sqlite3.Connection], dict[tuple[Any, ...], Any]]

    def _filter_afterwards(self, conn: sqlite3.Connection, agent_id: str, query: np.ndarray, limit: int,
                           clause: str, params: list[Any], where: ChunkFilter) -> list[tuple[int, float]] | None:
        """The best ``limit`` rows that pass the filter (``clause``). The rows the filter's parts list
        from their own indexes (``_narrowed``, kept across searches) bound what can pass: when fewer
        than one row in ``AFTERWARDS[-1]`` can, the answer is looked for among them alone
        (``_best_within``). Otherwise among the best ``AFTERWARDS[0]``·limit of all, then as many
        more as the share that passed says (at most ``AFTERWARDS[-1]``·limit), a row outside the
        listed superset failing untested (a test reads the row: ~2-5 µs); else among the listed
        rows, read wider and wider until enough pass or all are seen. None when none of these
        answers (no part of the filter narrows, and too few of the best of all pass). Each row's
        filter test runs once."""
        passed: dict[int, bool] = {}
        within, want = None, limit * AFTERWARDS[0]
        known = self._narrowed(conn, agent_id, where)
        own = self._vectors.loaded_count(agent_id) or 0
        if known is not None and len(known) * AFTERWARDS[-1] < own:
            # Fewer than one row in AFTERWARDS[-1] can pass: the best of all would not answer.
            best = self._best_within(conn, agent_id, query, limit, known, clause, params, passed)
            if best is not None:
                return best
        elif known is not None and len(known) * AFTERWARDS[0] < own:
            # At most the share the listing holds can pass: first ask for as many as that share needs.
            want = min(limit * AFTERWARDS[-1], math.ceil(1.5 * limit * own / max(1, len(known))))
        while True:
            found = self._vectors.search(agent_id, query, want, within)
            if within is None and len(found) < limit:
                return None
            fresh = [r for r, _ in found if r not in passed]
            passed.update(dict.fromkeys(fresh, False))
            if known is not None and within is None:
                fresh = [r for r, inside in zip(fresh, np.isin(fresh, known, assume_unique=True)) if inside]
            passed.update(dict.fromkeys(self._passing(conn, agent_id, fresh, clause, params), True))
            kept = [item for item in found if passed[item[0]]]
            if len(kept) >= limit or len(found) < want:  # enough, or every row looked at
                return kept[:limit] if within is not None or len(kept) >= limit else None
            if within is None and want < limit * AFTERWARDS[-1] and len(kept) * AFTERWARDS[-1] >= want:
                want = min(limit * AFTERWARDS[-1], _wider(limit, want, len(kept)))  # should answer
                continue
            if within is None:
                within, want = known, limit * AFTERWARDS[0]
                if within is None:
                    return None
                best = self._best_within(conn, agent_id, query, limit, within, clause, params, passed)
                if best is not None:
                    return best
                continue
            want = max(2 * want, _wider(limit, len(found), len(kept)))

    def _best_within(self, conn: sqlite3.Connection, agent_id: str, query: np.ndarray, limit: int,
                     within: np.ndarray, clause: str, params: list[Any],
                     passed: dict[int, bool]) -> list[tuple[int, float]] | None:
        """The best ``limit`` that pass the filter among ``within`` (a superset of them), when the
        index would scan that many (``VectorIndex.rough``; None otherwise): the rows are tested in
        the order of their rough scores, a few more each time than the share that passed says,
        until ``limit`` + RESCORE_EXTRA pass (or all were tested); only those are scored exactly.
        (A search for the best ``want`` scores each of them exactly, a stored vector read per row,
        before the test, and again when too few pass.)"""
        index = self._vectors.searched(agent_id, query)  # one index for both passes (see ``searched``)
        if index is None:
            return []
        found = index.rough(query, within)
        if found is None:
            return None
        keys, rough = found
        chosen: list[int] = []
        order: list[int] = []  # keys best first, as far as ranked (all of them rarely are needed)
        need, start, size = limit + RESCORE_EXTRA, 0, limit + RESCORE_EXTRA
        while start < len(keys) and len(chosen) < need:
            if start + size > len(order):
                order = keys[top_positions(rough, max(4 * need, 2 * (start + size)))].tolist()
            part = order[start:start + size]
            fresh = [r for r in part if r not in passed]
            passed.update(dict.fromkeys(fresh, False))
            passed.update(dict.fromkeys(self._passing(conn, agent_id, fresh, clause, params), True))
            chosen += [r for r in part if passed[r]]
            start, size = start + size, next_batch(size, limit, need - len(chosen), start + size, len(chosen))
        chosen = chosen[:need]
        if not chosen:
            return []
        exact = index.exact(query, np.asarray(chosen, dtype=np.int64))
        return [(chosen[i], float(exact[i])) for i in top_positions(exact, limit)]

    def _passing(self, conn: sqlite3.Connection, agent_id: str, rowids: list[int], clause: str,
                 params: list[Any]) -> list[int]:
        """Those of ``rowids`` that pass the filter (``clause``)."""
        if not rowids:
            return []
        return [r[0] for r in conn.execute(
            f"SELECT c.rowid FROM chunks c WHERE c.rowid IN (SELECT value FROM json_each(?)) AND +c.agent_id = ? "
            f"AND {clause}", (json.dumps(rowids), agent_id, *params))]

    def _narrowed(self, conn: sqlite3.Connection, agent_id: str, where: ChunkFilter, *,
                  compute: bool = True) -> np.ndarray | None:
        """A sorted superset of the rows ``where`` passes, from its parts' own indexes (``narrowed``),
        their listings kept across searches (``supersets.py``). None when no part narrows to half the
        agent's rows or fewer; with ``compute=False``, from the kept listings alone (None when none
        is kept), so it costs no listing. Kept for the rest of the search (``_kept_now``), which the
        keyword side asks again."""
        kept, key = self._kept_now(conn), ("narrowed", agent_id, where)  # once per search: both sides
        if key in kept:
            return kept[key]
        own = self._vectors.loaded_count(agent_id)
        rows = narrowed(conn, agent_id, where, cap=max(1000, (own or 0) // 2),
                        lister=self._supersets.lister(conn, kept_only=not compute))
        if compute or rows is not None:
            kept[key] = rows
        return rows
