"""MCP-only tools for capture, surfacing and compaction: ``observe_messages``,
``surface_memories`` and ``compact_session``.

They are not agent tools (:class:`~hippo.core.tools.toolset.Toolset` does not offer them): each takes
the conversation itself, which a harness holds and a model would have to copy out token by token;
an agent that wants memories asks ``recall_memories``, and what it lives through is captured for it.
Over MCP they serve the clients that drive a session (an IDE, an agent runner), with the same
:class:`~hippo.core.tools.toolset.Tool` contract: ``{"ok": true, ...}`` or a structured error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from hippo.core.tools.toolset import Tool

if TYPE_CHECKING:
    from hippo.core.memory import Memory

__all__ = ["CAPTURE_TOOL_NAMES", "capture_tools"]

CAPTURE_TOOL_NAMES = ("observe_messages", "surface_memories", "compact_session")

_MESSAGES = Field(min_length=1, max_length=10_000, description=(
    "Chat messages in OpenAI or Anthropic shape, each optionally with id, name (the speaker) and timestamp."))
_SESSION = Field(min_length=1, max_length=256, description="The conversation's session id.")


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ObserveArgs(_Args):
    session_id: str = _SESSION
    messages: list[dict[str, Any]] = _MESSAGES


class SurfaceArgs(_Args):
    session_id: str = _SESSION
    messages: list[dict[str, Any]] = _MESSAGES
    max_tokens: int = Field(500, ge=1, le=100_000, description="The context block's budget in tokens.")


class CompactArgs(_Args):
    messages: list[dict[str, Any]] = Field(max_length=100_000, description="The session, tool calls included.")
    session_id: str | None = Field(None, min_length=1, max_length=256, description=(
        "Store what fades as memories of this session (ids in the summary); omit to store nothing."))
    previous_summary: str | None = Field(None, description="An earlier compaction's summary (Prior Context).")


OBSERVE = ("Hand memory a conversation's messages to remember from: kept at once (durable), turned into memories "
           "later. Send the whole transcript again at will: message ids already held are skipped. Returns how "
           "many were accepted, already held and left out (system prompts, tool outputs).")
SURFACE = ("Memories relevant to the last few messages that this session has not been shown yet, as a short "
           "context block with ids within max_tokens; empty text when nothing is relevant (small talk asks for "
           "nothing).")
COMPACT = ("Compact a long session into a summary (Goal, Prior Context, Active Context, Compressed, Sparse Index, "
           "stats). With session_id, what is compressed or reduced to a pointer is stored as memories and each "
           "line carries [id:...], so recall_memories brings it back.")


def capture_tools(mem: "Memory") -> list[Tool]:
    """The three tools over ``mem``."""

    def observe(a: ObserveArgs) -> dict[str, Any]:
        return mem.observe(a.messages, session_id=a.session_id).to_dict()

    def surface(a: SurfaceArgs) -> dict[str, Any]:
        found = mem.surface(a.messages, session_id=a.session_id, max_tokens=a.max_tokens)
        return {"text": found.text, "tokens": found.tokens, "ids": [hit.chunk.id for hit in found.hits]}

    def compact(a: CompactArgs) -> dict[str, Any]:
        if a.session_id is None:
            from hippo.core.compaction.compact import compact as summarize

            done = summarize(a.messages, previous_summary=a.previous_summary)
        else:
            done = mem.compact(a.messages, session_id=a.session_id, previous_summary=a.previous_summary)
        return {"summary": done.summary, "stats": done.stats.to_dict()}

    return [Tool("observe_messages", OBSERVE, ObserveArgs, observe),
            Tool("surface_memories", SURFACE, SurfaceArgs, surface),
            Tool("compact_session", COMPACT, CompactArgs, compact)]
