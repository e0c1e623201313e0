"""Search in the PostgreSQL store: each pass of a recall is one statement, one round trip.

The statement finds the best ``depth`` by vector (pgvector, inner product on unit vectors) and
the best ``depth`` by words, and returns the standing of every candidate with its cosine.

The keyword score is BM25's idea in PostgreSQL's terms: each query word's ``ts_rank`` (term
frequency, normalised by document length) weighted by the word's inverse document frequency
among the agent's chunks, summed. ``ts_rank`` alone knows no rarity, so a rare part number
would weigh no more than a common word (a test shows the difference). Document frequencies are
counted in the same statement, each capped at ``KEYWORD_BUDGET`` + 1 rows; as in SQLite, when
the words together match more than the budget, the most frequent are left out (the rarest always
stays): those are the words BM25 weighs least.

The vector side reads the HNSW index only for agents with at least ``ann_threshold`` vectors; a
smaller agent is scanned exactly (a few milliseconds, and exact). pgvector (0.6) filters an index
scan after the fact, among the ``hnsw.ef_search`` rows its walk keeps, so when the index answers
with fewer rows than asked while the agent holds more, the vector side is asked again alone (its
keyword side is kept): with a walk wide enough for the share of rows that passed (``EF_MAX`` at
most), else exactly: a narrow filter never loses what it should find. The share of a filter's
rows a walk found is remembered (by agent and filter values, for a while), so that the next search
with that filter walks as wide as it needs, or scans exactly, at once.

When no other request uses the pool, the keyword side runs on a second connection beside the
vector side (two statements at the same time, their rows joined by id): a recall waits for the
slower side instead of both. Under load each statement's own cost would only add up, so then the
two sides run as one statement. The keyword side of a recall that asks for live chunks of some
kinds and nothing else reads ``chunk_words`` (their words, in rows that pack ~30 to a page, found
by word and agent together) instead of the wide rows.
"""

from __future__ import annotations

import time
from concurrent import futures
from contextlib import contextmanager, nullcontext
from typing import Any, Iterator, Sequence

import numpy as np

from hippo.core.ports import Candidates, SearchQuery, Standing
from hippo.errors import EmbedderMismatch
from hippo.stores.neighbours import nearest_runs
from hippo.stores.postgres.connection import EF_SEARCH, Connections, storage_errors
from hippo.stores.postgres.filters import filter_sql, words_filter_sql
from hippo.stores.postgres.schema import vector_index
from hippo.stores.postgres.strength import CHUNKS
from hippo.stores.postgres.windows import best_cosine, vector_side, vector_values
from hippo.stores.sql.rows import standing_of

__all__ = ["SearchMixin", "tsquery"]

_STANDING = ("c.id, s.running_intensity, s.access_count, extract(epoch FROM s.last_accessed_at)::float8, "
             "extract(epoch FROM COALESCE(c.reinforced_at, c.created_at))::float8, c.superseded_by, "
             "c.embedding IS NOT NULL, c.feedback")
# Each candidate's row and counters, looked up by id. OFFSET 0 keeps the planner from joining them as
# tables: from the thousands of candidates it estimated for a time filter (there are at most twice the
# depth), it chose to hash every row of the agent, and every counter.
_CANDIDATE_ROWS = ("CROSS JOIN LATERAL (SELECT c.id, c.reinforced_at, c.created_at, c.superseded_by, c.embedding, "
                   "c.feedback FROM chunk_rows c WHERE c.id = ids.id AND c.agent_id = %s OFFSET 0) c "
                   "CROSS JOIN LATERAL (SELECT s.running_intensity, s.access_count, s.last_accessed_at "
                   "FROM chunk_strength s WHERE s.id = c.id OFFSET 0) s")
_COUNT_TTL = 30.0  # seconds an agent's counts are trusted (plan choice, the N of IDF)
_WORD_TTL = 300.0  # seconds a word's document frequency is trusted (its IDF, the budget's choice)
_WORDS_KEPT = 50_000  # words whose counts are kept at most (all dropped past it); filters' shares too
_SHARE_TTL = 300.0  # seconds the share of a walk's rows that passed a filter is trusted
KEYWORD_BUDGET = 10_000  # rows the keyword side may score per search (as the SQLite store)
EF_MAX = 1000  # pgvector's largest hnsw.ef_search


def tsquery(terms: Sequence[str], every: bool = False) -> str | None:
    """A ``to_tsquery`` text for sanitised words: each quoted as a lexeme, joined by | or &."""
    quoted = _lexemes(terms)
    return (" & " if every else " | ").join(quoted) or None


def _lexemes(terms: Sequence[str]) -> list[str]:
    return [f"'{t}'" for t in terms if t and "'" not in t and "\\" not in t]


def _by_vector(rows: list[tuple]) -> int:
    """How many of a search's rows its vector side found."""
    return sum(r[8] is not None for r in rows)


def _with_vectors_of(rows: list[tuple], again: list[tuple]) -> list[tuple]:
    """``rows`` (both sides of a search) with their vector side replaced by ``again``'s (a search
    of the vector side alone; rows: standing, similarity, keyword score, cosine): a row the keyword
    side found keeps its keyword score, and where ``again`` did not find it, its cosine (the
    similarity the first vector side gave it, if any: the same inner product)."""
    merged = {r[0]: r for r in again}
    for row in rows:
        if row[9] is None:
            continue  # found by the first vector side only: ``again`` answers for that side
        known = merged.get(row[0])
        if known is None:
            merged[row[0]] = (*row[:8], None, row[9], row[10] if row[10] is not None else row[8], *row[11:])
        else:
            merged[row[0]] = (*known[:9], row[9], *known[10:])
    return list(merged.values())


def _joined(by_vector: list[tuple], by_words: list[tuple]) -> list[tuple]:
    """A search's rows from its two sides run apart: a row both found takes its similarity from
    the vector side and its keyword score from the other (its cosine is then not needed)."""
    merged = {r[0]: r for r in by_words}
    for row in by_vector:
        known = merged.get(row[0])
        merged[row[0]] = row if known is None else (*row[:9], known[9], *row[10:])
    return list(merged.values())


def _wider(found: int, depth: int) -> int | None:
    """The walk (``hnsw.ef_search``) that should find ``depth`` rows passing a filter of which one of
    ``EF_SEARCH`` found ``found`` (fewer), half as much again; None (the exact scan) past pgvector's EF_MAX."""
    wanted = EF_SEARCH * depth * 3 // max(1, 2 * found) if found else EF_MAX + 1
    return wanted if wanted <= EF_MAX else None


@contextmanager
def _walking(conn: Any, width: int) -> Iterator[None]:
    """Statements of ``conn`` walk ``width`` rows of the HNSW graph (the pool's connections are set
    to ``EF_SEARCH``): in a transaction of their own, or a savepoint in the thread's write, which
    then puts the setting back."""
    if width == EF_SEARCH:
        yield
        return
    with conn.transaction():
        conn.execute("SELECT set_config('hnsw.ef_search', %s, true)", (str(width),))
        yield
        conn.execute("SELECT set_config('hnsw.ef_search', %s, true)", (str(EF_SEARCH),))


def _check_dimension(conn: Any, size: int) -> None:
    """EmbedderMismatch when the database's vectors are of another size than the query's (a memory
    left open while the database switched models, ``hippo.reembed``, which records the model it
    made them with): found nothing must not mean that. One row read, not a scan of the vectors."""
    row = conn.execute("SELECT dimension FROM embedding_model WHERE id = 1").fetchone()
    if row is not None and row[0] is not None and row[0] != size:
        raise EmbedderMismatch(f"query vector has dimension {size} but stored vectors have {row[0]}; "
                               "re-embed the database with hippo.reembed()")


# The keyword side: d = each word's query and document frequency (counted up to the budget; past it,
# or at once when the agent owns the table, estimated from the share of rows ANALYZE found it in,
# which costs no row visit), w = its IDF, kept = the words within the budget (the rarest always),
# wa = their queries and IDFs as two arrays (read once), k = the best ``depth`` chunks that match a kept word,
# each scored by every word of the query (a left-out word still adds its part to a row a kept word
# found). d and w are MATERIALIZED: inlined, PostgreSQL counted each word's matches once per
# reference (five times; 85 of a 107 ms keyword side at 100k rows).
_KEYWORDS = (
    "d AS MATERIALIZED (SELECT t.term, q.q, CASE WHEN t.known IS NOT NULL THEN t.known "
    "WHEN s.n IS NOT NULL AND %s THEN s.n WHEN x.n <= %s THEN x.n ELSE coalesce(s.n, x.n) END AS n "
    "FROM unnest(%s::text[], %s::bigint[]) AS t(term, known), "
    "LATERAL (SELECT to_tsquery('hippo_english', hippo_fold(t.term)) AS q) q "
    "LEFT JOIN LATERAL (SELECT round(e.f * %s) AS n FROM pg_stats s, "
    "unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs) AS e(word, f) "
    "WHERE s.schemaname = current_schema() AND s.tablename = 'chunk_rows' AND s.attname = 'tsv' "
    "AND e.word = btrim(querytree(q.q), '''')) s ON true, LATERAL (SELECT count(*) AS n FROM "
    "(SELECT 1 FROM chunk_rows c2 WHERE t.known IS NULL AND NOT (%s AND s.n IS NOT NULL) AND c2.agent_id = %s "
    "AND c2.tsv @@ q.q LIMIT %s) x) x WHERE numnode(q.q) > 0), "
    "w AS MATERIALIZED (SELECT q, ln(1 + (greatest(%s::float8, n) - n + 0.5) / (n + 0.5)) AS idf, "
    "sum(n) OVER (ORDER BY n, term) AS running, row_number() OVER (ORDER BY n, term) AS rarest FROM d), "
    "kept AS (SELECT string_agg(q::text, ' | ')::tsquery AS q FROM w WHERE running <= %s OR rarest = 1 OR %s), "
    "wa AS MATERIALIZED (SELECT array_agg(q) AS qs, array_agg(idf) AS idfs FROM w), "
    "k AS (SELECT c.id, ({score})::float8 AS kw "
    "FROM {table} c WHERE c.agent_id = %s AND c.tsv @@ (SELECT q FROM kept) AND {clause} {every} "
    "ORDER BY kw DESC, c.id LIMIT %s)"
)

_EVERY = "AND (SELECT count(*) FROM w WHERE c.tsv @@ w.q) = (SELECT count(*) FROM d)"


def _score(words: int) -> str:
    """A row's keyword score: each word's IDF times its ``ts_rank``, summed, written out word by
    word (a word left out of ``w``, a stop word, adds nothing; a word the row lacks ranks 0). As a
    subquery over ``w`` per row it cost a third of the keyword side (~5 ms for 9,000 rows)."""
    return " + ".join(f"coalesce((SELECT idfs[{i}] FROM wa) * ts_rank(c.tsv, (SELECT qs[{i}] FROM wa), 1), 0)"
                      for i in range(1, words + 1))


class SearchMixin:
    """The search half of :class:`~hippo.stores.postgres.store.PostgresStore`."""

    ann_threshold: int | None
    _counts: dict[str, tuple[float, int, int, int]]
    _words: dict[tuple[str, str], tuple[float, int]]
    _table_rows: tuple[float, float] | None
    _indexed: bool
    _search_threads: futures.ThreadPoolExecutor | None
    _shares: dict[tuple[str, str, str], tuple[float, int]]
    db: Connections

    def search(self, agent_id: str, query: SearchQuery) -> Candidates:
        clause, params = filter_sql(query.where)
        vector = None if query.vector is None else np.asarray(query.vector, dtype=np.float32)
        words = _lexemes(query.terms)
        both = vector is not None and bool(words)
        walk = self._first_walk(agent_id, clause, params, query.depth)
        with self.db.reading(agent_id) as conn, self.db.spare() if both else nullcontext() as other:
            if other is not None and vector is not None:
                rows = self._both_sides(conn, other, agent_id, vector, words, clause, params, query, walk)
            else:
                rows = self._candidates(conn, agent_id, vector, words, clause, params, query, walk=walk)
            found_v = _by_vector(rows)
            if vector is not None and not found_v:
                _check_dimension(conn, len(vector))
            if walk is not None and vector is not None and self._ann(conn, agent_id) and found_v < query.depth \
                    and self._vector_count(conn, agent_id) > found_v:
                if walk == EF_SEARCH:
                    self._learn_share(agent_id, clause, params, found_v)
                again = self._vector_side(conn, agent_id, vector, clause, params, query, found_v, walk)
                rows = _with_vectors_of(rows, again)
        similarity = {r[0]: r[8] for r in rows if r[8] is not None}
        bm25 = {r[0]: r[9] for r in rows if r[9] is not None}
        cosines = {r[0]: r[10] for r in rows if r[10] is not None}
        return Candidates.found([standing_of(r) for r in rows], similarity, bm25, cosines, query.depth)

    def _both_sides(self, conn: Any, other: Any, agent_id: str, vector: np.ndarray, words: list[str], clause: str,
                    params: list[Any], query: SearchQuery, walk: int | None) -> list[tuple]:
        """The vector side on ``conn`` and the keyword side on ``other`` at the same time: a recall
        waits for the slower of the two instead of both (at 100k on two cores: 15.9 against 20.4 ms)."""
        keyword = self._searcher().submit(self._candidates, other, agent_id, vector, words, clause, params, query,
                                          by_vector=False)
        try:
            by_vector = self._candidates(conn, agent_id, vector, [], clause, params, query, walk=walk)
        finally:
            futures.wait([keyword])  # ``other`` goes back to the pool only once its statement is done
        with storage_errors("PostgreSQL read failed"):
            return _joined(by_vector, keyword.result())

    def _searcher(self) -> futures.ThreadPoolExecutor:
        if self._search_threads is None:
            self._search_threads = futures.ThreadPoolExecutor(thread_name_prefix="hippo-search")
        return self._search_threads

    def _first_walk(self, agent_id: str, clause: str, params: list[Any], depth: int) -> int | None:
        """The width (``hnsw.ef_search``) of a search's first walk: ``EF_SEARCH``, unless a walk with
        this filter (the same agent and values, within ``_SHARE_TTL``) let too few rows through for
        ``depth``: then as wide as that share needs, or None, the exact scan. At 100k a 5% tag filter
        walked 256 rows for ~13, then scanned exactly: two statements where one does."""
        known = self._shares.get((agent_id, clause, repr(params)))
        if known is None or time.monotonic() - known[0] > _SHARE_TTL:
            return EF_SEARCH
        return _wider(known[1], depth)

    def _learn_share(self, agent_id: str, clause: str, params: list[Any], found: int) -> None:
        """Remember that a walk of ``EF_SEARCH`` rows found ``found`` that pass this filter."""
        if len(self._shares) > _WORDS_KEPT:
            self._shares.clear()
        self._shares[(agent_id, clause, repr(params))] = (time.monotonic(), found)

    def _vector_side(self, conn: Any, agent_id: str, vector: np.ndarray, clause: str, params: list[Any],
                     query: SearchQuery, found: int, tried: int) -> list[tuple]:
        """The vector side again, when a walk ``tried`` rows wide found ``found`` that pass, fewer
        than the depth: after the first walk, one as much wider as that share needs (half as much
        again) when pgvector allows it; else, or when that one falls short too, the exact scan."""
        wanted = _wider(found, query.depth) if tried == EF_SEARCH else None
        if wanted is not None:
            rows = self._candidates(conn, agent_id, vector, [], clause, params, query, walk=wanted)
            if _by_vector(rows) >= query.depth:
                return rows
        return self._candidates(conn, agent_id, vector, [], clause, params, query, walk=None)

    def _candidates(self, conn: Any, agent_id: str, vector: np.ndarray | None, words: list[str], clause: str,
                    params: list[Any], query: SearchQuery, *, walk: int | None = EF_SEARCH,
                    by_vector: bool = True) -> list[tuple]:
        """One search's statement: its vector side (unless ``by_vector`` is False: the vector then
        only gives the cosine of what the words found), an HNSW walk ``walk`` rows wide or (None)
        the exact scan, and its keyword side (when ``words``)."""
        sides, values = [], []
        indexed = False
        if vector is not None and by_vector:
            indexed = walk is not None and self._ann(conn, agent_id)
            windows = self._window_count(conn, agent_id) > 0  # a long memory's windows, searched beside
            # The exact scan reads every row that passes: driven by the filters' own indexes.
            own, own_params = (clause, params) if indexed else filter_sql(query.where, driven_for=agent_id)
            sides.append(vector_side(len(vector), indexed, own, windows))
            values += vector_values(vector, agent_id, own_params, query.depth, windows)
        else:
            sides.append("v AS (SELECT NULL::text AS id, NULL::float8 AS sim WHERE false)")
        if words:
            side, side_values = self._keyword_side(conn, agent_id, words, clause, params, query)
            sides.append(side)
            values += side_values
        else:
            sides.append("k AS (SELECT NULL::text AS id, NULL::float8 AS kw WHERE false)")
        cosine, cosine_values = "NULL::float8", []
        if vector is not None and query.score_all:
            cosine = f"CASE WHEN v.id IS NULL THEN {best_cosine(len(vector))} END"
            cosine_values = [vector, vector]
        counted = "(SELECT json_agg(json_build_array(d.term, d.n)) FROM d)" if words else "NULL::json"
        sql = (f"WITH {', '.join(sides)}, ids AS (SELECT id FROM v UNION SELECT id FROM k) "
               f"SELECT {_STANDING}, v.sim, k.kw, {cosine}, {counted} FROM ids {_CANDIDATE_ROWS} "
               "LEFT JOIN v ON v.id = c.id LEFT JOIN k ON k.id = c.id")
        with _walking(conn, walk if indexed and walk is not None else EF_SEARCH):
            rows = conn.execute(sql, [*values, *cosine_values, agent_id]).fetchall()
        if words and rows and rows[0][11]:
            self._remember_words(agent_id, rows[0][11])
        return rows

    def _keyword_side(self, conn: Any, agent_id: str, words: list[str], clause: str, params: list[Any],
                      query: SearchQuery) -> tuple[str, list[Any]]:
        """The keyword side's part of the statement and its values: it reads the live chunks' words
        (``chunk_words``) when the filter asks for nothing but live chunks of some kinds, else the
        wide rows, where every filter can be tested."""
        rows_n, _ = self._agent_counts(conn, agent_id)
        table, own = "chunk_words", words_filter_sql(query.where)
        if own is None:
            table, own = "chunk_rows", (clause, params)
        sql = _KEYWORDS.format(table=table, clause=own[0], every=_EVERY if query.every_term else "",
                               score=_score(len(words)))
        trust = self._owns_the_table(conn, rows_n)
        return sql, [trust, KEYWORD_BUDGET, words, self._known_words(agent_id, words), float(rows_n), trust,
                     agent_id, KEYWORD_BUDGET + 1, float(rows_n), KEYWORD_BUDGET, query.every_term,
                     agent_id, *own[1], query.depth]

    def _known_words(self, agent_id: str, words: list[str]) -> list[int | None]:
        """The document frequency of each word as counted (or estimated) within ``_WORD_TTL``
        seconds, None where it must be counted: frequent words recur across questions, and
        counting one visits up to ``KEYWORD_BUDGET`` rows. A forget drops the agent's counts."""
        now = time.monotonic()
        known: list[int | None] = []
        for word in words:
            cached = self._words.get((agent_id, word))
            known.append(cached[1] if cached is not None and now - cached[0] <= _WORD_TTL else None)
        return known

    def _remember_words(self, agent_id: str, counted: list[list[Any]]) -> None:
        if len(self._words) > _WORDS_KEPT:
            self._words.clear()
        now = time.monotonic()
        for word, n in counted:
            self._words.setdefault((agent_id, word), (now, int(n)))

    def _ann(self, conn: Any, agent_id: str) -> bool:
        """Whether the agent is searched through the HNSW index; the index is built (in bulk, once
        for the database) the first time an agent reaches ``ann_threshold`` vectors."""
        if not (self.ann_threshold and self._vector_count(conn, agent_id) >= self.ann_threshold):
            return False
        if not self._indexed:
            with self.db.writing() as writer:
                writer.execute("SELECT pg_advisory_xact_lock(hashtextextended('hippo:model', 1))")
                row = writer.execute("SELECT dimension FROM embedding_model WHERE id = 1").fetchone()
                if row is None or row[0] is None:
                    return False
                # pgvector builds fast only while the graph fits in maintenance memory (~2 kB a
                # vector at 384 dimensions); this transaction's own setting, never lowered.
                writer.execute("SELECT set_config('maintenance_work_mem', '1GB', true) "
                               "WHERE current_setting('maintenance_work_mem')::text NOT LIKE '%GB'")
                if vector_index(writer, row[0]):  # False when another server built it already
                    # A bulk moment: the statistics the keyword side estimates frequent words from
                    # are gathered now, not only when autovacuum next gets to the table.
                    writer.execute("ANALYZE chunk_rows")
            self._indexed = True
        return True

    def _vector_count(self, conn: Any, agent_id: str) -> int:
        return self._agent_counts(conn, agent_id)[1]

    def _window_count(self, conn: Any, agent_id: str) -> int:
        """The agent's window vectors (long memories'), trusted as the other counts."""
        self._agent_counts(conn, agent_id)
        return self._counts[agent_id][3]

    def _owns_the_table(self, conn: Any, rows_n: int) -> bool:
        """Whether the agent holds at least half of the table's rows (by the planner's count): then
        the share of rows ANALYZE found a word in is a fair estimate of the agent's own, and a
        frequent word's count is read from the statistics instead of counted (up to the budget's
        10,000 row visits a word). In a table shared by many agents, every word is counted."""
        now = time.monotonic()
        if self._table_rows is None or now - self._table_rows[0] > _COUNT_TTL:
            (rows,) = conn.execute("SELECT reltuples FROM pg_class WHERE oid = 'chunk_rows'::regclass").fetchone()
            self._table_rows = (now, float(rows))
        return self._table_rows[1] > 0 and rows_n >= 0.5 * self._table_rows[1]

    def _agent_counts(self, conn: Any, agent_id: str) -> tuple[int, int]:
        """The agent's chunks and live vectors, trusted for ``_COUNT_TTL`` (a write of this process
        drops them): they choose a plan and scale IDF, and neither needs the exact count."""
        now = time.monotonic()
        cached = self._counts.get(agent_id)
        if cached is None or now - cached[0] > _COUNT_TTL:
            rows, vectors, windows = conn.execute(
                "SELECT count(*), count(embedding) FILTER (WHERE superseded_by IS NULL), "
                "(SELECT count(*) FROM chunk_windows WHERE agent_id = %s) FROM chunk_rows WHERE agent_id = %s",
                (agent_id, agent_id)).fetchone()
            cached = self._counts[agent_id] = (now, int(rows), int(vectors), int(windows))
        return cached[1], cached[2]

    def score(self, agent_id: str, ids: Sequence[str],
              vector: np.ndarray | None) -> tuple[list[Standing], dict[str, float]]:
        if not ids:
            return [], {}
        cosine, values = "NULL::float8", []
        if vector is not None:
            cosine = best_cosine(len(vector))  # a long memory's best window
            values += [np.asarray(vector, dtype=np.float32)] * 2
        with self.db.reading(agent_id) as conn:
            rows = conn.execute(f"SELECT {_STANDING}, {cosine} FROM {CHUNKS} WHERE c.agent_id = %s AND c.id = ANY(%s)",
                                [*values, agent_id, list(ids)]).fetchall()
        by_id = {r[0]: r for r in rows}
        ordered = [by_id[i] for i in ids if i in by_id]
        return [standing_of(r) for r in ordered], {r[0]: r[8] for r in ordered if r[8] is not None}

    def _session_neighbours(self, conn: Any, agent_id: str, ids: Sequence[str], reach: int, condition: str,
                            params: list[Any]) -> dict[str, list[tuple[str, int]]]:
        side = ("(SELECT s.id, c.id FROM chunk_rows c WHERE c.agent_id = %s AND c.session_id = s.session_id "
                "AND c.kind = 'memory' AND c.id {} s.id ORDER BY c.id {} LIMIT %s)")
        # The filter is tested on the few neighbours found, one row each: inside the sides, where
        # the planner expects a scan of the agent's rows, it hashed every row a subquery of the
        # filter lists (the experiences: 60 ms of a recall at 100k).
        sql = (f"SELECT s.id, n.*, (SELECT {condition} FROM chunk_rows c WHERE c.id = n.other) "
               "FROM (SELECT c.id, c.session_id FROM chunk_rows c WHERE c.agent_id = %s "
               "AND c.kind = 'memory' AND c.id = ANY(%s)) s LEFT JOIN LATERAL ("
               + side.format("<", "DESC") + " UNION ALL " + side.format(">", "ASC")
               + ") n(seed, other) ON true")
        values = [*params, agent_id, list(ids), agent_id, reach, agent_id, reach]
        rows = conn.execute(sql, values).fetchall()
        # A seed alone in its session, or without one (no side matches NULL), is one row of NULLs: it still answers.
        return nearest_runs([r[0] for r in rows], [(r[1], r[2], r[3]) for r in rows if r[2] is not None])
