"""The memory-block capability of one agent, operations of :class:`~hippo.core.memory.Memory`: named
blocks that sit in the agent's context. Each method checks its input and hands the work to
:class:`~hippo.core.blocks.editor.BlockEditor`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hippo import limits
from hippo.core import validation as v
from hippo.core.blocks.editor import BlockEditor
from hippo.core.context import Capability
from hippo.errors import InvalidInput
from hippo.types import UNCHANGED, Block, BlockResult

if TYPE_CHECKING:
    from hippo.core.context import AgentContext

__all__ = ["Blocks"]


class Blocks(Capability):
    """The memory-block operations of one agent."""

    def __init__(self, ctx: "AgentContext") -> None:
        super().__init__(ctx)
        self.editor = BlockEditor(ctx.store, ctx.settings.block_char_limit)

    def recall_memory_block(self, key: str) -> str | None:
        """The block's text, or ``None`` when the block does not exist."""
        block = self.editor.get(v.check_block_key(key))
        return block.value if block else None

    def memory_block(self, key: str) -> Block | None:
        return self.editor.get(v.check_block_key(key))

    def memory_blocks(self) -> list[Block]:
        return self.ctx.store.list_blocks()

    def replace_memory_block(self, key: str, old: str, new: str) -> BlockResult:
        """Replace every occurrence of ``old``; a missing block or text is a structured error."""
        key = v.check_block_key(key)
        old = v.check_text(old, "old", max_chars=self.ctx.settings.max_content_chars)
        new = v.check_text(new, "new", max_chars=self.ctx.settings.max_content_chars, allow_empty=True)
        return self.editor.replace(key, old, new, self.ctx.now())

    def append_memory_block(self, key: str, text: str) -> BlockResult:
        """Append a line to the block, creating it when missing."""
        key = v.check_block_key(key)
        text = v.check_text(text, "text", max_chars=self.ctx.settings.max_content_chars)
        return self.editor.append(key, text, self.ctx.now())

    def set_memory_block(self, key: str, value: str, *, char_limit: int | None = UNCHANGED) -> BlockResult:
        """Write the whole block. ``char_limit`` caps this block's every later write;
        ``None`` removes its own cap (the ``block_char_limit`` setting then applies)."""
        key = v.check_block_key(key)
        value = v.check_text(value, "value", max_chars=self.ctx.settings.max_content_chars, allow_empty=True)
        if char_limit is not UNCHANGED and char_limit is not None:
            char_limit = v.check_char_limit(char_limit)
        return self.editor.set(key, value, self.ctx.now(), char_limit=char_limit)

    def context(self, max_tokens: int = 2000) -> str:
        """The memory blocks as a system-prompt section within ``max_tokens`` (estimated), in a
        stable order: paste it into the system prompt on every turn."""
        low, high = limits.CONTEXT_TOKENS
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or not low <= max_tokens <= high:
            raise InvalidInput(f"max_tokens must be a whole number from {low} to {high}, got {v.shown(max_tokens)}")
        return self.editor.context(max_tokens)
