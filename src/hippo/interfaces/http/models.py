"""Request and response bodies of the HTTP API. Results reuse the library's dataclasses."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from hippo.types import ArchivedHit, Block, Chunk, Experience, Link

__all__ = [
    "AppendBody", "ArchiveHits", "BlockContext", "BlockList", "CompactBody", "ErrorBody", "ExperienceBody",
    "ExperienceList", "ExperienceRecallBody", "ForgetBody", "Health", "MemoryPage", "ObserveBody", "OperationBody",
    "OperationResult", "PatchMemoryBody", "Readiness", "ReceiptBody",
    "RecallBody", "RelatedList", "RememberBody", "ReplaceBody", "SetBlockBody", "StoreBody", "SurfaceBody",
    "ToolDefinition", "ToolList",
]

_TEXT = 32_000


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StoreBody(_Body):
    content: str = Field(min_length=1, max_length=_TEXT, description="The text to store as it is.")
    metadata: dict[str, Any] | None = Field(None, description="JSON object; `tags` is a list of strings.")
    intensity: float = Field(0.5, ge=0, le=1, description="Starting strength, 0 to 1.")
    observed_at: datetime | None = Field(None, description="When it happened (ISO 8601).")
    source: str | None = Field(None, description="Provenance: agent (default), conversation, migration, ...")
    session_id: str | None = Field(None, description="The session the memory came from.")


class RememberBody(_Body):
    text: str | None = Field(None, min_length=1, max_length=_TEXT, description="What the user said.")
    messages: list[dict[str, Any]] | None = Field(
        None, min_length=1, max_length=1_000,
        description="Instead of text: chat messages (OpenAI or Anthropic shape); the user's turns are learned.")
    observed_at: datetime | None = None
    metadata: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _one_source(self) -> "RememberBody":
        if (self.text is None) == (self.messages is None):
            raise ValueError("give either text or messages")
        return self


class RecallBody(_Body):
    query: str = Field(min_length=1, max_length=4_000, description="What to recall, in words.")
    limit: int = Field(10, ge=1, le=100)
    kind: Literal["fact", "memory"] | None = None
    tags: list[str] | None = Field(None, max_length=100, description="Only memories with all these tags.")
    since: datetime | None = Field(None, description="Observed (or stored) at or after (ISO 8601).")
    until: datetime | None = Field(None, description="Observed (or stored) before (ISO 8601).")
    source: list[str] | None = Field(None, max_length=100, description="Only memories from any of these sources.")
    session_id: str | None = Field(None, description="Only memories from this session.")
    include_archived: bool = Field(False, description="Archived memories compete too, marked.")
    expand: bool = Field(False, description="Memories often recalled with the best hits follow them.")
    metadata: dict[str, Any] | None = Field(None, description=(
        'Conditions on metadata, e.g. {"status": {"$in": ["open", "blocked"]}, "priority": {"$gte": 2}} '
        "($eq $ne $in $gt $gte $lt $lte $exists; a plain value means $eq)."))
    as_of: datetime | None = Field(None, description=(
        "What was current at this time (ISO 8601): nothing stored later, a fact's version of then, strength and "
        "recency as they stood; not counted as retrieved."))


class ExperienceRecallBody(_Body):
    query: str | None = Field(None, min_length=1, max_length=4_000,
                              description="Search text: by relevance; omit for the latest first.")
    types: list[str] | None = Field(None, max_length=7, description="Only these types (any of them).")
    tags: list[str] | None = Field(None, max_length=100, description="Only with all these tags.")
    min_importance: float | None = Field(None, ge=0, le=1)
    since: datetime | None = Field(None, description="Observed at or after (ISO 8601).")
    limit: int = Field(10, ge=1, le=100)


class ForgetBody(_Body):
    description: str = Field(min_length=1, max_length=4_000, description="What to forget.")
    preview: bool = Field(False, description="true: list what would be deleted, delete nothing.")
    limit: int = Field(10, ge=1, le=100)
    receipt: bool = Field(False, description="true: the answer holds the forget's signed receipt (`receipt`), "
                                             "which `POST receipts/verify` checks again later.")


class _RemovedBody(BaseModel):
    id: str = Field(max_length=200)
    kind: str = Field(max_length=32)
    digest: str = Field(max_length=200)
    words: list[str]
    kept: bool = False


class _PlaceCheckBody(BaseModel):
    place: str = Field(max_length=100)
    ok: bool
    detail: str


class ReceiptBody(BaseModel):
    """A forget's receipt as the forget answered it (its `receipt` field), or as saved: every
    field as it came. Fields a later version adds are ignored."""

    agent_id: str = Field(max_length=200)
    database: str
    operation: str = Field(max_length=100)
    operation_id: str = Field(max_length=100)
    issued_at: str = Field(max_length=64, description="ISO 8601, as the receipt holds it.")
    removed: list[_RemovedBody]
    counts: dict[str, int]
    checks: list[_PlaceCheckBody]
    wal_checkpointed: bool | None
    scrubbed: bool
    audit_seq: int | None
    audit_hash: str | None = Field(max_length=200)
    signature: str = Field("", max_length=200)


class PatchMemoryBody(_Body):
    content: str | None = Field(None, min_length=1, max_length=_TEXT,
                                description="New text: embedded and indexed again; the old text leaves every file.")
    metadata: dict[str, Any] | None = Field(None, description="Replaces the memory's metadata.")


class SplitFactBody(_Body):
    wording: str = Field(min_length=1, max_length=_TEXT,
                         description="A wording merged into the fact as a duplicate (its history's `merged`).")


class SetBlockBody(_Body):
    value: str = Field(max_length=_TEXT, description="The block's whole new text.")
    char_limit: int | None = Field(None, ge=1, le=1_000_000,
                                   description="Cap on this block's length; omit to keep the current cap.")


class AppendBody(_Body):
    text: str = Field(min_length=1, max_length=_TEXT)


class ReplaceBody(_Body):
    old: str = Field(min_length=1, max_length=_TEXT, description="Exact text to find (every match is replaced).")
    new: str = Field(max_length=_TEXT)


class ExperienceBody(_Body):
    type: str = Field(min_length=1, max_length=32, description=(
        "chat, observation, task, decision, tool-use, error or insight."))
    content: str = Field(min_length=1, max_length=_TEXT, description="What happened.")
    context: dict[str, Any] | None = Field(None, description=(
        "JSON object: userId, roomId, taskId (or senderId, snake_case too), flags such as mentionedMe, anything else."))
    importance: float | None = Field(None, ge=0, le=1, description=(
        "0 to 1; omit to rate it by type and the context's flags."))
    tags: list[str] = Field(default_factory=list, max_length=100, description="Labels to filter by.")
    source: str | None = Field(None, description="Provenance: agent (default), conversation, ...")
    session_id: str | None = Field(None, description="The session it came from.")
    observed_at: datetime | None = Field(None, description="When it happened (ISO 8601); default now.")


_MESSAGES = Field(min_length=1, max_length=10_000, description=(
    "Chat messages in OpenAI or Anthropic shape; each may also carry `id`, `name` (the speaker) and `timestamp`."))


class ObserveBody(_Body):
    messages: list[dict[str, Any]] = _MESSAGES


class SurfaceBody(_Body):
    messages: list[dict[str, Any]] = Field(min_length=1, max_length=1_000, description=(
        "The conversation so far (its last few messages make the query), OpenAI or Anthropic shape."))
    max_tokens: int = Field(500, ge=1, le=100_000, description="The context block's budget in tokens.")


class CompactBody(_Body):
    messages: list[dict[str, Any]] = Field(max_length=100_000, description=(
        "The session to compact, OpenAI or Anthropic shape, tool calls and results included."))
    session_id: str | None = Field(None, description=(
        "Store what fades as memories of this session (their ids in the summary); omit to store nothing."))
    previous_summary: str | None = Field(None, max_length=1_000_000, description="An earlier compaction's summary.")
    config: dict[str, Any] | None = Field(None, description=(
        "Compaction numbers over the server's [compaction]: decay_rates, sparse_threshold, compress_threshold, "
        "retention_floor, max_sparse_index_tokens (camelCase too). Where to log is the operator's, not a request's."))


class ErrorDetail(BaseModel):
    code: str
    message: str


class ErrorBody(BaseModel):
    error: ErrorDetail


class Health(BaseModel):
    status: Literal["ok"]
    version: str
    auth: bool = Field(description="Whether requests need an API key.")


class Readiness(BaseModel):
    status: Literal["ready"]
    checks: dict[str, bool] = Field(description="Each check and whether it passed: store, migrations, model.")


class OperationBody(_Body):
    arguments: dict[str, Any] = Field(default_factory=dict, description=(
        "The operation's keyword arguments, named as in Python; those left out take the operation's defaults."))


class OperationResult(BaseModel):
    result: Any = Field(description="What the operation returned: a result object as JSON (datetimes in ISO 8601), "
                                    "a list of them, a string, a number, a boolean or null.")


class MemoryPage(BaseModel):
    items: list[Chunk]
    next_cursor: str | None = Field(None, description="Pass as `cursor` for the next page; null on the last.")


class ArchiveHits(BaseModel):
    hits: list[ArchivedHit]


class RelatedList(BaseModel):
    links: list[Link]


class BlockList(BaseModel):
    items: list[Block]


class BlockContext(BaseModel):
    context: str = Field(description="The blocks as a system-prompt section.")


class ExperienceList(BaseModel):
    items: list[Experience]


class ToolDefinition(BaseModel):
    name: str
    description: str = Field(description="What the tool does and when to use it, written for a model.")
    parameters: dict[str, Any] = Field(description="The tool's arguments as JSON Schema.")


class ToolList(BaseModel):
    items: list[ToolDefinition]
