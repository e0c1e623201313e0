"""What every store does with the rows of its neighbours query (``Store.neighbours``).

A store reads, for each seed memory, up to ``reach`` memories stored just before and just after
it (in id order), with when each was observed and whether it passes the recall's filter. This
turns those rows into the answer: per seed, the neighbours that pass, with their distance, each
side cut at the first memory observed more than ``span`` seconds away from the seed.
"""

from __future__ import annotations

from typing import Iterable

__all__ = ["nearest_runs"]


def nearest_runs(seeds: dict[str, float], rows: Iterable[tuple[str, str, float, object]],
                 span: float) -> dict[str, list[tuple[str, int]]]:
    """``seeds``: seed id -> when it was observed (epoch seconds); ``rows``: (seed, other id,
    other's time, passes the filter). Every seed answers, with an empty list when alone."""
    sides: dict[tuple[str, bool], list[tuple[str, float, object]]] = {}
    for seed, other, other_when, passes in rows:
        sides.setdefault((seed, other < seed), []).append((other, other_when, passes))
    out: dict[str, list[tuple[str, int]]] = {}
    for (seed, before), found in sides.items():
        found.sort(key=lambda row: row[0], reverse=before)  # nearest first
        for distance, (other, other_when, passes) in enumerate(found, start=1):
            if abs(other_when - seeds[seed]) > span:
                break  # a neighbour from another moment ends this side
            if passes:
                out.setdefault(seed, []).append((other, distance))
    return {seed: out.get(seed, []) for seed in seeds}
