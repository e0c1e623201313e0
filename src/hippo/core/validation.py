"""Checks on everything a caller hands hippo. Each raises InvalidInput before any write."""

from __future__ import annotations

import json
import math
import re
from datetime import datetime
from typing import Any

from hippo import limits
from hippo.clock import from_iso, to_utc
from hippo.errors import InvalidInput, shown

__all__ = [
    "check_agent_id",
    "check_block_key",
    "check_char_limit",
    "check_chunk_id",
    "check_datetime",
    "check_flag",
    "check_intensity",
    "check_limit",
    "check_json_value",
    "check_metadata",
    "check_progress",
    "check_text",
    "parse_json",
    "parse_json_values",
    "shown",
]

AGENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:@-]{0,127}$")
BLOCK_KEY = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")
ULID = re.compile(r"^[0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{26}$")
_METADATA_KEY = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")
MAX_METADATA_BYTES = limits.METADATA_BYTES
MAX_LIMIT = limits.RESULT_LIMIT


def check_agent_id(agent_id: Any) -> str:
    if not isinstance(agent_id, str) or not AGENT_ID.fullmatch(agent_id):
        raise InvalidInput(
            f"invalid agent id {shown(agent_id)}: 1 to 128 characters, letters, digits and _ . : @ -, "
            "starting with a letter or digit"
        )
    return agent_id


def check_text(value: Any, name: str, *, max_chars: int, allow_empty: bool = False) -> str:
    """A str that is valid UTF-8, has no NUL, is not blank (unless allowed) and fits."""
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be a string, got {type(value).__name__}")
    if not allow_empty and not value.strip():
        raise InvalidInput(f"{name} must not be empty")
    if len(value) > max_chars:
        raise InvalidInput(f"{name} is {len(value)} characters; the limit is {max_chars}")
    if "\x00" in value:
        raise InvalidInput(f"{name} contains a NUL character")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInput(f"{name} is not valid UTF-8 text (lone surrogate at {exc.start})") from None
    return value


def check_chunk_id(value: Any) -> str:
    """A chunk id is a ULID: 26 Crockford base-32 characters."""
    if not isinstance(value, str) or not ULID.fullmatch(value):
        raise InvalidInput(f"invalid memory id {shown(value)}: expected a 26-character ULID")
    return value.upper()


_SOURCE = re.compile(r"[a-z][a-z0-9_-]{0,31}")
_SESSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:@/-]{0,127}")


def check_source(value: Any) -> str:
    """A provenance tag: a short lower-case word such as agent, extraction or migration."""
    if not isinstance(value, str) or not _SOURCE.fullmatch(value):
        raise InvalidInput(f"invalid source {shown(value)}: expected a lower-case word of up to 32 letters, "
                           "digits, '-' or '_' (agent, extraction, conversation, migration, ...)")
    return value


def check_session_id(value: Any) -> str | None:
    """A session id (None for none): up to 128 letters, digits and ``_ . : @ / -``."""
    if value is None:
        return None
    if not isinstance(value, str) or not _SESSION.fullmatch(value):
        raise InvalidInput(f"invalid session_id {shown(value)}: expected up to 128 letters, digits and _ . : @ / -")
    return value


def check_block_key(key: Any) -> str:
    if not isinstance(key, str) or not BLOCK_KEY.fullmatch(key):
        raise InvalidInput(f"invalid block key {shown(key)}: 1 to 64 letters, digits, _ . -")
    return key


def check_intensity(value: Any, name: str = "intensity") -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or isinstance(value, float) and not \
            math.isfinite(value):
        raise InvalidInput(f"{name} must be a number between 0 and 1, got {shown(value)}")
    if not 0 <= value <= 1:  # compared before any float(): 10**400 has no float
        raise InvalidInput(f"{name} must be between 0 and 1, got {shown(value)}")
    return float(value)


def check_char_limit(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= limits.BLOCK_CHAR_LIMIT:
        raise InvalidInput(f"char_limit must be an integer from 1 to {limits.BLOCK_CHAR_LIMIT} or None, "
                           f"got {shown(value)}")
    return value


def check_int(value: Any, name: str, low: int, high: int) -> int:
    """A whole number from ``low`` to ``high`` (a bool is not one)."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidInput(f"{name} must be an integer from {low} to {high}, got {shown(value)}")
    return value


def check_limit(value: Any, name: str = "limit") -> int:
    return check_int(value, name, 1, MAX_LIMIT)


def check_flag(value: Any, name: str) -> bool:
    """True or False, and nothing that merely reads as one: the text "false" is truthy."""
    if not isinstance(value, bool):
        raise InvalidInput(f"{name} must be true or false, got {shown(value)}")
    return value


def check_progress(value: Any) -> Any:
    """A progress callback, called with (done, total), or None."""
    if value is not None and not callable(value):
        raise InvalidInput(f"progress must be a function of (done, total) or None, got {shown(value)}")
    return value


def check_datetime(value: Any, name: str) -> datetime | None:
    """``None``, an aware or naive (UTC) datetime, or ISO-8601 text."""
    if value is None:
        return None
    try:
        if isinstance(value, datetime):
            return to_utc(value)
        if isinstance(value, str):
            return from_iso(value.strip().replace("Z", "+00:00"))
    except ValueError:
        pass
    except OverflowError:  # 0001-01-01T00:00+14:00 is a day before the first UTC datetime holds
        raise InvalidInput(f"{name} is outside the years 1 to 9999 in UTC: {shown(value)}") from None
    raise InvalidInput(f"{name} must be a datetime or ISO-8601 text, got {shown(value)}")


def check_json_value(value: Any, name: str, *, stored: bool = False) -> None:
    """A JSON value hippo can keep: at most ``limits.NESTING`` levels deep, integers that fit
    SQLite's INTEGER, finite floats, string keys; ``stored`` (it is written as JSON): no NUL in
    any string or key, which PostgreSQL's jsonb refuses. Walked without recursion, so no depth of
    nesting raises anything but InvalidInput."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list, tuple)):
            if depth >= limits.NESTING:
                raise InvalidInput(f"{name} is nested more than {limits.NESTING} levels deep")
            if isinstance(item, dict):
                if not all(isinstance(k, str) for k in item):
                    raise InvalidInput(f"{name} has a key that is not a string")
                if stored:
                    stack.extend((k, depth + 1) for k in item)
                stack.extend((v, depth + 1) for v in item.values())
            else:
                stack.extend((v, depth + 1) for v in item)
        elif isinstance(item, int) and not isinstance(item, bool) and abs(item) > limits.INTEGER:
            raise InvalidInput(f"{name} holds an integer larger than {limits.INTEGER}")
        elif isinstance(item, float) and not math.isfinite(item):
            raise InvalidInput(f"{name} holds {item}, which JSON cannot carry")
        elif stored and isinstance(item, str) and "\x00" in item:
            raise InvalidInput(f"{name} holds a NUL character")


def parse_json(text: str, name: str, *, or_text: bool = False) -> Any:
    """Parse JSON text within the limits: size, nesting, integer size. Any problem is InvalidInput;
    with ``or_text``, text that is not JSON at all comes back as it is (``--meta key=plain words``)."""
    if len(text) > limits.JSON_BYTES:
        raise InvalidInput(f"{name} is {len(text)} characters of JSON; the limit is {limits.JSON_BYTES}")
    try:
        value = json.loads(text, parse_int=_bounded_int, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        if or_text:
            return text
        raise InvalidInput(f"{name} is not valid JSON: {exc.msg} at position {exc.pos}") from None
    except RecursionError:
        raise InvalidInput(f"{name} is nested more than {limits.NESTING} levels deep") from None
    check_json_value(value, name)
    return value


def parse_json_values(text: str, name: str, *, max_chars: int) -> list[Any]:
    """The JSON values of ``text``, one after another (a line where two writers joined their
    objects holds two), for a reader that checks each part it keeps with :func:`check_json_value`
    (an imported file: a bad item is skipped, not the file). So an integer too large to keep
    reads as one just past ``limits.INTEGER``, and NaN or Infinity as that float, for the check to
    refuse the part that holds it. Nesting deeper than the parser follows is InvalidInput."""
    if len(text) > max_chars:
        raise InvalidInput(f"{name} is {len(text)} characters of JSON; the limit is {max_chars}")
    found: list[Any] = []
    at = 0
    try:
        while True:
            at = _SPACE.match(text, at).end()  # type: ignore[union-attr]  # matches the empty string too
            if at == len(text):
                return found
            value, at = _LENIENT.raw_decode(text, at)
            found.append(value)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{name} is not valid JSON: {exc.msg} at position {exc.pos}") from None
    except RecursionError:
        raise InvalidInput(f"{name} is nested more than {limits.NESTING} levels deep") from None


def _clamped_int(digits: str) -> int:
    if len(digits.lstrip("-")) > 19:  # int() of 4,300 digits is a ValueError; check_json_value refuses this one
        return -(limits.INTEGER + 1) if digits.startswith("-") else limits.INTEGER + 1
    return int(digits)


_SPACE = re.compile(r"[ \t\n\r]*")  # JSON's whitespace
_LENIENT = json.JSONDecoder(parse_int=_clamped_int)


def _bounded_int(digits: str) -> int:
    if len(digits.lstrip("-")) > 19:  # before int(): Python refuses 4,300 digits with a ValueError
        raise InvalidInput(f"an integer of {len(digits)} digits; the largest allowed is {limits.INTEGER}")
    return int(digits)


def _no_constant(word: str) -> float:
    raise InvalidInput(f"{word} is not JSON")


def check_metadata(value: Any) -> dict[str, Any]:
    """A JSON object with simple keys; ``tags``, when present, a list of strings."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidInput(f"metadata must be a JSON object (dict), got {type(value).__name__}")
    for key in value:
        if not isinstance(key, str) or not _METADATA_KEY.fullmatch(key):
            raise InvalidInput(f"invalid metadata key {shown(key)}: 1 to 64 letters, digits, _ . -")
    tags = value.get("tags")
    if tags is not None and (
        not isinstance(tags, list) or not all(isinstance(t, str) and t.strip() for t in tags)
    ):
        raise InvalidInput("metadata 'tags' must be a list of non-empty strings")
    check_json_value(value, "metadata", stored=True)
    try:
        encoded = json.dumps(value, ensure_ascii=False, allow_nan=False)
        encoded.encode("utf-8")
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"metadata is not JSON-serialisable: {exc}") from None
    if len(encoded.encode("utf-8")) > MAX_METADATA_BYTES:
        raise InvalidInput(f"metadata is larger than {MAX_METADATA_BYTES} bytes as JSON")
    return json.loads(encoded)  # a private copy the caller cannot mutate under us
