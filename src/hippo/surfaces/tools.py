"""The agent tools (the eight core memory tools, then hippo's own) over one :class:`~hippo.core.memory.Memory`.

Each tool has a name, a description written for a model, a JSON Schema made
from a typed argument model, and a call that validates its arguments and
returns a JSON-serialisable result. A problem the model can act on (invalid
argument, block or text missing, nothing matched, provider down) comes back as
``{"ok": false, "error": {"code", "message"}}``; only programming errors raise.

Every other surface (OpenAI and Anthropic tool calling, MCP, HTTP) offers this
same list; :mod:`hippo.surfaces.tool_formats` turns it into each format.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable, Iterator, Literal, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from hippo.core.tokens import estimate_tokens
from hippo.core.validation import check_json_value, parse_json, shown
from hippo.errors import HippoError, InvalidInput
from hippo.surfaces import experience_tool

if TYPE_CHECKING:
    from hippo.core.memory import Memory

__all__ = ["Tool", "Toolset", "TOOL_NAMES", "estimate_tokens"]


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


class RecallArgs(_Args):
    query: str = Field(min_length=1, description="What you are looking for, in natural language or keywords.")
    limit: int = Field(10, ge=1, le=50, description="Most results to return.")
    kind: Literal["fact", "memory"] | None = Field(None, description="Only facts, or only raw memories.")
    tags: list[str] | None = Field(None, description="Only memories carrying all of these tags.")
    max_tokens: int | None = Field(None, ge=50, le=20_000, description="Budget for the answer; fewer results fit.")


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


def _age(then: datetime, now: datetime) -> str:
    seconds = max(0.0, (now - then).total_seconds())
    for unit, size in (("y", 365 * 86400), ("mo", 30 * 86400), ("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return "now"


def _fit(items: list[dict[str, Any]], field: str, budget: int) -> tuple[list[dict[str, Any]], int]:
    """Keep whole items while the list fits in ``budget`` tokens; cut the first one's text if it alone does not."""
    kept: list[dict[str, Any]] = []
    for item in items:
        if estimate_tokens([*kept, item]) <= budget:
            kept.append(item)
            continue
        if not kept:
            chars = len(item[field])
            while chars > 0 and (over := estimate_tokens([_cut(item, field, chars)]) - budget) > 0:
                chars = max(0, chars - 4 * over)
            kept.append(_cut(item, field, chars))
        break
    return kept, len(items) - len(kept)


def _cut(item: dict[str, Any], field: str, chars: int) -> dict[str, Any]:
    return {**item, field: item[field][:chars].rstrip() + "…", "truncated": True}


@dataclass(frozen=True)
class Tool:
    """One agent tool: ``call(arguments)`` returns ``{"ok": true, ...}`` or ``{"ok": false, "error": ...}``."""

    name: str
    description: str
    args_model: type[BaseModel]
    run: Callable[[Any], dict[str, Any]]

    @property
    def parameters(self) -> dict[str, Any]:
        """The arguments as JSON Schema (draft 2020-12), plain enough for every tool-calling API."""
        return _plain_schema(self.args_model.model_json_schema())

    def call(self, arguments: Mapping[str, Any] | str | None = None) -> dict[str, Any]:
        try:
            args = self._parse(arguments)
            return {"ok": True, **self.run(args)}
        except HippoError as exc:
            return {"ok": False, "error": exc.to_dict()}

    def _parse(self, arguments: Mapping[str, Any] | str | None) -> BaseModel:
        if isinstance(arguments, str):
            arguments = parse_json(arguments, "arguments") if arguments.strip() else {}
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, Mapping):
            raise InvalidInput(f"arguments must be a JSON object, got {type(arguments).__name__}")
        check_json_value(dict(arguments), "arguments")
        try:
            return self.args_model.model_validate(dict(arguments))
        except ValidationError as exc:
            raise InvalidInput(_explain(exc)) from None


def _explain(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors(include_url=False)[:5]:
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        message = "unknown argument" if err["type"] == "extra_forbidden" else err["msg"]
        parts.append(f"{where}: {message}")
    return "invalid arguments: " + "; ".join(parts)


def _plain_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Drop titles and turn ``anyOf [X, null]`` with a null default into plain optional ``X``."""

    def clean(node: Any) -> Any:
        if isinstance(node, list):
            return [clean(n) for n in node]
        if not isinstance(node, dict):
            return node
        node = {k: clean(v) for k, v in node.items() if k != "title"}
        options = node.get("anyOf")
        if isinstance(options, list) and len(options) == 2 and {"type": "null"} in options:
            other = next(o for o in options if o != {"type": "null"})
            node = {**{k: v for k, v in node.items() if k != "anyOf"}, **other}
            if node.get("default", 0) is None:
                del node["default"]
        return node

    return clean(schema)


class Toolset(Sequence[Tool]):
    """The agent tools of one memory, core tools first; index by position or name."""

    def __init__(self, mem: "Memory", *, recall_max_tokens: int = 1500) -> None:
        if isinstance(recall_max_tokens, bool) or not isinstance(recall_max_tokens, int) or recall_max_tokens < 50:
            raise InvalidInput(f"recall_max_tokens must be an integer of at least 50, got {shown(recall_max_tokens)}")
        self.memory = mem
        self.recall_max_tokens = recall_max_tokens
        handlers: dict[str, tuple[type[BaseModel], Callable[[Any], dict[str, Any]]]] = {
            "remember_facts": (RememberFactsArgs, self._remember_facts),
            "store_memory": (StoreMemoryArgs, self._store_memory),
            "replace_memory_block": (ReplaceBlockArgs, self._replace_block),
            "append_memory_block": (AppendBlockArgs, self._append_block),
            "forget_memory": (ForgetArgs, self._forget),
            "recall_memories": (RecallArgs, self._recall),
            "recall_memory_block": (RecallBlockArgs, self._recall_block),
            "recall_conversation": (RecallConversationArgs, self._recall_conversation),
            "update_memory": (UpdateMemoryArgs, self._update_memory),
            "split_fact": (SplitFactArgs, self._split_fact),
            "reinforce_memory": (FeedbackArgs, self._reinforce),
            "demote_memory": (FeedbackArgs, self._demote),
            "record_experience": (experience_tool.RecordExperienceArgs, self._record_experience),
        }
        if not mem.has_conversation():
            del handlers["recall_conversation"]  # omitted without a messages table
        described = {**DESCRIPTIONS, "record_experience": experience_tool.DESCRIPTION}
        self._tools = [Tool(name, described[name], model, run) for name, (model, run) in handlers.items()]
        self._by_name = {t.name: t for t in self._tools}

    # -- the sequence --------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._tools)

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools)

    def __getitem__(self, index: int | str) -> Tool:  # type: ignore[override]
        if isinstance(index, str):
            try:
                return self._by_name[index]
            except KeyError:
                raise KeyError(f"no tool named {index!r}; tools: {', '.join(self.names)}") from None
        return self._tools[index]

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    @property
    def names(self) -> list[str]:
        return [t.name for t in self._tools]

    def call(self, name: Any, arguments: Mapping[str, Any] | str | None = None) -> dict[str, Any]:
        """Run one tool by name; an unknown name is a structured error too (models misspell)."""
        tool = self._by_name.get(name) if isinstance(name, str) else None
        if tool is None:
            known = ", ".join(self.names)
            return {"ok": False, "error": {"code": "unknown_tool", "message": f"no tool {shown(name)}; tools: {known}"}}
        return tool.call(arguments)

    # -- provider formats (hippo.surfaces.tool_formats) ---------------------------------------

    def openai(self) -> list[dict[str, Any]]:
        """Tool definitions for OpenAI Chat Completions (``tools=``)."""
        from hippo.surfaces.tool_formats import openai_tools

        return openai_tools(self)

    def openai_responses(self) -> list[dict[str, Any]]:
        """Tool definitions for the OpenAI Responses API."""
        from hippo.surfaces.tool_formats import openai_responses_tools

        return openai_responses_tools(self)

    def anthropic(self) -> list[dict[str, Any]]:
        """Tool definitions for the Anthropic Messages API (``tools=``)."""
        from hippo.surfaces.tool_formats import anthropic_tools

        return anthropic_tools(self)

    def dispatch(self, tool_call: Any) -> dict[str, Any]:
        """Run one tool call in OpenAI or Anthropic form; returns the result message in the same form."""
        from hippo.surfaces.tool_formats import dispatch

        return dispatch(self, tool_call)

    def results_for(self, message: Any) -> list[dict[str, Any]]:
        """Run every tool call of an assistant message; returns the messages to send back."""
        from hippo.surfaces.tool_formats import results_for

        return results_for(self, message)

    # -- the tools ----------------------------------------------------------------------------

    def _remember_facts(self, a: RememberFactsArgs) -> dict[str, Any]:
        result = self.memory.remember_facts(a.text, observed_at=a.observed_at)
        facts = []
        for f in result.facts:
            entry: dict[str, Any] = {"id": f.id, "fact": f.fact, "action": f.action, "intensity": f.intensity}
            if f.superseded:
                entry["replaced"] = f.superseded
            if f.action == "duplicate" and f.matched_content != f.fact:
                entry["matched"] = f.matched_content  # what it was merged into (split_fact undoes it)
            facts.append(entry)
        return {"summary": result.summary, "facts": facts}

    def _store_memory(self, a: StoreMemoryArgs) -> dict[str, Any]:
        metadata = {"tags": a.tags} if a.tags else None
        intensity = 0.5 if a.intensity is None else a.intensity
        stored = self.memory.store_memory(a.content, metadata, intensity)
        return {"id": stored.id, "action": stored.action}

    def _block_result(self, result: Any) -> dict[str, Any]:
        return {"key": result.key, "value": result.value}

    def _replace_block(self, a: ReplaceBlockArgs) -> dict[str, Any]:
        result = self.memory.replace_memory_block(a.key, a.old_text, a.new_text)
        return {**self._block_result(result), "replaced": result.replaced}

    def _append_block(self, a: AppendBlockArgs) -> dict[str, Any]:
        result = self.memory.append_memory_block(a.key, a.text)
        return {**self._block_result(result), "created": result.created}

    def _forget(self, a: ForgetArgs) -> dict[str, Any]:
        result = self.memory.forget_memory(a.description, preview=a.preview)
        if not result.deleted:
            raise _ToolProblem("nothing_matched", f"no memory matches {a.description!r}; nothing was deleted")
        gone = [{"id": f.id, "kind": f.kind, "content": f.content} for f in result.deleted]
        if a.preview:
            return {"would_delete": gone, "count": len(gone)}
        return {"deleted": gone, "count": len(gone), "scrubbed": result.scrubbed}

    def _recall(self, a: RecallArgs) -> dict[str, Any]:
        recall = self.memory.recall_memories(a.query, a.limit, kind=a.kind, tags=a.tags)
        now = self.memory.now()
        items = [
            {"id": h.id, "kind": h.chunk.kind, "content": h.content, "score": round(h.score, 2),
             "age": _age(h.chunk.observed_at or h.chunk.created_at, now),
             **({"feedback": h.chunk.feedback} if h.chunk.feedback else {})}
            for h in recall
        ]
        kept, omitted = _fit(items, "content", a.max_tokens or self.recall_max_tokens)
        out: dict[str, Any] = {"memories": kept}
        if omitted:
            out["omitted"] = omitted
        if recall.warning:
            out["warning"] = f"searched by keyword only: {recall.warning}"
        return out

    def _update_memory(self, a: UpdateMemoryArgs) -> dict[str, Any]:
        if a.content is None and a.tags is None:
            raise InvalidInput("nothing to update: give content, tags or both")
        metadata = None
        if a.tags is not None:
            metadata = {**self.memory.get_memory(a.id).metadata, "tags": a.tags}
            if not a.tags:
                del metadata["tags"]
        chunk = self.memory.update_memory(a.id, content=a.content, metadata=metadata)
        return {"id": chunk.id, "content": chunk.content, "tags": chunk.metadata.get("tags", [])}

    def _split_fact(self, a: SplitFactArgs) -> dict[str, Any]:
        chunk = self.memory.split_fact(a.id, a.wording)
        return {"id": chunk.id, "fact": chunk.content, "split_from": a.id}

    def _reinforce(self, a: FeedbackArgs) -> dict[str, Any]:
        chunk = self.memory.reinforce_memory(a.id)
        return {"id": chunk.id, "feedback": chunk.feedback}

    def _demote(self, a: FeedbackArgs) -> dict[str, Any]:
        chunk = self.memory.demote_memory(a.id)
        return {"id": chunk.id, "feedback": chunk.feedback}

    def _record_experience(self, a: experience_tool.RecordExperienceArgs) -> dict[str, Any]:
        return experience_tool.record_experience(self.memory, a)

    def _recall_block(self, a: RecallBlockArgs) -> dict[str, Any]:
        return {"key": a.key, "value": self.memory.recall_memory_block(a.key)}

    def _recall_conversation(self, a: RecallConversationArgs) -> dict[str, Any]:
        hits = self.memory.recall_conversation(a.query, a.limit)
        items = [{"id": h.id, "snippet": h.snippet, **_plain(h.fields)} for h in hits]
        kept, omitted = _fit(items, "snippet", self.recall_max_tokens)
        return {"messages": kept, **({"omitted": omitted} if omitted else {})}


class _ToolProblem(HippoError):
    """A structured, expected failure of a tool, carrying its own code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def _plain(fields: Mapping[str, Any]) -> dict[str, Any]:
    """Message columns as JSON values (bytes and other odd types become text)."""
    return {k: v if isinstance(v, (str, int, float, bool, type(None))) else str(v) for k, v in fields.items()
            if k not in ("agent_id",)}
