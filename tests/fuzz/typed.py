"""Type-aware arguments for every operation ``Memory`` names (``hippo.core.memory.OPERATIONS``).

Each parameter's strategy is built from the operation's own type hints (``hippo.client.wire``
resolves them, as the server does): values of the right type, its edge values first (0, -1,
2**63, NaN, infinity, datetime.min, the empty text, a lone surrogate, a list of one wrong item),
and values of every wrong type (:data:`nasty.nasty`). Where a parameter's name says what a
plausible value is (a stored memory's id, a block key, an experience type, a session's messages),
such values are drawn too, so that calls get past the first check and reach the writes behind it.

Shared by the fuzzers of the Python API, of ``hippo.connect`` and of the operations route.
"""

from __future__ import annotations

import collections.abc as abc
import dataclasses
import inspect
import os
import types
import typing
from collections import Counter
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable, Iterator, Literal, Union, get_args, get_origin

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nasty import HUGE_INTS, TRICKY_TEXT, nasty, texts, values

import hippo
from hippo.client import wire
from hippo.core.memory import Memory
from hippo.providers.fake import FakeEmbedder

__all__ = ["MEMORY_METHODS", "Call", "Seeds", "arguments", "drive", "import_files", "operation_calls", "served",
           "shown"]

ABSENT_ID = "01J00000000000000000000000"  # a well-formed id no memory has
MEMORY_METHODS = ("for_agent", "tools")  # Memory's own methods with arguments, beside its operations
# Operations that may leave an agent too little for plausible ids: its seeds are read again after them.
DELETING = frozenset({"delete_all", "delete_memory", "delete_item", "forget_memory", "maintain", "compact",
                      "import_records", "import_from"})

EDGE_INTS = [0, -1, 1, 2, 3, 64, 1000, 1001, 100_000, 2**31, 2**63 - 1, *HUGE_INTS]
EDGE_FLOATS = [0.0, -0.0, 0.5, 1.0, 1.0000001, -1e-9, 1.5, 1e308, float("nan"), float("inf"), float("-inf")]
UTC = timezone.utc
EDGE_TIMES = [datetime.min, datetime.max, datetime(1970, 1, 1), datetime(2024, 5, 1, 10, tzinfo=UTC),
              datetime.max.replace(tzinfo=UTC), datetime.min.replace(tzinfo=timezone(timedelta(hours=14))),
              datetime(2024, 5, 1, tzinfo=timezone(timedelta(hours=-12)))]
TIME_TEXTS = ["2024-05-01T10:00:00Z", "2024-05-01", "0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-12:00",
              "9999-99-99", "7d", "yesterday", "", "2024-05-01T10:00:00+25:00"]


class Seeds:
    """What the database holds, for plausible arguments: the ids of an agent's facts and memories
    and its export. :meth:`refresh` seeds the agent again once calls have deleted most of it."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.records: list[dict[str, Any]] = []

    def pick(self) -> st.SearchStrategy[str]:
        return st.integers(min_value=0, max_value=10_000).map(
            lambda i: self.ids[i % len(self.ids)] if self.ids else ABSENT_ID)

    def refresh(self, mem: Any) -> None:
        """Read ``mem``'s ids (an embedded memory), first storing a few memories, a fact, a block and
        an experience when fewer than two memories are left."""
        if len(mem.list_memories(limit=2).items) < 2:
            mem.store_memories(["gardening: tomatoes need sun", "We chose SQLite"])
            mem.remember_facts("Kris lives in Lisbon.")
            mem.set_memory_block("human", "Name: Kris", char_limit=500)
            mem.record_experience("task", "Deployed the billing fix", context={"userId": "u1"})
        self.ids = [c.id for c in mem.list_memories(limit=50).items]
        self.records = [dict(record) for record in mem.export_records()][:4]

    @staticmethod
    def settle(mem: Any) -> Path:
        """Write what recalls queued behind their answers (:mod:`hippo.stores.retrievals`), so that
        the database holds every write of the calls made so far; the database file."""
        mem.store.retrievals.flush()
        return Path(mem.store.location)

    def after(self, operation: str, mem: Any) -> None:
        """Seed again if ``operation`` (which succeeded) may have deleted what the seeds name."""
        if operation in DELETING:
            self.refresh(mem)


def _messages() -> st.SearchStrategy[Any]:
    message = st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "assistant", "tool", "system"]),
         "content": st.one_of(st.sampled_from(["I moved to Lisbon.", "We chose SQLite", "ok"]), texts)},
        optional={"timestamp": st.sampled_from(TIME_TEXTS), "id": texts, "name": texts})
    return st.lists(st.one_of(message, message, st.dictionaries(texts, values, max_size=3)), max_size=4)


# Plausible values by parameter name: what a caller who read the docs would pass.
PLAUSIBLE: dict[str, Callable[[Seeds, Path], st.SearchStrategy[Any]]] = {
    "chunk_id": lambda s, _: s.pick(), "fact_id": lambda s, _: s.pick(), "cursor": lambda s, _: s.pick(),
    "key": lambda s, _: st.sampled_from(["human", "persona", "notes", "k1", "k2"]),
    "kind": lambda s, _: st.sampled_from(["fact", "memory", ["fact", "memory"]]),
    "sort": lambda s, _: st.sampled_from(["newest", "strength", "last_access", "feedback"]),
    "type": lambda s, _: st.sampled_from(["task", "conversation", "error", "decision", "insight"]),
    "types": lambda s, _: st.sampled_from(["task", ["task", "error"]]),
    "session_id": lambda s, _: st.sampled_from(["s1", "s2"]),
    "source": lambda s, _: st.sampled_from(["agent", "migration"]),
    "format": lambda s, _: st.sampled_from(["mem0", "letta", "markdown", "mcp-memory"]),
    "messages": lambda s, _: _messages(), "items": lambda s, _: _messages(),
    "config": lambda s, _: st.sampled_from([{}, {"sparse_threshold": 0.2}, {"decayRates": {"task": 0.1}},
                                            {"log_file": "x.log"}]),
    "path": lambda s, root: st.sampled_from([str(p) for p in paths(root)]),
    "text": lambda s, _: st.sampled_from(["Kris lives in Lisbon.", [{"text": "Kris likes tea"}]]),
    "tags": lambda s, _: st.sampled_from([["garden"], ["a", "b"], []]),
    "records": lambda s, _: st.builds(lambda: list(s.records)),
    "wording": lambda s, _: st.sampled_from(["Kris lives in Lisbon.", "Kris lives in Porto."]),
    "prefix": lambda s, _: st.sampled_from(["", "al", "bob"]),
    "agent_id": lambda s, _: st.sampled_from(["bob", "alice", "user:kris"]),
}


def _integers() -> st.SearchStrategy[int]:
    return st.one_of(st.sampled_from(EDGE_INTS), st.integers(min_value=-3, max_value=1100))


def _floats() -> st.SearchStrategy[float]:
    return st.one_of(st.sampled_from(EDGE_FLOATS), st.floats(), st.integers(min_value=-1, max_value=2))


def _datetimes() -> st.SearchStrategy[datetime]:
    return st.one_of(st.sampled_from(EDGE_TIMES), st.datetimes(timezones=st.sampled_from([UTC, None])))


def typed(tp: Any, seeds: Seeds, root: Path) -> st.SearchStrategy[Any]:
    """Values of type ``tp``, its edge values among them; a container's items of the right type
    or, now and then, of a wrong one."""
    origin, args = get_origin(tp), get_args(tp)
    if tp is Any:
        return values
    if origin in (Union, types.UnionType):
        return st.one_of(*[typed(a, seeds, root) for a in args])
    if tp is type(None):
        return st.none()
    if origin is Literal:
        return st.sampled_from(args)
    if tp is bool:
        return st.booleans()
    if tp is int:
        return _integers()
    if tp is float:
        return _floats()
    if tp is str:
        return st.one_of(st.sampled_from(TRICKY_TEXT + TIME_TEXTS[:1]), texts)
    if tp is datetime:
        return _datetimes()
    if origin is os.PathLike:
        return st.sampled_from(paths(root))
    if origin is abc.Callable:
        return st.just(_progress)
    if origin in (abc.Mapping, dict):
        return st.dictionaries(st.one_of(st.sampled_from(["tags", "k", "source", "_item_key"]), texts),
                               st.one_of(typed(args[1], seeds, root), nasty) if args else values, max_size=4)
    if origin in (abc.Sequence, abc.Iterable, list, tuple):
        item = typed(args[0], seeds, root) if args else values
        return st.one_of(st.lists(item, max_size=4), st.lists(st.one_of(item, nasty), min_size=1, max_size=3))
    if dataclasses.is_dataclass(tp):
        hints = typing.get_type_hints(tp)
        fields = {f.name: argument(f.name, hints[f.name], seeds, root) for f in dataclasses.fields(tp)}
        return st.builds(tp, **fields)
    raise AssertionError(f"no strategy for {tp!r}: teach typed() this type")


def _progress(done: int, total: int) -> None:
    """A progress callback that does nothing."""


def argument(name: str, tp: Any, seeds: Seeds, root: Path) -> st.SearchStrategy[Any]:
    """One parameter's values: plausible (by its name), of its type (edge values first), or of
    any other type."""
    right = typed(tp, seeds, root)
    plausible = PLAUSIBLE[name](seeds, root) if name in PLAUSIBLE else right
    # Drawn by a share of its own: hypothesis's one_of leans on its first branch.
    return st.integers(min_value=0, max_value=99).flatmap(
        lambda share: plausible if share < 50 else right if share < 85 else nasty)


def _parameters(operation: str) -> tuple[inspect.Signature, dict[str, Any]]:
    """An operation's signature (without ``self``) and its parameters' types: one of ``OPERATIONS``,
    or another public method of ``Memory`` that takes arguments (:data:`MEMORY_METHODS`)."""
    if operation in MEMORY_METHODS:
        method = getattr(Memory, operation)
        full = inspect.signature(method)
        return full.replace(parameters=list(full.parameters.values())[1:]), typing.get_type_hints(method)
    return wire.signature(operation), wire.parameter_types(operation)


def arguments(operation: str, seeds: Seeds, root: Path) -> st.SearchStrategy[dict[str, Any]]:
    """Keyword arguments for ``operation``: every required parameter, each optional one or not."""
    signature, hints = _parameters(operation)
    required, optional = {}, {}
    for name, parameter in signature.parameters.items():
        strategy = argument(name, hints.get(name, Any), seeds, root)
        (required if parameter.default is parameter.empty else optional)[name] = strategy
    return st.fixed_dictionaries(required, optional=optional)


@dataclasses.dataclass(frozen=True)
class Call:
    """An operation's name and its keyword arguments, shown short (hypothesis's printer follows
    3,000 levels of nesting into a RecursionError that hides the failure)."""

    name: str
    kwargs: dict[str, Any]

    def __repr__(self) -> str:
        return f"{self.name}({shown(self.kwargs)})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))


def operation_calls(names: typing.Iterable[str], seeds: Seeds, root: Path) -> st.SearchStrategy[Call]:
    """Calls of the operations ``names``, with their arguments, the operations taken about evenly:
    a wide number picks one (``one_of`` over them gave the first few most calls, and those without
    arguments one call in 2,000: hypothesis runs an input once, and they have one input; with the
    number, such a call is another input, and meets another state of the database)."""
    calls = {name: st.builds(Call, st.just(name), arguments(name, seeds, root)) for name in names}
    order = sorted(calls)
    return st.integers(min_value=0, max_value=2**32).flatmap(lambda n: calls[order[n % len(order)]])


def paths(root: Path) -> list[Path]:
    """What ``import_from``'s ``path`` draws from (:func:`import_files` writes them) and a missing file."""
    return sorted(root.iterdir()) + [root / "missing.json"]


def import_files(root: Path) -> None:
    """Files for ``import_from``: one of each format hippo reads, files that are none, a directory."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "mem0.json").write_text('{"results": [{"id": "m1", "memory": "Kris likes tea", "user_id": "u1"}]}')
    (root / "notes.md").write_text("# Notes\n\nKris lives in Lisbon.\n")
    (root / "memory.jsonl").write_text('{"type": "entity", "name": "Kris", "entityType": "person", '
                                       '"observations": ["likes tea"]}\n')
    (root / "garbage.json").write_bytes(b"\xff\xfe{[\x00")
    (root / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (root / "empty.json").write_text("")
    (root / "a directory").mkdir(exist_ok=True)


def drive(names: typing.Iterable[str], seeds: Seeds, root: Path, calls: int,
          each: Callable[[str, dict[str, Any]], None]) -> Counter[str]:
    """``calls`` generated calls of the operations ``names``, each handed to ``each(name, kwargs)``;
    how many calls of each operation were made."""
    made: Counter[str] = Counter()

    @settings(max_examples=calls, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(call=operation_calls(names, seeds, root))
    def run(call: Call) -> None:
        each(call.name, call.kwargs)
        made[call.name] += 1

    run()
    return made


def shown(value: Any) -> str:
    """A value for a failure message: cut short, and something even when it has no repr (4,400
    digits, 3,000 levels)."""
    try:
        return repr(value)[:400]
    except (ValueError, RecursionError):
        return f"a {type(value).__name__} without a repr"


@contextmanager
def served(tmp_path: Path) -> Iterator[tuple[str, Any, Seeds]]:
    """A real ``hippo serve`` on loopback over a seeded database (``fuzz.db``): its URL, the embedded
    memory of agent ``alice`` (the one the fuzzers call), and that agent's seeds."""
    from hippo.interfaces.http.server import BackgroundServer

    db = tmp_path / "fuzz.db"
    base = hippo.open(db, agent_id="default", embedder=FakeEmbedder())
    hippo.create_messages_table(db)
    alice = base.for_agent("alice")
    import_files(tmp_path / "files")
    seeds = Seeds()
    seeds.refresh(alice)
    with BackgroundServer(base) as url:
        yield url, alice, seeds
