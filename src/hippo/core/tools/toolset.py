"""The agent tools (the eight core memory tools, then hippo's own) over one :class:`~hippo.core.memory.Memory`.

Each tool has a name, a description written for a model, a JSON Schema made
from a typed argument model (:mod:`hippo.core.tools.args`), and a call that validates its arguments
and returns a JSON-serialisable result. A problem the model can act on (invalid
argument, block or text missing, nothing matched, provider down) comes back as
``{"ok": false, "error": {"code", "message"}}``; only programming errors raise.

Every way in (OpenAI and Anthropic tool calling, MCP, HTTP) offers this same list;
:mod:`hippo.core.tools.formats` turns it into each format. The composition root builds a memory's
toolset (:meth:`hippo.wiring.Wiring.tools`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Sequence

from pydantic import BaseModel, ValidationError

from hippo.core.ports.audit import acting_as, actor
from hippo.core.tokens import estimate_tokens
from hippo.core.tools import experience as experience_tool
from hippo.core.tools import formats
from hippo.core.tools.args import (
    DESCRIPTIONS,
    AppendBlockArgs,
    FeedbackArgs,
    ForgetArgs,
    RecallArgs,
    RecallBlockArgs,
    RecallConversationArgs,
    RememberFactsArgs,
    ReplaceBlockArgs,
    SplitFactArgs,
    StoreMemoryArgs,
    UpdateMemoryArgs,
)
from hippo.core.validation import check_json_value, parse_json, shown
from hippo.errors import HippoError, InvalidInput

if TYPE_CHECKING:
    from hippo.core.memory import Memory

__all__ = ["Tool", "Toolset"]


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
        now = actor()
        if now.surface != "python":  # through MCP or HTTP: that surface is the one recorded
            return tool.call(arguments)
        with acting_as(now.who, "tools"):  # an agent's own tool call, in process
            return tool.call(arguments)

    # -- provider formats (hippo.core.tools.formats) ------------------------------------------

    def openai(self) -> list[dict[str, Any]]:
        """Tool definitions for OpenAI Chat Completions (``tools=``)."""
        return formats.openai_tools(self)

    def openai_responses(self) -> list[dict[str, Any]]:
        """Tool definitions for the OpenAI Responses API."""
        return formats.openai_responses_tools(self)

    def anthropic(self) -> list[dict[str, Any]]:
        """Tool definitions for the Anthropic Messages API (``tools=``)."""
        return formats.anthropic_tools(self)

    def dispatch(self, tool_call: Any) -> dict[str, Any]:
        """Run one tool call in OpenAI or Anthropic form; returns the result message in the same form."""
        return formats.dispatch(self, tool_call)

    def results_for(self, message: Any) -> list[dict[str, Any]]:
        """Run every tool call of an assistant message; returns the messages to send back."""
        return formats.results_for(self, message)

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
        result = self.memory.forget_memory(a.description, preview=a.preview, receipt=a.receipt)
        if not result.deleted:
            raise _ToolProblem("nothing_matched", f"no memory matches {a.description!r}; nothing was deleted")
        gone = [{"id": f.id, "kind": f.kind, "content": f.content} for f in result.deleted]
        if a.preview:
            return {"would_delete": gone, "count": len(gone)}
        proof = {"receipt": result.receipt.to_dict()} if result.receipt is not None else {}
        return {"deleted": gone, "count": len(gone), "scrubbed": result.scrubbed, **proof}

    def _recall(self, a: RecallArgs) -> dict[str, Any]:
        recall = self.memory.recall_memories(a.query, a.limit, kind=a.kind, tags=a.tags, as_of=a.as_of)
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
