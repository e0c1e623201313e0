"""Token counts without a tokenizer: what the tool results and the blocks' prompt section budget by."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["estimate_tokens"]


def estimate_tokens(value: Any) -> int:
    """About four characters of text (or of compact JSON) per token, at least one."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return max(1, -(-len(text) // 4))
