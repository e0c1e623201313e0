"""The ``record_experience`` agent tool: an agent records its own decisions, insights,
errors and observations. Offered by :class:`~hippo.core.tools.toolset.Toolset` like every other tool,
so in both tool formats and over MCP."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from hippo.core.memory import Memory

__all__ = ["DESCRIPTION", "RecordExperienceArgs", "record_experience"]

DESCRIPTION = (
    "Record something you lived through, in one or two sentences: a decision you made and why, an insight, an "
    "error and how it was recovered, a task, an observation, a tool use or a notable chat. It goes to short-term "
    "memory at once and is searchable there; the important ones (importance 0.6 or more) move to long-term memory "
    "at the next consolidation, the rest fade. Leave importance out to have it rated by type (error 0.9, insight "
    "0.85, decision 0.8, task and tool-use 0.7, chat 0.6, observation 0.4) and by the context's flags "
    "(mentionedMe, userDirectMessage, actionTaken, errorRecovered). Put the ids of the user, room and task in "
    "context (userId, roomId, taskId) so the experience can be found by them later. For facts about the user use "
    "remember_facts. Returns the experience's id, its importance and where it is (short_term or long_term)."
)


class RecordExperienceArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)

    type: Literal["chat", "observation", "task", "decision", "tool-use", "error", "insight"] = Field(
        description="What kind of experience it is.")
    content: str = Field(min_length=1, description="What happened, complete enough to be understood later.")
    context: dict[str, Any] | None = Field(
        None, description="JSON object: userId, roomId, taskId, and flags such as mentionedMe or errorRecovered.")
    importance: float | None = Field(None, ge=0, le=1, description="0 to 1; leave out to rate it by type and context.")
    tags: list[str] | None = Field(None, description="Short labels to filter by later, e.g. ['deploy'].")


def record_experience(mem: "Memory", a: RecordExperienceArgs) -> dict[str, Any]:
    found = mem.record_experience(a.type, a.content, context=a.context, importance=a.importance, tags=a.tags or ())
    return {"id": found.id, "type": found.type, "importance": found.importance, "tier": found.tier}
