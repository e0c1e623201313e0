"""The rows each part of a filter may pass, listed from the part's own index and kept across searches.

A filtered search looks among a superset of the rows its filter passes: the intersection of what
the filter's parts list from their indexes (``driving.py``: a tag, a type, a period...). Listing
costs ~0.1 µs a row, so a part that passes 15,000 rows costs ~2 ms at each search; and parts repeat
(the same type, tag or period, in other combinations too). So each part's listing is kept, by its
query and parameters, with the position of the change log (``changes.py``) it was listed at. At the
next use the rows logged as changed since are added to it: a listing with more rows than a part
passes is still a superset, and a superset is all a search needs (it tests the whole filter on the
rows it picks). A part is listed again once the rows changed since outnumber a quarter of it (or
``RELIST_MIN``), or the log no longer reaches back. A part found wider than a search could use is
kept as such, so the next search does not list it again to find out.

Nothing is kept from inside a write transaction: a rollback takes back its log rows, and their
numbers are given again (``changes.py``).
"""

from __future__ import annotations

import sqlite3
from typing import Any, Callable, NamedTuple

import numpy as np

from hippo.stores.sqlite.index.cache import read_rowids
from hippo.stores.sqlite.narrowing.changes import changed_since, latest

__all__ = ["LISTINGS_KEPT", "RELIST_MIN", "ROWS_KEPT", "Lister", "Supersets", "listed"]

ROWS_KEPT = 2_000_000  # rowids kept in all (16 MB); the listings used longest ago go first
LISTINGS_KEPT = 512  # listings kept at most (a part found too wide, or empty, holds no rows)
RELIST_MIN = 1_000  # changed rows a kept listing takes in before it is listed again, at least

# ``(sql, params, bound)``: the sorted rowids a part's query lists, or None when more than ``bound``.
Lister = Callable[[str, list[Any], int], "np.ndarray | None"]


def listed(conn: sqlite3.Connection, sql: str, params: list[Any], bound: int) -> np.ndarray | None:
    """The sorted rowids ``sql`` lists (one integer column), None when it lists more than ``bound``
    (found by listing ``bound`` + 1 of them)."""
    rowids = read_rowids(conn, f"{sql} LIMIT ?", (*params, bound + 1))
    return None if len(rowids) > bound else np.sort(rowids)


class _Kept(NamedTuple):
    seen: int  # the log position it was listed at, or brought up to
    rows: np.ndarray | None  # None: more than ``wider_than`` rows
    wider_than: int = 0


class Supersets:
    """The kept listings of one connection (see the module's docstring)."""

    def __init__(self) -> None:
        self._kept: dict[tuple[str, tuple[Any, ...]], _Kept] = {}  # least recently used first
        self._rows = 0  # rowids held by the kept listings

    def lister(self, conn: sqlite3.Connection, *, kept_only: bool = False) -> Lister:
        """A lister for ``driving.narrowed`` that answers from the kept listings, and lists (and
        keeps) what is not kept unless ``kept_only`` (then that part is passed over: None)."""
        return lambda sql, params, bound: self._part(conn, sql, params, bound, kept_only)

    def _part(self, conn: sqlite3.Connection, sql: str, params: list[Any], bound: int,
              kept_only: bool) -> np.ndarray | None:
        key = (sql, tuple(params))
        held = self._kept.get(key)
        if held is not None:
            last, changed = changed_since(conn, held.seen)
            if changed is not None and held.rows is None:
                if bound <= held.wider_than:
                    return None  # still as wide, or more than a few changes could have narrowed it
            elif changed is not None and held.rows is not None and len(changed) <= max(RELIST_MIN, len(held.rows) // 4):
                grown = np.union1d(held.rows, changed) if len(changed) else held.rows
                self._keep(conn, key, _Kept(last, grown))  # and it moves to the end: used last
                return grown
        if kept_only:
            return None
        last = latest(conn)  # before listing: a row written meanwhile is logged after this
        rows = listed(conn, sql, params, bound)
        self._keep(conn, key, _Kept(last, rows, bound if rows is None else 0))
        return rows

    def _keep(self, conn: sqlite3.Connection, key: tuple[str, tuple[Any, ...]], kept: _Kept) -> None:
        """Keep ``kept`` as the listing used last; those used longest ago go past the bounds."""
        if conn.in_transaction:
            return
        self._forget(key)
        size = 0 if kept.rows is None else len(kept.rows)
        while self._kept and (self._rows + size > ROWS_KEPT or len(self._kept) >= LISTINGS_KEPT):
            self._forget(next(iter(self._kept)))
        self._kept[key] = kept
        self._rows += size

    def _forget(self, key: tuple[str, tuple[Any, ...]]) -> None:
        gone = self._kept.pop(key, None)
        if gone is not None and gone.rows is not None:
            self._rows -= len(gone.rows)
