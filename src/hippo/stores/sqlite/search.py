"""Search in the SQLite store: the port's one ``search`` per pass of a recall, and what answers it.

A search runs the vector side (the in-memory matrix or HNSW index of ``vectors.py``), then the
keyword side (FTS5, scored with BM25), reads the standings of the candidates and the cosine of
those found by words only. The two sides share work within one search and across the searches of
one recall (a period's rowid list, a query's scored matches: ``_kept_now``); that is the store's own
business, so nothing at the port depends on the order of calls. ``vector_search``,
``keyword_search`` (an FTS5 MATCH expression) and ``standings`` stay public for SQLite-specific
tests and benchmarks; the core never calls them.
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
from typing import TYPE_CHECKING, Any, Callable, Iterable, NamedTuple, Sequence

import numpy as np

from hippo.core.ports import Candidates, ChunkFilter, SearchQuery, Standing
from hippo.stores.sql.rows import standing_of
from hippo.stores.sqlite.filters import experience_rowids_sql, filter_sql
from hippo.stores.sqlite.index.cache import read_rowids
from hippo.stores.sqlite.index.exact import top_positions
from hippo.stores.sqlite.narrowing.driving import AFTERWARDS, FilteredSearch, next_batch
from hippo.stores.sqlite.windows import best_windows
from hippo.stores.vectors import decode_vector

if TYPE_CHECKING:
    from hippo.stores.sqlite.bm25 import Bm25
    from hippo.stores.sqlite.database import SQLiteDatabase
    from hippo.stores.sqlite.index.cache import VectorCache

__all__ = ["KEYWORD_BUDGET", "SearchMixin", "match_expression"]

EPOCH_JULIAN_DAY = 2440587.5
_STANDING_COLUMNS = (
    "id, running_intensity, access_count, "
    f"(julianday(last_accessed_at) - {EPOCH_JULIAN_DAY}) * 86400.0, "
    f"(julianday(COALESCE(reinforced_at, created_at)) - {EPOCH_JULIAN_DAY}) * 86400.0, "
    "superseded_by, embedding IS NOT NULL, feedback"
)


def match_expression(terms: Iterable[str], *, every: bool = False) -> str | None:
    """The FTS5 MATCH expression for sanitised words (``hippo.core.keywords.keyword_terms``):
    each quoted, so no word is read as an operator; joined by OR, or by AND with ``every``."""
    quoted = [f'"{term}"' for term in terms if term and '"' not in term]
    return (" AND " if every else " OR ").join(quoted) or None


def _marks(n: int) -> str:
    return ",".join("?" * n)


KEYWORD_BUDGET = 10_000  # rows FTS5 may score per keyword search (bench/scale.py measures what it changes)
_OR_TERMS = re.compile(r'"[^"]+"(?: OR "[^"]+")*')
_KEPT_MAX = 12  # entries of SQLiteStore._kept (a recall adds four to eight; a wide rowid list at 1M is 8 MB)


class Affordable(NamedTuple):
    """What a keyword search can afford for one MATCH expression: ``match`` without its most
    frequent terms when all of them together match too many rows; how many rows at most it matches
    (None for other than an OR of terms); and ``completion``, the expression whose BM25 is the
    full query's for the rows that match both a kept and a left-out term (None when none was left
    out)."""

    match: str
    matches: int | None
    completion: str | None = None


def _affordable(conn: sqlite3.Connection, match: str, *, bm25: "Bm25 | None" = None) -> Affordable:
    if not _OR_TERMS.fullmatch(match):
        return Affordable(match, None)
    terms = match.split(" OR ")
    # The words whose postings ``bm25`` keeps are counted there; the others by a MATCH.
    known = bm25.matches([term[1:-1] for term in terms]) if bm25 is not None else [None] * len(terms)
    counts = [
        min(count, KEYWORD_BUDGET + 1) if count is not None else
        conn.execute("SELECT count(*) FROM (SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT ?)",
                     (term, KEYWORD_BUDGET + 1)).fetchone()[0]
        for term, count in zip(terms, known)
    ]
    if sum(counts) <= KEYWORD_BUDGET or len(terms) == 1:
        return Affordable(match, sum(counts))
    kept: list[str] = []
    total = 0
    for count, term in sorted(zip(counts, terms)):
        if kept and total + count > KEYWORD_BUDGET:
            break
        kept.append(term)
        total += count
    left_out = [t for t in terms if t not in kept]
    match = " OR ".join(t for t in terms if t in kept)
    # Only within the budget is every kept match scored, so only then can its score be completed.
    completion = f"({match}) AND ({' OR '.join(left_out)})" if total <= KEYWORD_BUDGET else None
    return Affordable(match, total, completion)


class SearchMixin(FilteredSearch):
    """The search half of :class:`~hippo.stores.sqlite.store.SQLiteStore` (see the module's docstring)."""

    db: "SQLiteDatabase"
    _vectors: "VectorCache"
    _kept: dict[tuple[Any, ...], Any]
    _kept_state: tuple[int, int, int] | None
    _bm25: "Bm25"
    get_vectors: Callable[[str, Sequence[str]], dict[str, np.ndarray]]

    def search(self, agent_id: str, query: SearchQuery) -> Candidates:
        if not self._holds_chunks(agent_id):  # a new agent, or one whose memories are all short-term yet
            return Candidates([], {}, {}, exhausted=True)
        similarity: dict[str, float] = {}
        depth = query.depth
        if query.vector is not None:
            similarity = dict(self.vector_search(agent_id, query.vector, depth, query.where,
                                                 quick=query.near_duplicates))
        bm25: dict[str, float] = {}
        match = match_expression(query.terms, every=query.every_term)
        if match is not None:
            bm25 = dict(self.keyword_search(agent_id, match, depth, query.where))
        ids = list(dict.fromkeys([*similarity, *bm25]))
        unscored = [i for i in ids if i not in similarity] if query.score_all else []
        chunks, cosines = self.score(agent_id, ids, query.vector, among=unscored)
        return Candidates.found(chunks, similarity, bm25, cosines, depth)

    def score(self, agent_id: str, ids: Sequence[str], vector: np.ndarray | None, *,
              among: Sequence[str] | None = None) -> tuple[list[Standing], dict[str, float]]:
        """Standings of ``ids`` and the cosine to ``vector`` of those ``among`` (all by default): a
        long chunk's best over its windows."""
        chunks = self.standings(agent_id, ids)
        cosines: dict[str, float] = {}
        if vector is not None:
            wanted = set(ids if among is None else among)
            scored = [c.id for c in chunks if c.has_vector and c.id in wanted]
            for chunk_id, stored in self.get_vectors(agent_id, scored).items():
                if len(stored) == len(vector):
                    cosines[chunk_id] = float(np.dot(stored, vector))
            with self.db.reading(agent_id) as conn:
                windows = best_windows(conn, agent_id, scored, vector)
            for chunk_id, best in windows.items():
                if chunk_id in cosines:
                    cosines[chunk_id] = max(cosines[chunk_id], best)
        return chunks, cosines

    def standings(self, agent_id: str, ids: Sequence[str]) -> list[Standing]:
        """What ranking reads of the agent's chunks among ``ids``, in the order of ``ids``."""
        if not ids:
            return []
        with self.db.reading(agent_id) as conn:
            rows = conn.execute(f"SELECT {_STANDING_COLUMNS} FROM chunks WHERE +agent_id = ? "
                                f"AND id IN ({_marks(len(ids))})", (agent_id, *ids)).fetchall()
        by_id = {row[0]: standing_of(row) for row in rows}
        return [by_id[i] for i in ids if i in by_id]

    def vector_search(self, agent_id: str, query: np.ndarray, limit: int,
                      where: ChunkFilter, *, quick: bool = False) -> list[tuple[str, float]]:
        with self.db.reading(agent_id) as conn:
            allowed = None
            clause, params = filter_sql(where)
            # The index holds live chunks: a filter that lets superseded ones through (a look at a
            # past date) is answered from the rows it lists, the superseded ones scored apart.
            if not where.is_empty and not where.reaches_superseded:
                found = self._filter_afterwards(conn, agent_id, query, limit, clause, params, where)
                if found is not None:
                    return self._ids_for_rowids(found)
            if not where.is_empty or where.reaches_superseded:
                allowed = self._allowed_rowids(conn, agent_id, clause, params, where=where)
            found = self._vectors.search(agent_id, query, limit, allowed, quick=quick)
            if where.reaches_superseded:
                found = self._merge_superseded(conn, agent_id, query, limit, found, allowed)
            return self._ids_for_rowids(found)

    def _holds_chunks(self, agent_id: str) -> bool:
        """Whether the agent has a chunk at all (archived ones are not chunks), known until the file changes."""
        with self.db.reading(agent_id) as conn:
            kept, key = self._kept_now(conn), ("holds", agent_id)
            if key not in kept:
                found = conn.execute("SELECT 1 FROM chunks WHERE agent_id = ? LIMIT 1", (agent_id,)).fetchone()
                kept[key] = found is not None
            return kept[key]

    def _kept_now(self, conn: sqlite3.Connection) -> dict[tuple[Any, ...], Any]:
        """What is worth keeping between the searches of one recall (a period's rowid list, a
        keyword query's scores), valid until the file changes: this connection's writes move
        ``total_changes``, other connections' commits ``PRAGMA data_version``; a rollback moves neither,
        so the rollbacks are counted too."""
        state = (conn.execute("PRAGMA data_version").fetchone()[0], conn.total_changes, self.db.rollbacks)
        if state != self._kept_state or len(self._kept) >= _KEPT_MAX:
            self._kept, self._kept_state = {}, state
        return self._kept

    def _allowed_rowids(self, conn: sqlite3.Connection, agent_id: str, clause: str, params: list[Any],
                        *, read: bool = True, where: ChunkFilter | None = None) -> np.ndarray | None:
        """The agent's rowids that pass a filter (``clause``), sorted, kept until the file changes
        so that recall's vector and keyword searches of one period list them once. With
        ``read=False``: only a kept list, else None. An experience filter (``where``) is listed
        from the experiences' index."""
        kept, key = self._kept_now(conn), ("allowed", agent_id, clause, tuple(params))
        if key not in kept and read:
            sql, args = (experience_rowids_sql(where, agent_id) if where is not None and where.experience
                         else (f"SELECT c.rowid FROM chunks c WHERE c.agent_id = ? AND {clause}", [agent_id, *params]))
            kept[key] = np.sort(read_rowids(conn, sql, tuple(args)))
        return kept.get(key)

    def _scored(self, conn: sqlite3.Connection, match: str,
                completion: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Every row ``match`` matches, with its BM25 rank (lower is better), scored by FTS5 alone
        (``rank`` is bm25: the table sets no other) and kept until the file changes, so that a
        recall's second, time-filtered pass does not score the same matches again. With a
        ``completion`` (see :class:`Affordable`), the rows it matches take its rank: the full
        query's, left-out terms included."""
        kept = self._kept_now(conn)
        if ("scored", match, completion) not in kept:
            rowids, ranks = self._ranks(conn, match)
            if completion is not None and len(rowids):
                more, better = self._ranks(conn, completion)
                order = np.argsort(rowids, kind="stable")
                at = order[np.searchsorted(rowids, more, sorter=order)]
                ranks[at] = better
            kept["scored", match, completion] = (rowids, ranks)
        return kept["scored", match, completion]

    def _ranks(self, conn: sqlite3.Connection, match: str) -> tuple[np.ndarray, np.ndarray]:
        if _OR_TERMS.fullmatch(match):  # an OR of words: numpy from the postings (bm25.py), when it can
            found = self._bm25.ranks([term[1:-1] for term in match.split(" OR ")])
            if found is not None:
                return found
        # Ranks travel as integer millionths: SQLite prints and numpy parses integers ~5x faster
        # than floats (1.5 ms of a 100k recall), and a millionth of a BM25 point orders the same.
        rowids, ranks = conn.execute(
            "SELECT group_concat(rowid), group_concat(CAST(rank * 1e6 AS INTEGER)) FROM chunks_fts "
            "WHERE chunks_fts MATCH ?", (match,)
        ).fetchone()
        return (np.fromstring(rowids or "", dtype=np.int64, sep=","),
                np.fromstring(ranks or "", dtype=np.int64, sep=",") / 1e6)

    def _merge_superseded(self, conn: sqlite3.Connection, agent_id: str, query: np.ndarray, limit: int,
                          found: list[tuple[int, float]], allowed: np.ndarray | None) -> list[tuple[int, float]]:
        """The matrix holds live chunks only; superseded ones (a fact's history, few) are scored here."""
        for rowid, blob in conn.execute(
            "SELECT rowid, embedding FROM chunks WHERE agent_id = ? AND superseded_by IS NOT NULL "
            "AND embedding IS NOT NULL", (agent_id,),
        ):
            vector = decode_vector(blob)
            if len(vector) == len(query) and (allowed is None or rowid in allowed):
                found.append((rowid, float(vector @ query)))
        return sorted(found, key=lambda item: -item[1])[:limit]

    def _ids_for_rowids(self, found: list[tuple[int, float]]) -> list[tuple[str, float]]:
        if not found:
            return []
        rows = self.db.conn.execute(
            f"SELECT rowid, id FROM chunks WHERE rowid IN ({_marks(len(found))})", [r for r, _ in found]
        ).fetchall()
        ids = dict(rows)
        return [(ids[r], s) for r, s in found if r in ids]

    def keyword_search(self, agent_id: str, match: str, limit: int, where: ChunkFilter) -> list[tuple[str, float]]:
        """BM25 top ``limit``. FTS5 scores every matching row, so an OR query whose terms match
        more than ``KEYWORD_BUDGET`` rows leaves out its most frequent terms (the ones BM25 weighs
        least) until the rest fit; the rarest term always stays. The rows that match a kept term
        then get their full score, left-out terms included (see :class:`Affordable`): what is
        lost is only the rows that match none of the kept terms."""
        clause, params = filter_sql(where)
        with self.db.reading(agent_id) as conn:
            kept = self._kept_now(conn)
            if ("affordable", match, KEYWORD_BUDGET) not in kept:
                kept["affordable", match, KEYWORD_BUDGET] = _affordable(conn, match, bm25=self._bm25)
            match, matches, completion = kept["affordable", match, KEYWORD_BUDGET]
            if completion is not None:  # scored as a whole, then the agent's rows picked in rank order
                allowed = None if where.is_empty else self._allowed_rowids(conn, agent_id, clause, params, read=False)
                if allowed is not None:
                    return self._keyword_among(conn, match, allowed, limit, completion)
                return self._among_the_best(conn, match, limit, agent_id, clause, params, completion=completion,
                                            within=None if where.is_empty else self._narrowed(conn, agent_id, where))
            return self._within_budget(conn, agent_id, match, matches, limit, where, clause, params, kept)

    def _within_budget(self, conn: sqlite3.Connection, agent_id: str, match: str, matches: int | None, limit: int,
                       where: ChunkFilter, clause: str, params: list[Any],
                       kept: dict[tuple[Any, ...], Any]) -> list[tuple[str, float]]:
        """:meth:`keyword_search` of a MATCH that left no term out: the cheapest plan that gives the
        exact answer, tried in order (``kept``: what the search found kept when it began)."""
        # Within the budget every match is scored by FTS5 alone, once per recall (see _scored).
        scorable = matches is not None and matches <= KEYWORD_BUDGET
        # Two plans. Fast: rank in FTS5 alone (no row lookups while scoring), then keep the
        # agent's rows among the best 8·limit. Exact: join every match to its row and compute
        # BM25 only for the rows that pass. The fast plan pays off only when the agent's own
        # matches are many (a large agent, or one alone in its file); for an agent with a small
        # share of the file, or under a filter, it comes up short and the exact plan runs anyway.
        own = self._vectors.loaded_count(agent_id)
        if where.is_empty and self._expected_own_matches(conn, own, matches) >= limit * 8:
            if scorable:
                rows = self._among_the_best(conn, match, limit, agent_id, clause, params, reach=limit * 8)
            else:
                rows = conn.execute(
                    "SELECT c.id, -r.rank FROM (SELECT rowid, bm25(chunks_fts) AS rank FROM chunks_fts "
                    "WHERE chunks_fts MATCH ? ORDER BY rank LIMIT ?) AS r JOIN chunks c ON c.rowid = r.rowid "
                    f"WHERE +c.agent_id = ? AND {clause} ORDER BY r.rank LIMIT ?",
                    (match, limit * 8, agent_id, *params, limit),
                ).fetchall()
            if len(rows) >= limit:
                return rows
        return self._exactly(conn, agent_id, match, matches, limit, where, clause, params, kept, own=own,
                             scorable=scorable)

    def _exactly(self, conn: sqlite3.Connection, agent_id: str, match: str, matches: int | None, limit: int,
                 where: ChunkFilter, clause: str, params: list[Any], kept: dict[tuple[Any, ...], Any], *,
                 own: int | None, scorable: bool) -> list[tuple[str, float]]:
        """The exact plans of :meth:`_within_budget`, the cheapest that applies first."""
        # The exact answer without a join, when the rows that pass were listed (by the vector
        # search of the same filter) and the matches are scored already, or would be joined
        # one by one otherwise.
        allowed = None
        if scorable and not where.is_empty:
            allowed = self._allowed_rowids(conn, agent_id, clause, params, read=False)
        if allowed is not None and ("scored", match, None) in kept:
            return self._keyword_among(conn, match, allowed, limit)
        # Among the rows the filter's indexes list, when a listing is kept (the vector side
        # lists it: supersets.py); else the best that pass, read in rank order among the best
        # matches (exact: a row further down ranks lower), before a join over every match.
        if scorable and not where.is_empty:
            narrow = self._narrowed(conn, agent_id, where, compute=False)
            if narrow is None:
                rows = self._among_the_best(conn, match, limit, agent_id, clause, params,
                                            reach=limit * AFTERWARDS[-1])
                if len(rows) >= limit:
                    return rows
                narrow = self._narrowed(conn, agent_id, where)
            if narrow is not None:
                return self._among_the_best(conn, match, limit, agent_id, clause, params, within=narrow)
        within, within_params = self._fewer_rows_than(conn, agent_id, where, clause, params, own, matches)
        if allowed is not None and not within:
            return self._keyword_among(conn, match, allowed, limit)
        rows = conn.execute(
            "SELECT c.id, bm25(chunks_fts) AS rank FROM chunks_fts JOIN chunks c ON c.rowid = chunks_fts.rowid "
            f"WHERE chunks_fts MATCH ? {within}AND +c.agent_id = ? AND {clause} ORDER BY rank LIMIT ?",
            (match, *within_params, agent_id, *params, limit),
        ).fetchall()
        return [(row[0], -row[1]) for row in rows]

    def _among_the_best(self, conn: sqlite3.Connection, match: str, limit: int, agent_id: str, clause: str,
                        params: list[Any], *, reach: int | None = None, completion: str | None = None,
                        within: np.ndarray | None = None) -> list[tuple[str, float]]:
        """The best ``limit`` of the agent's rows that pass the filter, read in rank order among
        the scored matches (the best ``reach`` only, when given; only those ``within`` a sorted
        superset of the rows that pass, when given): the best 2·limit first, then as many more as
        the share that passed says (at most four times as many), which stops early when the agent
        owns most matches."""
        rowids, ranks = self._scored(conn, match, completion)
        if within is not None:
            inside = np.flatnonzero(np.isin(rowids, within, assume_unique=True))
            top = inside[top_positions(-ranks[inside], len(inside))]
        else:
            top = top_positions(-ranks, len(ranks) if reach is None else reach)  # bm25 ranks: lower is better
        found: list[tuple[str, float]] = []
        start, size = 0, limit * 2
        while start < len(top) and len(found) < limit:
            part = top[start:start + size]
            passing = dict(conn.execute(
                "SELECT c.rowid, c.id FROM chunks c WHERE c.rowid IN (SELECT value FROM json_each(?)) "
                f"AND +c.agent_id = ? AND {clause}", (json.dumps(rowids[part].tolist()), agent_id, *params),
            ).fetchall())
            found += [(passing[r], -float(ranks[i])) for i, r in zip(part, rowids[part].tolist()) if r in passing]
            start, size = start + size, next_batch(size, limit, limit - len(found), start + size, len(found))
        return found[:limit]

    def _keyword_among(self, conn: sqlite3.Connection, match: str, allowed: np.ndarray,
                       limit: int, completion: str | None = None) -> list[tuple[str, float]]:
        """BM25 top ``limit`` of the matches among ``allowed`` (sorted rowids that pass the filter),
        from the scored matches: no match's row is looked up (the join costs ~2.5 µs a match at
        1M rows, ~20 ms for a month)."""
        rowids, ranks = self._scored(conn, match, completion)
        keep = np.isin(rowids, allowed, assume_unique=True)
        rowids, ranks = rowids[keep], ranks[keep]
        return self._ids_for_rowids([(int(rowids[i]), -float(ranks[i])) for i in top_positions(-ranks, limit)])

    @staticmethod
    def _fewer_rows_than(conn: sqlite3.Connection, agent_id: str, where: ChunkFilter, clause: str,
                         params: list[Any], own: int | None, matches: int | None) -> tuple[str, list[Any]]:
        """A condition that keeps the matches among a set of rowids read from an index, when that
        set is smaller than the matches; every other match is then dropped before its row is
        looked up. The set is the agent's rows that pass ``where`` (``clause``) when it names a
        period (counted on the time index, never past ``matches``), else all the agent's rows."""
        if matches is None:
            return "", []
        if where.since is not None or where.until is not None:
            period, period_params = filter_sql(
                ChunkFilter(since=where.since, until=where.until, include_superseded=where.reaches_superseded))
            (in_period,) = conn.execute(
                f"SELECT count(*) FROM (SELECT 1 FROM chunks c WHERE c.agent_id = ? AND {period} LIMIT ?)",
                (agent_id, *period_params, matches + 1),
            ).fetchone()
            if in_period <= matches:
                return (f"AND +chunks_fts.rowid IN (SELECT c.rowid FROM chunks c WHERE c.agent_id = ? AND {clause}) ",
                        [agent_id, *params])
        if own is not None and own <= matches:
            return "AND +chunks_fts.rowid IN (SELECT rowid FROM chunks WHERE agent_id = ?) ", [agent_id]
        return "", []

    @staticmethod
    def _expected_own_matches(conn: sqlite3.Connection, own: int | None, matches: int | None) -> float:
        """``matches`` times the agent's share of the file's rows, as far as known without
        counting (``own``: its loaded vectors, against the highest rowid); infinite when unknown."""
        if matches is None or own is None:
            return math.inf
        (highest,) = conn.execute("SELECT max(rowid) FROM chunks").fetchone()
        return matches * own / max(1, highest or 0, own)

