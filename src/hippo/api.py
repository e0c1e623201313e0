"""``hippo.Memory``: the core's :class:`~hippo.core.memory.Memory` with the agent tools attached.

The core knows no surface; the agent tools are one (``hippo.surfaces.tools``). The memory a user
holds (what :func:`hippo.open` returns) is this class, which adds :meth:`Memory.tools` on top of
the core and nothing else, so that ``mem.tools()`` works without the core importing a surface.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hippo.core import memory as core

if TYPE_CHECKING:
    from hippo.surfaces.tools import Toolset

__all__ = ["Memory"]


class Memory(core.Memory):
    """The long-term memory of one agent, with its agent tools. Build it with :func:`hippo.open`."""

    def tools(self, *, recall_max_tokens: int = 1500) -> "Toolset":
        """The agent tools over this memory: name, description, JSON Schema, call.

        Also as OpenAI and Anthropic tool definitions, with a dispatcher for
        either format's tool calls. ``recall_conversation`` is offered only when
        the messages table exists (:meth:`has_conversation`).
        """
        from hippo.surfaces.tools import Toolset

        return Toolset(self, recall_max_tokens=recall_max_tokens)
