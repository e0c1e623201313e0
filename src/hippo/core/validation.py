"""Checks on everything a caller hands hippo. Each raises InvalidInput before any write."""

from __future__ import annotations

import json
import math
import re
from datetime import datetime
from typing import Any

from hippo.clock import from_iso, to_utc
from hippo.errors import InvalidInput

__all__ = [
    "check_agent_id",
    "check_block_key",
    "check_chunk_id",
    "check_datetime",
    "check_intensity",
    "check_limit",
    "check_metadata",
    "check_text",
]

AGENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:@-]{0,127}$")
BLOCK_KEY = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")
ULID = re.compile(r"^[0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{26}$")
_METADATA_KEY = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")
MAX_METADATA_BYTES = 16_384
MAX_LIMIT = 1000


def check_agent_id(agent_id: Any) -> str:
    if not isinstance(agent_id, str) or not AGENT_ID.match(agent_id):
        raise InvalidInput(
            f"invalid agent id {agent_id!r}: 1 to 128 characters, letters, digits and _ . : @ -, "
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
    if not isinstance(value, str) or not ULID.match(value):
        raise InvalidInput(f"invalid memory id {value!r}: expected a 26-character ULID")
    return value.upper()


def check_block_key(key: Any) -> str:
    if not isinstance(key, str) or not BLOCK_KEY.match(key):
        raise InvalidInput(f"invalid block key {key!r}: 1 to 64 letters, digits, _ . -")
    return key


def check_intensity(value: Any, name: str = "intensity") -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InvalidInput(f"{name} must be a number between 0 and 1, got {value!r}")
    if not 0.0 <= value <= 1.0:
        raise InvalidInput(f"{name} must be between 0 and 1, got {value}")
    return float(value)


def check_limit(value: Any, name: str = "limit") -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_LIMIT:
        raise InvalidInput(f"{name} must be an integer from 1 to {MAX_LIMIT}, got {value!r}")
    return value


def check_datetime(value: Any, name: str) -> datetime | None:
    """``None``, an aware or naive (UTC) datetime, or ISO-8601 text."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return to_utc(value)
    if isinstance(value, str):
        try:
            return from_iso(value.strip().replace("Z", "+00:00"))
        except ValueError:
            pass
    raise InvalidInput(f"{name} must be a datetime or ISO-8601 text, got {value!r}")


def check_metadata(value: Any) -> dict[str, Any]:
    """A JSON object with simple keys; ``tags``, when present, a list of strings."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidInput(f"metadata must be a JSON object (dict), got {type(value).__name__}")
    for key in value:
        if not isinstance(key, str) or not _METADATA_KEY.match(key):
            raise InvalidInput(f"invalid metadata key {key!r}: 1 to 64 letters, digits, _ . -")
    tags = value.get("tags")
    if tags is not None and (
        not isinstance(tags, list) or not all(isinstance(t, str) and t.strip() for t in tags)
    ):
        raise InvalidInput("metadata 'tags' must be a list of non-empty strings")
    try:
        encoded = json.dumps(value, ensure_ascii=False, allow_nan=False)
        encoded.encode("utf-8")
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"metadata is not JSON-serialisable: {exc}") from None
    if len(encoded.encode("utf-8")) > MAX_METADATA_BYTES:
        raise InvalidInput(f"metadata is larger than {MAX_METADATA_BYTES} bytes as JSON")
    return json.loads(encoded)  # a private copy the caller cannot mutate under us
