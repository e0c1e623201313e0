"""The agent tools' names, typed arguments and descriptions (written for a model): what
:class:`~hippo.core.tools.toolset.Toolset` offers, each argument model turned into a JSON Schema."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["DESCRIPTIONS", "TOOL_NAMES", "AppendBlockArgs", "FeedbackArgs", "ForgetArgs", "RecallArgs",
           "RecallBlockArgs", "RecallConversationArgs", "RememberFactsArgs", "ReplaceBlockArgs", "SplitFactArgs",
           "StoreMemoryArgs", "UpdateMemoryArgs"]


TOOL_NAMES = (
    "remember_facts", "store_memory", "replace_memory_block", "append_memory_block",
    "forget_memory", "recall_memories", "recall_memory_block", "recall_conversation", "update_memory",
    "split_fact", "reinforce_memory", "demote_memory", "record_experience",
)
_KEY = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$",
             description="Block name, such as 'persona' or 'human'.")


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)


class RememberFactsArgs(_Args):
    text: str = Field(min_length=1, description="What the user said, in their own words (one message or a few).")
    observed_at: str | None = Field(
        None, description="When the user said it, ISO 8601 (e.g. 2026-03-10T09:00:00Z); resolves 'yesterday'.")


class StoreMemoryArgs(_Args):
    content: str = Field(min_length=1, description="The text to keep, complete enough to be understood later.")
    tags: list[str] | None = Field(None, description="Short labels to filter by later, e.g. ['decision'].")
    intensity: float | None = Field(None, ge=0, le=1, description="How important it is, 0 to 1 (default 0.5).")


class ReplaceBlockArgs(_Args):
    key: str = _KEY
    old_text: str = Field(min_length=1, description="The exact text to find in the block (every match is replaced).")
    new_text: str = Field(description="The replacement; an empty string deletes the old text.")


class AppendBlockArgs(_Args):
    key: str = _KEY
    text: str = Field(min_length=1, description="The line to add at the end of the block.")


class ForgetArgs(_Args):
    description: str = Field(min_length=1, description="What to forget, described in a few words.")
    preview: bool = Field(False, description="true: only list what would be deleted, delete nothing.")
    receipt: bool = Field(False, description=(
        "true: also return a signed receipt of the deletion, for the user's records (proof of what was erased)."))


class RecallArgs(_Args):
    query: str = Field(min_length=1, description="What you are looking for, in natural language or keywords.")
    limit: int = Field(10, ge=1, le=50, description="Most results to return.")
    kind: Literal["fact", "memory"] | None = Field(None, description="Only facts, or only raw memories.")
    tags: list[str] | None = Field(None, description="Only memories carrying all of these tags.")
    max_tokens: int | None = Field(None, ge=50, le=20_000, description="Budget for the answer; fewer results fit.")
    as_of: str | None = Field(
        None, description="What was known at a past date, ISO 8601 (e.g. 2026-03-10T09:00:00Z).")


class UpdateMemoryArgs(_Args):
    id: str = Field(min_length=26, max_length=26, description="The memory's id, as recall_memories shows it.")
    content: str | None = Field(None, min_length=1, description="The corrected text; leave out to keep the text.")
    tags: list[str] | None = Field(None, description="The memory's new tags (replacing the old); leave out to keep.")


class SplitFactArgs(_Args):
    id: str = Field(min_length=26, max_length=26, description="The fact's id, as remember_facts returned it.")
    wording: str = Field(min_length=1, description="The wording that was merged into it, as remember_facts showed it.")


class FeedbackArgs(_Args):
    id: str = Field(min_length=26, max_length=26, description="The memory's id, as recall_memories shows it.")


class RecallBlockArgs(_Args):
    key: str = _KEY


class RecallConversationArgs(_Args):
    query: str = Field(min_length=1, description="Words to look for in past messages.")
    limit: int = Field(10, ge=1, le=50, description="Most messages to return.")


DESCRIPTIONS = {
    "remember_facts": (
        "Learn durable facts about the user from what they said: preferences, plans, people, places, decisions, "
        "changes ('I moved to Lisbon'). hippo splits the text into atomic facts, rates how strongly each was said, "
        "and reconciles each with what it already knows: new, duplicate (strengthened), supersedes (the old fact is "
        "replaced) or distinct. Use it whenever the user tells you something worth knowing next week. Do not use it "
        "for documents, logs or your own notes (use store_memory). Returns a summary sentence and, per fact, its "
        "id and what happened."
    ),
    "store_memory": (
        "Store raw content as it is: an experience, a decision, a paragraph of a document, a note to self. It is "
        "not split or reconciled; storing the exact same text again strengthens the existing memory instead of "
        "duplicating it. Use remember_facts for facts about the user. Returns the memory's id and whether it was "
        "inserted or strengthened."
    ),
    "replace_memory_block": (
        "Edit a named memory block (such as 'persona' or 'human') that is always in your context: replace every "
        "occurrence of old_text with new_text. Use it to correct or update a line; read the block first with "
        "recall_memory_block to copy old_text exactly. Errors if the block does not exist or old_text is not in it. "
        "Returns the block's new text and how many places changed."
    ),
    "append_memory_block": (
        "Add a line to the end of a named memory block ('persona', 'human', ...), creating the block if it does "
        "not exist. Use it for a new stable detail you want in every conversation; use replace_memory_block to "
        "change an existing line. Returns the block's new text."
    ),
    "forget_memory": (
        "Permanently delete the facts and memories that match a description, for example when the user asks you "
        "to forget something. Deletion is real and cannot be undone; set preview to true to see what would go "
        "first. Do not use it to correct a fact (remember_facts handles changes). Returns what was deleted, or an "
        "error when nothing matched."
    ),
    "recall_memories": (
        "Search long-term memory (facts and stored memories) by meaning and keywords. Results are ranked by "
        "relevance, strength (how often and how strongly it was said) and recency, and each shows its id, kind, "
        "content, score (0-1) and age (m=minutes, h=hours, d=days, mo=months, y=years). Use it before answering "
        "anything that may depend on what you were told earlier. Outdated facts that were replaced are never "
        "returned."
    ),
    "update_memory": (
        "Correct a stored fact or memory in place, by its id from recall_memories: new text, new tags or both. "
        "The id, strength and history stay; the old text is deleted for good. Use it when a memory you recalled "
        "is wrong or incomplete; for a change in the user's life prefer remember_facts, which keeps the old "
        "version as history. Returns the memory's id and its text now."
    ),
    "split_fact": (
        "Undo a wrong merge: when remember_facts reported a fact as a duplicate of a stored one (action "
        "'duplicate', showing the stored fact it matched) but the two say different things, make the new wording "
        "a fact of its own again, by the id and the wording remember_facts returned. Errors if that wording was "
        "never merged into that fact. Returns the new fact's id and text."
    ),
    "reinforce_memory": (
        "Tell memory that a memory you recalled helped you answer, by its id from recall_memories. It will rank "
        "higher in later searches where it is relevant, and counts as fresh again. Use it only for memories you "
        "actually used; memories you ignore need nothing. Returns the memory's id and its feedback count."
    ),
    "demote_memory": (
        "Tell memory that a memory you recalled is stale, wrong or irrelevant, by its id from recall_memories. It "
        "will rank lower in later searches; nothing is deleted (one reinforcement outweighs three demotions). To "
        "fix wrong text use update_memory instead. Returns the memory's id and its feedback count."
    ),
    "recall_memory_block": (
        "Read the full text of a named memory block ('persona', 'human', ...). Returns value null when the block "
        "does not exist yet (append_memory_block creates it)."
    ),
    "recall_conversation": (
        "Full-text search over past conversation messages (exact words, not meaning). Use it to find what was "
        "literally said earlier, such as a name, a number or a link. Returns matching messages with their id, "
        "a snippet around the match and the message's other fields (role, time)."
    ),
}
