"""What every public result type shares: ``to_dict()``, JSON-ready data (times as ISO-8601 text)."""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime
from typing import Any

__all__ = ["Dictable", "jsonable"]


def jsonable(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(jsonable(v) for v in value)
    return value


class Dictable:
    def to_dict(self) -> dict[str, Any]:
        return jsonable(asdict(self))  # type: ignore[call-overload]
