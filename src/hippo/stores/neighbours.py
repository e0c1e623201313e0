"""What every store does with the rows of its neighbours query (``Store.neighbours``).

A store reads, for each seed memory that has a session, up to ``reach`` memories of the same
session stored just before and just after it (in id order), with whether each passes the recall's
filter. This turns those rows into the answer: per seed, the neighbours that pass, with their
distance (a neighbour the filter leaves out still takes its place).
"""

from __future__ import annotations

from typing import Iterable

__all__ = ["nearest_runs"]


def nearest_runs(seeds: Iterable[str], rows: Iterable[tuple[str, str, object]]) -> dict[str, list[tuple[str, int]]]:
    """``seeds``: the ids that answer; ``rows``: (seed, other id, other passes the filter). Every
    seed answers, with an empty list when alone in its session (or without one)."""
    sides: dict[tuple[str, bool], list[tuple[str, object]]] = {}
    for seed, other, passes in rows:
        sides.setdefault((seed, other < seed), []).append((other, passes))
    out: dict[str, list[tuple[str, int]]] = {}
    for (seed, before), found in sides.items():
        found.sort(key=lambda row: row[0], reverse=before)  # nearest first
        out.setdefault(seed, []).extend((other, distance) for distance, (other, passes)
                                        in enumerate(found, start=1) if passes)
    return {seed: out.get(seed, []) for seed in seeds}
