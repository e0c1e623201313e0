"""The day or month a recall query names ("on October 13, 2023", "in July 2023", "yesterday").

Recall prefers memories observed in that period: a question about a date is
about what was said or seen then, and that date lives in the memory's time of
observation, not in its text. Only unambiguous mentions count: a full date, a
month with its year, ISO dates, and the days, weeks and months people count back
from the question's clock ("today", "yesterday", "last Friday", "two weeks ago",
"last month"). A bare month ("May I ask"), a bare weekday or a bare year is
never read as a period. A period counted back in weeks or months ("two weeks
ago") is widened by a few days either way: people round such spans.
"""

from __future__ import annotations

import calendar
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
_RELATIVE = re.compile(r"\b(?P<word>today|yesterday|tonight|this morning)\b", re.IGNORECASE)
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_LAST_WEEKDAY = re.compile(r"\b(?:last|this past)\s+(?P<weekday>" + "|".join(_WEEKDAYS) + r")\b", re.IGNORECASE)
_COUNTS = {"a": 1, "an": 1, "one": 1, "two": 2, "a couple of": 2, "couple of": 2, "three": 3, "four": 4,
           "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
_AGO = re.compile(r"\b(?P<count>\d{1,2}|" + "|".join(sorted(_COUNTS, key=len, reverse=True))
                  + r")\s+(?P<unit>day|week|month)s?\s+ago\b", re.IGNORECASE)
# "in May", "during March", "last July": a month without its year is the latest one not after the
# question's ("May I ask" and "may" as a verb never follow "in", "during" or "last").
_BARE_MONTH = re.compile(r"\b(?:in|during|last)\s+(?:early\s+|late\s+|mid-?)?(?P<month>"
                         + "|".join(name.lower() for name in calendar.month_name[1:])
                         + r")\b(?!\s*,?\s*(?:19|20)\d\d)", re.IGNORECASE)
# "last summer": the latest such season over before the question (northern seasons, by whole months).
_SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}
_LAST_SEASON = re.compile(r"\b(?:last|this past)\s+(?P<season>" + "|".join(_SEASONS) + r")\b", re.IGNORECASE)
_LAST_SPAN = re.compile(r"(?<!the )\blast\s+(?P<unit>week|month)\b", re.IGNORECASE)  # not "the last week of"
# How far a counted-back span is widened either way, by its unit: "two weeks ago" is rarely 14 days.
_SLACK = {"day": timedelta(0), "week": timedelta(days=3), "month": timedelta(days=10)}


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
    return _counted_back(query, now)


def _counted_back(query: str, now: datetime) -> tuple[datetime, datetime] | None:
    """The period a query counts back from ``now`` ("yesterday", "last Friday", "two weeks ago",
    "last month"), in whole UTC days."""
    today = now.astimezone(timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
    day = timedelta(days=1)
    if (relative := _RELATIVE.search(query)) is not None:
        start = today - day if relative["word"].lower() == "yesterday" else today
        return start, start + day
    if (weekday := _LAST_WEEKDAY.search(query)) is not None:
        back = (today.weekday() - _WEEKDAYS.index(weekday["weekday"].lower())) % 7 or 7
        return today - back * day, today - (back - 1) * day
    if (ago := _AGO.search(query)) is not None:
        count = ago["count"].lower()
        number = int(count) if count.isdigit() else _COUNTS[count]
        unit = ago["unit"].lower()
        start = _months_back(today, number) if unit == "month" else today - number * (7 if unit == "week" else 1) * day
        return start - _SLACK[unit], start + day + _SLACK[unit]
    if (bare := _BARE_MONTH.search(query)) is not None:
        number = _MONTHS[bare["month"].lower()]
        year = today.year if number <= today.month else today.year - 1
        start = today.replace(year=year, month=number, day=1)
        return start, _months_back(start, -1)
    if (season := _LAST_SEASON.search(query)) is not None:
        first = today.replace(month=_SEASONS[season["season"].lower()], day=1)
        while _months_back(first, -3) > today:
            first = _months_back(first, 12)
        return first, _months_back(first, -3)
    if (span := _LAST_SPAN.search(query)) is not None:
        if span["unit"].lower() == "week":
            monday = today - today.weekday() * day
            return monday - 7 * day, monday
        first = today.replace(day=1)
        return _months_back(first, 1), first
    return None


def _months_back(day: datetime, months: int) -> datetime:
    """The same day of the month ``months`` earlier (the month's last day when it is shorter)."""
    year, month = divmod(day.year * 12 + day.month - 1 - months, 12)
    return day.replace(year=year, month=month + 1, day=min(day.day, calendar.monthrange(year, month + 1)[1]))
