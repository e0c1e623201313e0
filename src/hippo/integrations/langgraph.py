"""hippo as a LangGraph store: ``HippoStore``, a ``langgraph.store.base.BaseStore``.

    import hippo
    from hippo.integrations.langgraph import HippoStore

    store = HippoStore(hippo.open("memory.db"))
    store.put(("users", "alice"), "food", {"text": "Alice is vegetarian"})
    store.search(("users", "alice"), query="what does alice eat?")
    graph = builder.compile(store=store)

A namespace is an agent: its labels joined by dots (``("users", "alice")`` is the agent
``users.alice``), so what a graph stores is the same memory hippo's tools, API and CLI see for
that agent. An item is a keyed memory (:mod:`hippo.core.memories.items`): its key identifies it, its value
is kept whole in the memory's metadata, and the value's text is the memory's content, embedded
and indexed, so ``search`` with a query is hippo's recall (meaning and keywords, weighted by
strength and recency; the hits count as retrievals and strengthen). Without a query, ``search``
lists items newest first. ``filter`` follows LangGraph's rules (equality, ``$eq $ne $gt $gte $lt
$lte``, nested objects). ``delete`` is hippo's hard delete: the text leaves every file.

Which text is indexed: the ``index`` paths of ``put`` (LangGraph's path syntax), else the
store's ``index_fields``, else every text in the value. ``index=False`` keeps the item out of
query searches. TTLs are not supported (``supports_ttl`` is False): memories decay instead.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from datetime import datetime
from typing import Any, Iterable

from hippo.errors import missing_extra

try:
    from langgraph.store.base import (
        BaseStore,
        GetOp,
        InvalidNamespaceError,
        Item,
        ListNamespacesOp,
        MatchCondition,
        Op,
        PutOp,
        Result,
        SearchItem,
        SearchOp,
    )
    from langgraph.store.base.embed import get_text_at_path
except ImportError as exc:  # one line naming the extra, never a bare ModuleNotFoundError
    raise (missing_extra(exc) or exc) from None

from hippo import limits
from hippo.core.memories.items import ITEM_KEY
from hippo.core.memory import Memory
from hippo.types import Chunk

__all__ = ["HippoStore"]

_LABEL = re.compile(r"[A-Za-z0-9_:@-]+")
_VALUE = "value"  # metadata fields of an item's memory
_UNINDEXED = "unindexed"
_UPDATED = "updated_at"


def namespace_agent(namespace: tuple[str, ...]) -> str:
    """The agent id of a namespace; InvalidNamespaceError when it cannot be one."""
    if not namespace or not all(isinstance(label, str) and _LABEL.fullmatch(label) for label in namespace):
        raise InvalidNamespaceError(
            f"namespace {namespace!r} cannot name a hippo agent: labels of letters, digits and _ : @ - only")
    agent = ".".join(namespace)
    if not agent[0].isalnum() or len(agent) > 128:
        raise InvalidNamespaceError(
            f"namespace {namespace!r} cannot name a hippo agent: it must start with a letter or digit "
            "and be at most 128 characters joined by dots")
    return agent


def _indexed_text(value: dict[str, Any], fields: list[str] | None) -> str:
    """The text of ``value`` that is embedded and indexed."""
    if fields:
        parts = [text for path in fields for text in get_text_at_path(value, path)]
    else:
        parts = list(_strings(value))
    text = "\n".join(p for p in parts if p.strip())
    return text or json.dumps(value, sort_keys=True, ensure_ascii=False)


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def matches(value: Any, test: Any) -> bool:
    """LangGraph's filter semantics: equality, operators, nested objects and lists."""
    if isinstance(test, dict):
        if any(k.startswith("$") for k in test):
            return all(_operator(value, op, operand) for op, operand in test.items())
        return isinstance(value, dict) and all(matches(value.get(k), t) for k, t in test.items())
    if isinstance(test, (list, tuple)):
        return (isinstance(value, (list, tuple)) and len(value) == len(test)
                and all(matches(a, b) for a, b in zip(value, test)))
    return bool(value == test)


def _operator(value: Any, op: str, operand: Any) -> bool:
    if op == "$eq":
        return bool(value == operand)
    if op == "$ne":
        return bool(value != operand)
    compare = {"$gt": float.__gt__, "$gte": float.__ge__, "$lt": float.__lt__, "$lte": float.__le__}.get(op)
    if compare is None:
        raise ValueError(f"unsupported filter operator {op!r}; known: $eq $ne $gt $gte $lt $lte")
    try:
        return bool(compare(float(value), float(operand)))
    except (TypeError, ValueError):
        return False


def _namespace_matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = condition.path
    if len(namespace) < len(path):
        return False
    pairs = zip(namespace, path) if condition.match_type == "prefix" else zip(reversed(namespace), reversed(path))
    return all(p == "*" or n == p for n, p in pairs)


class HippoStore(BaseStore):
    """A LangGraph store over one hippo database (see the module's docstring)."""

    supports_ttl = False

    def __init__(self, memory: Memory, *, index_fields: list[str] | None = None) -> None:
        self.memory = memory
        self.index_fields = index_fields
        self._agents: dict[str, Memory] = {}  # one memory per namespace, as hippo serve keeps them
        self._lock = threading.Lock()

    def _agent(self, namespace: tuple[str, ...]) -> Memory:
        agent = namespace_agent(tuple(namespace))
        with self._lock:
            if agent not in self._agents:
                self._agents[agent] = self.memory.for_agent(agent)
            return self._agents[agent]

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return [self._run(op) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.to_thread(self.batch, list(ops))

    def _run(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            chunk = self._agent(op.namespace).get_item(op.key)
            return None if chunk is None else _item(op.namespace, chunk)
        if isinstance(op, PutOp):
            self._put(op)
            return None
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._list_namespaces(op)
        raise ValueError(f"unknown store operation {type(op).__name__}")

    def _put(self, op: PutOp) -> None:
        memory = self._agent(op.namespace)
        if op.value is None:
            memory.delete_item(op.key)
            return
        value = dict(op.value)
        fields = op.index if isinstance(op.index, list) else self.index_fields
        metadata: dict[str, Any] = {_VALUE: value, _UPDATED: memory.now().isoformat()}
        if op.index is False:
            metadata[_UNINDEXED] = True
        memory.put_item(op.key, _indexed_text(value, fields), metadata)

    def _namespaces(self, prefix: tuple[str, ...]) -> list[tuple[str, ...]]:
        if prefix:
            namespace_agent(tuple(prefix))  # the same rule for a prefix as for a namespace
        found = (tuple(agent.split(".")) for agent in self.memory.agent_ids(".".join(prefix)))
        return [ns for ns in found if ns[: len(prefix)] == tuple(prefix)]

    def _search(self, op: SearchOp) -> list[Item]:
        wanted = op.offset + op.limit
        if op.query:
            scored = [hit for ns in self._namespaces(op.namespace_prefix) for hit in self._recall(ns, op, wanted)]
            scored.sort(key=lambda hit: -hit[2])
            return [_item(ns, chunk, score) for ns, chunk, score in scored[op.offset:wanted]]
        listed = [(ns, chunk) for ns in self._namespaces(op.namespace_prefix) for chunk in self._all_items(ns)]
        listed = [(ns, c) for ns, c in listed if matches(c.metadata.get(_VALUE), op.filter or {})]
        listed.sort(key=lambda pair: (pair[1].metadata.get(_UPDATED, ""), pair[1].id), reverse=True)
        return [_item(ns, chunk, None) for ns, chunk in listed[op.offset:wanted]]

    def _recall(self, namespace: tuple[str, ...], op: SearchOp, wanted: int) -> list[tuple[tuple, Chunk, float]]:
        """The namespace's best ``wanted`` items for the query that pass the filter (a larger pool
        is asked for while the filter leaves too few)."""
        memory = self._agent(namespace)
        pool = min(limits.RESULT_LIMIT, max(50, 4 * wanted))
        while True:
            hits = memory.recall_memories(op.query or "", limit=pool, kind="memory",
                                          metadata={ITEM_KEY: {"$exists": True}, _UNINDEXED: {"$ne": True}})
            kept = [h for h in hits.hits if matches(h.chunk.metadata.get(_VALUE), op.filter or {})]
            if len(kept) >= wanted or len(hits.hits) < pool or pool >= limits.RESULT_LIMIT:
                return [(namespace, h.chunk, h.score) for h in kept[:wanted]]
            pool = min(limits.RESULT_LIMIT, pool * 4)

    def _all_items(self, namespace: tuple[str, ...]) -> list[Chunk]:
        memory, found, cursor = self._agent(namespace), [], None
        while True:
            page = memory.list_items(limit=limits.RESULT_LIMIT, cursor=cursor)
            found.extend(page.items)
            if page.next_cursor is None:
                return found
            cursor = page.next_cursor

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        namespaces = [tuple(agent.split(".")) for agent in self.memory.agent_ids("")]
        namespaces = [ns for ns in namespaces if all(_namespace_matches(c, ns) for c in op.match_conditions or ())]
        if op.max_depth is not None:
            namespaces = sorted({ns[: op.max_depth] for ns in namespaces})
        else:
            namespaces = sorted(namespaces)
        return namespaces[op.offset: op.offset + op.limit]


def _item(namespace: tuple[str, ...], chunk: Chunk, *score: float | None) -> Item:
    """The LangGraph item of a keyed memory; a ``SearchItem`` when a score (or None) is given."""
    updated = chunk.metadata.get(_UPDATED)
    fields: dict[str, Any] = dict(
        namespace=tuple(namespace), key=chunk.metadata[ITEM_KEY], value=chunk.metadata.get(_VALUE, {}),
        # put_item reads its own clock after the update time was taken: never report an update before creation
        created_at=chunk.created_at,
        updated_at=max(datetime.fromisoformat(updated), chunk.created_at) if updated else chunk.created_at)
    return SearchItem(score=score[0], **fields) if score else Item(**fields)
