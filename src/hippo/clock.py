"""Time helpers. hippo keeps timezone-aware UTC datetimes and ISO-8601 text."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Callable

__all__ = ["Clock", "from_iso", "system_clock", "to_iso", "to_utc"]

Clock = Callable[[], datetime]


def system_clock() -> datetime:
    return datetime.now(timezone.utc)


def to_utc(value: datetime) -> datetime:
    """An aware UTC datetime; a naive one is taken to be UTC already."""
    if value.tzinfo is None:
        return value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc)


def to_iso(value: datetime) -> str:
    """Fixed-width ISO text, so that string order is time order in SQL."""
    return to_utc(value).isoformat(timespec="microseconds")


def from_iso(text: str) -> datetime:
    value = datetime.fromisoformat(text)
    return value if value.tzinfo is timezone.utc else to_utc(value)  # what to_iso wrote is UTC already
