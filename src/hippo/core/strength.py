"""The strength model: decay, reinforcement and scoring.

Pure functions; the current time is always passed in, so tests move a clock
instead of sleeping. Times are timezone-aware datetimes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta

__all__ = [
    "DECAY_LAMBDA",
    "HIDDEN_BELOW",
    "RETRIEVAL_BOOST",
    "ScoreWeights",
    "decay_resistance",
    "effective_strength",
    "half_life_hours",
    "hours_between",
    "intensity_before",
    "recency_after",
    "recency_score",
    "reinforced_intensity",
    "retrieval_boost",
    "final_score",
    "strength_after",
    "strength_curve",
]

DECAY_LAMBDA = 0.001  # per hour: a never-accessed memory halves in about 29 days
RETRIEVAL_BOOST = 0.02
HIDDEN_BELOW = 0.05  # effective strength under which recall no longer returns a chunk
RECENCY_RATE = 0.01  # per day of age


@dataclass(frozen=True, slots=True)
class ScoreWeights:
    """The weights of :func:`final_score`: ``relevance × (relevance_w + strength_w·effective_strength
    + recency_w·recency_score)``."""

    relevance: float = 0.6
    strength: float = 0.3
    recency: float = 0.1


def hours_between(earlier: datetime, later: datetime) -> float:
    """Hours from ``earlier`` to ``later``, never negative (clock skew counts as zero)."""
    return max(0.0, (later - earlier).total_seconds() / 3600.0)


def decay_resistance(access_count: int) -> float:
    """``1 + ln(1 + access_count) × 0.3``: frequently recalled memories decay slower."""
    return 1.0 + math.log1p(max(0, access_count)) * 0.3


def effective_strength(
    running_intensity: float,
    access_count: int,
    last_accessed_at: datetime,
    now: datetime,
    *,
    decay_lambda: float = DECAY_LAMBDA,
) -> float:
    """``running_intensity × e^(−λ / decay_resistance × hours_since_last_access)``."""
    return strength_after(running_intensity, access_count, hours_between(last_accessed_at, now), decay_lambda)


def strength_after(running_intensity: float, access_count: int, hours: float,
                   decay_lambda: float = DECAY_LAMBDA) -> float:
    """:func:`effective_strength` ``hours`` after the last access."""
    return running_intensity * math.exp(-decay_lambda / decay_resistance(access_count) * hours)


def half_life_hours(access_count: int, *, decay_lambda: float = DECAY_LAMBDA) -> float:
    """Hours until the effective strength halves without any access."""
    return math.log(2.0) * decay_resistance(access_count) / decay_lambda


def retrieval_boost(running_intensity: float) -> float:
    """The retrieval event's intensity: ``min(1, intensity + 0.02)``."""
    return min(1.0, running_intensity + RETRIEVAL_BOOST)


def reinforced_intensity(old_intensity: float, encounter_count: int, new_reading: float) -> float:
    """Moving average over encounters: ``(old × n + new) / (n + 1)``."""
    return (old_intensity * encounter_count + new_reading) / (encounter_count + 1)


def intensity_before(intensity: float, encounter_count: int, new_reading: float) -> float:
    """The intensity a chunk had before :func:`reinforced_intensity` made it ``intensity`` on its
    ``encounter_count``-th encounter (at least the second) with ``new_reading``."""
    return (intensity * encounter_count - new_reading) / (encounter_count - 1)


def recency_score(created_at: datetime, now: datetime) -> float:
    """``e^(−0.01 × days_since_creation)``: 0.97 at 3 days, 0.74 at 30, 0.03 at a year."""
    return recency_after(hours_between(created_at, now))


def recency_after(hours: float) -> float:
    """:func:`recency_score` ``hours`` after creation."""
    return math.exp(-RECENCY_RATE * hours / 24.0)


def final_score(
    relevance: float, strength: float, recency: float, weights: ScoreWeights = ScoreWeights()
) -> float:
    """A memory's relevance scaled by its standing: ``relevance × (w_relevance + w_strength × strength
    + w_recency × recency)``, the weighted sum of relevance, effective strength and recency with
    strength and recency counted in proportion to the match. Between memories that match equally
    they order as the sum does; a memory that does not match gains nothing from them. With the
    default weights (0.6, 0.3, 0.1) a strong, fresh memory outranks a faded one only when it
    matches at least about 0.6 as well: strength breaks ties between close matches and never lifts
    a clear non-match over a clear match (measured in BENCHMARKS.md, "Strength breaks ties")."""
    return relevance * (weights.relevance + weights.strength * strength + weights.recency * recency)


def strength_curve(running_intensity: float, access_count: int, restarts: list[datetime], start: datetime,
                   end: datetime, *, points: int = 60, also: tuple[datetime, ...] = (),
                   decay_lambda: float = DECAY_LAMBDA) -> list[tuple[datetime, float]]:
    """Effective strength from ``start`` to ``end`` as the stored state implies it: the current
    intensity and access count, decay restarting at each of ``restarts`` (the last access, the last
    reinforcement) and at ``start``. An estimate of the past: only the latest events are stored.
    ``points`` evenly spaced times, plus each restart and each of ``also`` inside the span."""
    span = max(0.0, (end - start).total_seconds())
    times = {start + timedelta(seconds=span * i / max(1, points - 1)) for i in range(points)}
    times |= {t for t in (*restarts, *also) if start <= t <= end}
    curve = []
    for t in sorted(times):
        since = max([start] + [r for r in restarts if r <= t])
        curve.append((t, strength_after(running_intensity, access_count, hours_between(since, t), decay_lambda)))
    return curve
