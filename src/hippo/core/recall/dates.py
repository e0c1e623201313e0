"""The day or month a recall query names ("on October 13, 2023", "in July 2023", "yesterday").

Recall prefers memories observed in that period: a question about a date is
about what was said or seen then, and that date lives in the memory's time of
observation, not in its text. Only unambiguous mentions count: a full date, a
month with its year, ISO dates, and "today"/"yesterday" (relative to the
clock). A bare month ("May I ask") or a bare year is never read as a period.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

__all__ = ["named_period"]

_MONTHS = {
    name: number
    for number, names in enumerate(
        [("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
         ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"),
         ("november", "nov"), ("december", "dec")],
        start=1,
    )
    for name in names
}
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_PATTERNS = [
    re.compile(r"\b(?P<year>(?:19|20)\d\d)-(?P<month>\d\d)-(?P<day>\d\d)\b"),
    re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", re.IGNORECASE),
    re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE),
    re.compile(rf"\b{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE),
]
_RELATIVE = re.compile(r"\b(?P<word>today|yesterday)\b", re.IGNORECASE)


def named_period(query: str, now: datetime) -> tuple[datetime, datetime] | None:
    """``[start, end)`` in UTC of the first day or month ``query`` names, else None."""
    for pattern in _PATTERNS:
        match = pattern.search(query)
        if match is None:
            continue
        parts = match.groupdict()
        month = parts["month"]
        number = int(month) if month.isdigit() else _MONTHS[month.lower()]
        try:
            if parts.get("day") is None:
                start = datetime(int(parts["year"]), number, 1, tzinfo=timezone.utc)
                end = datetime(start.year + (number == 12), number % 12 + 1, 1, tzinfo=timezone.utc)
                return start, end
            start = datetime(int(parts["year"]), number, int(parts["day"]), tzinfo=timezone.utc)
        except ValueError:  # "February 30, 2023", "2023-13-01"
            continue
        return start, start + timedelta(days=1)
    relative = _RELATIVE.search(query)
    if relative is None:
        return None
    today = now.astimezone(timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
    start = today - timedelta(days=1) if relative["word"].lower() == "yesterday" else today
    return start, start + timedelta(days=1)
