"""Named memory blocks and an optional character limit. Replacing text replaces every match, and
appending to a missing block creates it.

A problem the agent can act on raises its own error (``BlockNotFound``, ``TextNotFound``,
``LimitExceeded``, each with its code); nothing is written then. Every surface maps them
through its one error table (the agent tools answer ``ok: false`` with the code).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from hippo.core.tokens import estimate_tokens
from hippo.errors import BlockNotFound, LimitExceeded, TextNotFound
from hippo.types import UNCHANGED, Block, BlockResult

if TYPE_CHECKING:
    from hippo.core.ports.scoped import BlockScope

__all__ = ["BlockEditor"]


class BlockEditor:
    """Block operations of one agent; every write path checks the limit."""

    def __init__(self, store: "BlockScope", default_limit: int | None) -> None:
        self._store = store
        self._default_limit = default_limit

    def get(self, key: str) -> Block | None:
        return self._store.get_block(key)

    def _limit(self, block: Block | None) -> int | None:
        if block is not None and block.char_limit is not None:
            return block.char_limit
        return self._default_limit

    def _write(self, key: str, value: str, now: datetime, limit: int | None, **extra: Any) -> BlockResult:
        if limit is not None and len(value) > limit:
            raise LimitExceeded(f"block '{key}' would be {len(value)} characters; its limit is {limit}. "
                                "Shorten it with replace_memory_block first.")
        char_limit = extra.pop("char_limit", UNCHANGED)
        if char_limit is UNCHANGED:
            block = self._store.put_block(key, value, now)
        else:
            block = self._store.put_block(key, value, now, char_limit=char_limit)
        return BlockResult(key=key, value=block.value, **extra)

    def set(self, key: str, value: str, now: datetime, *, char_limit: Any = UNCHANGED) -> BlockResult:
        with self._store.transaction():
            existing = self.get(key)
            limit = self._limit(existing) if char_limit is UNCHANGED else (char_limit or self._default_limit)
            return self._write(key, value, now, limit, created=existing is None, char_limit=char_limit)

    def replace(self, key: str, old: str, new: str, now: datetime) -> BlockResult:
        with self._store.transaction():
            block = self.get(key)
            if block is None:
                raise BlockNotFound(f"there is no memory block '{key}'")
            count = block.value.count(old)
            if count == 0:
                raise TextNotFound(f"the text to replace was not found in block '{key}'")
            value = block.value.replace(old, new)
            return self._write(key, value, now, self._limit(block), replaced=count)

    def append(self, key: str, text: str, now: datetime) -> BlockResult:
        with self._store.transaction():
            block = self.get(key)
            if block is None:
                return self._write(key, text, now, self._limit(None), created=True)
            separator = "" if not block.value or block.value.endswith("\n") else "\n"
            return self._write(key, block.value + separator + text, now, self._limit(block))

    def context(self, max_tokens: int) -> str:
        """The blocks as a system-prompt section, in key order (the same blocks give the same text,
        so prompt caches stay warm), each with its size against its limit. Whole blocks while they
        fit in ``max_tokens``; the first that does not is cut and marked, the rest are named only."""
        blocks = sorted(self._store.list_blocks(), key=lambda b: b.key)
        shown: list[str] = []
        for n, block in enumerate(blocks):
            rest = [b.key for b in blocks[n + 1:]]
            limit = self._limit(block)
            head = f'<{block.key} chars="{len(block.value)}' + (f"/{limit}" if limit else "") + '">'
            whole = f"{head}\n{block.value}\n</{block.key}>"
            if estimate_tokens(_section([*shown, whole], rest)) <= max_tokens:
                shown.append(whole)
                continue
            chars = len(block.value)
            while chars > 0:
                cut = f"{head}\n{block.value[:chars].rstrip()}…(cut)\n</{block.key}>"
                over = estimate_tokens(_section([*shown, cut], rest)) - max_tokens
                if over <= 0:
                    return _section([*shown, cut], rest)
                chars -= 4 * over
            return _section(shown, [block.key, *rest])
        return _section(shown, [])


def _section(parts: list[str], omitted: list[str]) -> str:
    note = [f"<!-- not shown for lack of room: {', '.join(omitted)} -->"] if omitted else []
    return "\n".join(["<memory_blocks>", *parts, *note, "</memory_blocks>"])
