"""FTS5's BM25, computed in numpy from the index's own postings: the scores ``bm25(chunks_fts)``
gives, a third of the time.

FTS5 scores a row by looking up its length in ``chunks_fts_docsize``, one B-tree seek per matching
row (~0.5 µs: 4-5 ms of a recall whose words match 8,000 rows at 100k). Here each query word's
postings are read from an ``fts5vocab`` table (row and offset of every occurrence: one pass over the
word's doclist, as a MATCH makes), the lengths come from an array kept in memory, and the formula is
FTS5's own (``fts5_aux.c``): for each word, ``idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl /
avgdl))`` with k1 = 1.2, b = 0.75, ``idf = ln((N - n + 0.5) / (n + 0.5))`` (1e-6 when not positive),
N and avgdl from the index's averages record, n the rows that hold the word; negated, as FTS5 ranks.

The lengths stay in step with the file through ``chunk_changes`` (``changes.py``): a search reads
the lengths of the rows logged since it last looked, and reloads them all when it fell further
behind the log, or when their count and sum disagree with the index's averages record. Each
query word is tokenised by FTS5 itself (a table of the same tokenizer in a private in-memory
database), so it reads the postings a MATCH would.

Queries repeat their words (a user's names, the words of a question), so each word's rows and
scores are kept for the next search, up to ``POSTINGS_KEPT`` rows in all, until anything is logged
as changed (a write of any row can change every word's weight: N and avgdl). A kept word's row
count also answers the keyword search's budget (``matches``) without a MATCH.

Left to FTS5 (``ranks`` returns None): an index of fewer than ``SMALL`` rows, a word that is more
than one token, and a search inside a write transaction (whose log rows a rollback could take back).
"""

from __future__ import annotations

import math
import sqlite3
from typing import Sequence

import numpy as np

from hippo.stores.sqlite.narrowing.changes import changed_since, latest

__all__ = ["POSTINGS_KEPT", "SMALL", "Bm25", "varints"]

K1, B = 1.2, 0.75  # FTS5's bm25() constants
_TOKENIZER = "porter unicode61 remove_diacritics 2"  # as chunks_fts (schema.py)
_WORDS_KEPT = 50_000  # tokenised query words kept in memory
POSTINGS_KEPT = 1_000_000  # rows of the kept words' postings, in all (16 MB); used longest ago go first
# Below this many rows FTS5 scores every match in well under a millisecond, fewer statements than
# these: the postings are read from here on.
SMALL = 5_000


def varints(blob: bytes) -> list[int]:
    """The varints of an FTS5 record (SQLite's format: 7 bits a byte, high bit set but in the
    last, the ninth byte whole)."""
    out, i = [], 0
    while i < len(blob):
        value = 0
        for k in range(9):
            byte = blob[i]
            i += 1
            if k == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        out.append(value)
    return out


class Bm25:
    """BM25 of ``chunks_fts`` for one connection (see the module's docstring)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._words_db: sqlite3.Connection | None = None  # the tokenizer's own in-memory database
        self._ready: bool | None = None  # None: not set up yet; False: this SQLite cannot
        self._seq: int | None = None  # the last chunk_changes row applied (0: none yet); None: nothing loaded
        self._sizes = np.zeros(0, dtype=np.int64)  # by rowid: length + 1, 0 for no row
        self._rows = self._total = 0
        self._words: dict[str, tuple[str, ...]] = {}
        # token -> its rows (sorted) and BM25 part in each, at the log position and averages of
        # ``_postings_at``; least recently used first
        self._postings: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._postings_at: tuple[int | None, int, int] | None = None
        self._postings_rows = 0

    def ranks(self, words: Sequence[str]) -> tuple[np.ndarray, np.ndarray] | None:
        """Every row that holds one of ``words`` (an OR of them) and its BM25 rank (lower is
        better), rowids ascending; None when FTS5 must score it (see the module's docstring)."""
        conn = self._conn
        if conn.in_transaction or not words or not self._set_up():
            return None
        found = None
        conn.execute("SAVEPOINT hippo_bm25")  # one snapshot: log, lengths, averages and postings
        try:
            rows, total = self._averages()
            tokens = None if rows < SMALL else self._tokens(words)
            if tokens is not None:
                self._sync(rows, total)
                if self._postings_at != (self._seq, rows, total):  # something changed: weights too
                    self._drop_postings()
                    self._postings_at = (self._seq, rows, total)
                found = self._scored(tokens, rows, total / rows if rows else 1.0)
        except BaseException:
            conn.execute("ROLLBACK TO hippo_bm25")  # nothing written; the read transaction ends below
            conn.execute("RELEASE hippo_bm25")
            raise
        conn.execute("RELEASE hippo_bm25")
        return found

    def matches(self, words: Sequence[str]) -> list[int | None]:
        """How many rows hold each of ``words``, where its postings are kept and still current
        (None elsewhere: a word not kept, or not one token)."""
        if not self._postings or self._conn.in_transaction:
            return [None] * len(words)
        if self._postings_at is None or latest(self._conn) != self._postings_at[0]:
            self._drop_postings()
            return [None] * len(words)
        found: list[int | None] = []
        for word in words:
            tokens = self._words.get(word)
            kept = self._postings.get(tokens[0]) if tokens is not None and len(tokens) == 1 else None
            found.append(None if kept is None else len(kept[0]))
        return found

    def close(self) -> None:
        if self._words_db is not None:
            self._words_db.close()
            self._words_db, self._ready = None, None

    def _set_up(self) -> bool:
        if self._ready is None:
            words = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
            try:
                words.execute(f"CREATE VIRTUAL TABLE words USING fts5(word, tokenize='{_TOKENIZER}')")
                words.execute("CREATE VIRTUAL TABLE tokens USING fts5vocab('words', 'instance')")
                self._conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.hippo_postings "
                                   "USING fts5vocab(main, 'chunks_fts', 'instance')")
                self._words_db, self._ready = words, True
            except sqlite3.Error:
                words.close()
                self._ready = False
        return self._ready

    def _tokens(self, words: Sequence[str]) -> list[str] | None:
        """Each word as FTS5 tokenises it; None when one is not a single token."""
        missing = [w for w in words if w not in self._words]
        if missing:
            if len(self._words) + len(missing) > _WORDS_KEPT:
                self._words.clear()
            db = self._words_db
            assert db is not None
            db.executemany("INSERT INTO words(rowid, word) VALUES (?, ?)", list(enumerate(missing)))
            found: dict[int, list[str]] = {}
            for doc, term in db.execute("SELECT doc, term FROM tokens ORDER BY doc, offset"):
                found.setdefault(doc, []).append(term)
            db.execute("DELETE FROM words")
            self._words.update((w, tuple(found.get(i, ()))) for i, w in enumerate(missing))
        tokens = [self._words[w] for w in words]
        if any(len(t) > 1 for t in tokens):
            return None
        # One per word, a repeated token too ("running runs"): FTS5 scores each phrase on its own.
        return [t[0] for t in tokens if t]

    def _averages(self) -> tuple[int, int]:
        """The index's row count and total length (its averages record, id 1)."""
        row = self._conn.execute("SELECT block FROM chunks_fts_data WHERE id = 1").fetchone()
        counts = varints(row[0]) if row else []
        return (counts[0], counts[1]) if len(counts) >= 2 else (0, 0)

    def _sync(self, rows: int, total: int) -> None:
        """Bring the lengths in step with the file: the logged rows since the last look, or all."""
        if self._seq is not None:
            last, changed = changed_since(self._conn, self._seq)
            if changed is not None:
                if len(changed):
                    self._apply(changed)
                self._seq = last
                if (self._rows, self._total) == (rows, total):
                    return
        self._load(latest(self._conn))

    def _apply(self, chunks: np.ndarray) -> None:
        """Read the lengths of ``chunks`` again (0 for a row gone)."""
        found = self._conn.execute(
            "SELECT group_concat(id), group_concat(hex(sz)) FROM chunks_fts_docsize "
            "WHERE id IN (SELECT value FROM json_each(?))", (f"[{','.join(map(str, chunks.tolist()))}]",)).fetchone()
        ids, sizes = self._decode(*found)
        self._grow(int(chunks.max(initial=0)))
        old = self._sizes[chunks]
        self._rows -= int(np.count_nonzero(old))
        self._total -= int(old[old > 0].sum() - np.count_nonzero(old))
        self._sizes[chunks] = 0
        self._sizes[ids] = sizes + 1
        self._rows += len(ids)
        self._total += int(sizes.sum())

    def _load(self, last: int) -> None:
        ids, sizes = self._decode(*self._conn.execute(
            "SELECT group_concat(id), group_concat(hex(sz)) FROM chunks_fts_docsize").fetchone())
        self._sizes = np.zeros(0, dtype=np.int64)
        self._grow(int(ids.max(initial=0)))
        self._sizes[ids] = sizes + 1
        self._rows, self._total = len(ids), int(sizes.sum())
        self._seq = last

    def _grow(self, rowid: int) -> None:
        if rowid >= len(self._sizes):
            grown = np.zeros(max(rowid + 1, len(self._sizes) * 3 // 2), dtype=np.int64)
            grown[:len(self._sizes)] = self._sizes
            self._sizes = grown

    @staticmethod
    def _decode(ids: str | None, sizes: str | None) -> tuple[np.ndarray, np.ndarray]:
        """Rowids and lengths from docsize rows (each a one-column record: one varint)."""
        if not ids:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        rowids = np.fromstring(ids, dtype=np.int64, sep=",")
        parts = sizes.split(",") if sizes else []
        if all(len(p) == 2 for p in parts):  # every length under 128: one byte each
            lengths = np.frombuffer(bytes.fromhex("".join(parts)), dtype=np.uint8).astype(np.int64)
        else:
            lengths = np.array([varints(bytes.fromhex(p))[0] if p else 0 for p in parts], dtype=np.int64)
        return rowids, lengths

    def _scored(self, tokens: list[str], rows: int, avgdl: float) -> tuple[np.ndarray, np.ndarray] | None:
        docs, scores = [], []
        for token in tokens:  # a token asked twice ("running runs") is read once: it is kept
            found = self._token_scores(token, rows, avgdl)
            if found is None:
                return None  # a row the lengths do not know: cannot be in one snapshot, but FTS5 can tell
            if len(found[0]):
                docs.append(found[0])
                scores.append(found[1])
        if not docs:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        # Each word's rows are sorted: a stable sort merges the runs; each row sums its words in order.
        merged = np.concatenate(docs)
        order = np.argsort(merged, kind="stable")
        merged, summed = merged[order], np.concatenate(scores)[order]
        starts = _run_starts(merged)
        return merged[starts], -np.add.reduceat(summed, starts)

    def _token_scores(self, token: str, rows: int, avgdl: float) -> tuple[np.ndarray, np.ndarray] | None:
        """The rows holding ``token`` and its BM25 part in each (kept: see the module's docstring);
        None when a row's length is unknown."""
        kept = self._postings.pop(token, None)
        if kept is None:
            kept = self._read_scores(token, rows, avgdl)
            if kept is None or len(kept[0]) > POSTINGS_KEPT:
                return kept  # not kept: more rows than all the kept words may hold
            while self._postings and self._postings_rows + len(kept[0]) > POSTINGS_KEPT:
                self._postings_rows -= len(self._postings.pop(next(iter(self._postings)))[0])
            self._postings_rows += len(kept[0])
        self._postings[token] = kept  # used last
        return kept

    def _drop_postings(self) -> None:
        self._postings.clear()
        self._postings_rows, self._postings_at = 0, None

    def _read_scores(self, token: str, rows: int, avgdl: float) -> tuple[np.ndarray, np.ndarray] | None:
        (joined,) = self._conn.execute(
            "SELECT group_concat(doc) FROM temp.hippo_postings WHERE term = ?", (token,)).fetchone()
        if not joined:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        held, tf = _counted(np.fromstring(joined, dtype=np.int64, sep=","))
        sizes = self._sizes[held] if held[-1] < len(self._sizes) else np.zeros(1, dtype=np.int64)
        if not sizes.all():
            return None
        idf = math.log((rows - len(held) + 0.5) / (len(held) + 0.5))
        idf = idf if idf > 0 else 1e-6
        return held, idf * (tf * (K1 + 1)) / (tf + K1 * (1 - B + B * (sizes - 1) / avgdl))


def _run_starts(values: np.ndarray) -> np.ndarray:
    """Where each run of equal values of a sorted array starts."""
    return np.flatnonzero(np.concatenate(([True], values[1:] != values[:-1])))


def _counted(occurrences: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows a word occurs in (sorted) and how often in each: a postings list is in row order
    (sorted here if it ever is not)."""
    if len(occurrences) > 1 and (occurrences[1:] < occurrences[:-1]).any():
        occurrences = np.sort(occurrences)
    starts = _run_starts(occurrences)
    return occurrences[starts], np.diff(np.append(starts, len(occurrences)))
