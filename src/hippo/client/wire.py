"""What travels between :func:`hippo.connect` and ``hippo serve``: which of ``Memory``'s operations,
and the one codec both ends use.

An operation is called as ``POST /v1/agents/{agent_id}/operations/{name}`` with its keyword
arguments, named as in Python (``{"arguments": {...}}``), and answers ``{"result": ...}``. The
result is written by :func:`encode` (hippo's result types as their ``to_dict()`` form: datetimes
as ISO 8601, sets as sorted lists) and read back by :func:`decode`, which rebuilds the same types
from the operation's own return annotation: a ``Recall`` of ``Hit`` s of ``Chunk`` s with their
datetimes, a list, ``None``. The arguments go the same way in the other direction: the client
encodes them, the server decodes them by the parameters' annotations (a mapping where the
operation takes a ``MemoryInput`` becomes one) and the core validates them as it validates any call.

``Memory`` names the operations once; every one of them is remote except those in
:data:`NOT_REMOTE`, each with the reason. A test checks that every operation is in one of the two.
"""

from __future__ import annotations

import collections.abc as abc
import dataclasses
import inspect
import numbers
import types
import typing
from datetime import datetime
from functools import cache
from typing import Any, Callable, Iterator, Literal, Mapping, Union, get_args, get_origin

from typing_extensions import is_typeddict  # typing's misses typing_extensions' TypedDicts on Python 3.11

from hippo.core.memory import OPERATIONS, Memory
from hippo.errors import HippoError, InvalidInput, MissingDependency, ProviderError, shown

__all__ = ["ERRORS", "HEAVY", "LOCAL_ARGUMENTS", "NOT_REMOTE", "REMOTE", "decode", "encode", "error_from",
           "operation", "parameter_types", "result_type", "signature"]

# Memory's operations that no request reaches, and why: what is database-wide is the operator's
# (a key for one agent never learns of, or acts on, another agent), and a path names the server's disk.
NOT_REMOTE: dict[str, str] = {
    "agent_ids": "database-wide: it lists the database's other agents",
    "holds_nothing": "database-wide: it tells whether any agent has written",
    "agent_of": "database-wide: it names the agent that holds an id, whichever agent that is",
    "short_term_agents": "database-wide: the agents with a short-term buffer (hippo serve's own schedules read it)",
    "pending_agents": "database-wide: the agents with observed messages waiting (hippo serve's own schedules)",
    "maintain": "database-wide: it archives across every agent (hippo serve runs it on prune_schedule)",
    "scrub": "database-wide: it rewrites the whole database (an operator's step: hippo scrub)",
    "import_from": "it reads a file on the server's disk, and a path never comes from a request",
    "verify_audit": "it can check every agent's audit trail (an operator's step: hippo audit verify --all)",
    "trim_audit": "it removes audit records: the operator's retention setting (hippo audit trim)",
}

# Arguments that stay in the caller's process: a progress callback cannot be sent.
LOCAL_ARGUMENTS = frozenset({"progress"})

# Operations that run a batch through the embedder or the model: the server runs them in its
# bounded pool of heavy work, as it does its capture and compaction routes.
HEAVY = frozenset({"process_pending", "compact", "reembed", "import_records"})

REMOTE: tuple[str, ...] = tuple(name for name in OPERATIONS if name not in NOT_REMOTE)


def operation(name: str) -> Callable[..., Any]:
    """The capability method behind ``Memory.<name>`` (its signature and annotations)."""
    method: Callable[..., Any] = vars(Memory)[name].method
    return method


@cache
def signature(name: str) -> inspect.Signature:
    """``Memory.<name>``'s signature as a caller sees it (without ``self``)."""
    full = inspect.signature(operation(name))
    return full.replace(parameters=list(full.parameters.values())[1:])


@cache
def _annotations(name: str) -> dict[str, Any]:
    """The operation's annotations resolved; a type imported only for type checkers (compaction's
    ``CompactionConfig``) reads as ``Any``: the core checks that value itself."""
    stand_ins: dict[str, Any] = {}
    while True:
        try:
            return typing.get_type_hints(operation(name), localns=stand_ins)
        except NameError as exc:
            if exc.name is None or exc.name in stand_ins:
                raise
            stand_ins[exc.name] = Any


def result_type(name: str) -> Any:
    return _annotations(name).get("return", Any)


def parameter_types(name: str) -> dict[str, Any]:
    return {key: tp for key, tp in _annotations(name).items() if key != "return"}


# -- the codec --------------------------------------------------------------------------------


def encode(value: Any, where: str = "value", *, argument: bool = False) -> Any:
    """``value`` as JSON-ready data: a dataclass as its fields, a datetime in ISO 8601, a mapping
    with text keys, a set as a sorted list, any other collection or iterator as a list. Anything
    else is refused (InvalidInput), so a call with a value JSON cannot carry fails before it is
    sent. ``argument``: a set is refused too, as the core refuses one where it takes a list."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, numbers.Integral):  # a numpy integer or float in a result
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, datetime):
        return value.isoformat()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: encode(getattr(value, f.name), f"{where}.{f.name}", argument=argument)
                for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        if not all(isinstance(key, str) for key in value):
            raise InvalidInput(f"{where}: a mapping sent over HTTP needs text keys, got {shown(list(value))}")
        return {key: encode(item, f"{where}.{key}", argument=argument) for key, item in value.items()}
    if isinstance(value, (set, frozenset)) and not argument:
        return sorted((encode(item, where) for item in value), key=repr)
    if isinstance(value, abc.Iterable) and not isinstance(value, (set, frozenset, bytes, bytearray, memoryview)):
        return [encode(item, f"{where}[{i}]", argument=argument) for i, item in enumerate(value)]
    raise InvalidInput(f"{where}: a {type(value).__name__} cannot be sent over HTTP")


def decode(tp: Any, value: Any, *, strict: bool = False) -> Any:
    """``value`` (JSON data) rebuilt as ``tp`` says: dataclasses, datetimes, lists, sets,
    iterators, mappings, ``None``. ``strict`` (the server reading a request): a mapping with a key
    the dataclass does not have is refused (InvalidInput); without it (the client reading an answer)
    such a key, from a newer server, is left out."""
    if value is None or tp is Any:
        return value
    origin, args = get_origin(tp), get_args(tp)
    if origin in (Union, types.UnionType):
        return decode(_member([a for a in args if a is not type(None)], value), value, strict=strict)
    if origin is Literal or tp in (str, int, float, bool):
        return value
    if tp is datetime and isinstance(value, str):
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            if strict:
                raise InvalidInput(f"not a date and time in ISO 8601: {shown(value)}") from None
            raise
    if isinstance(tp, type) and isinstance(value, dict):
        if dataclasses.is_dataclass(tp):
            return _dataclass(tp, value, strict)
        if is_typeddict(tp):
            hints = typing.get_type_hints(tp)
            return {key: decode(hints.get(key, Any), item, strict=strict) for key, item in value.items()}
    if origin in (dict, abc.Mapping) and isinstance(value, dict):
        item_type = args[1] if len(args) == 2 else Any
        return {key: decode(item_type, item, strict=strict) for key, item in value.items()}
    if origin in _SEQUENCES and isinstance(value, list):
        item_type = args[0] if args else Any
        items = [decode(item_type, item, strict=strict) for item in value]
        return _SEQUENCES[origin](items)
    return value


_SEQUENCES: dict[Any, Callable[[list[Any]], Any]] = {
    list: list, abc.Sequence: list, abc.Iterable: list, abc.Collection: list,
    tuple: tuple, frozenset: frozenset, set: set, abc.Set: frozenset, abc.Iterator: iter,
}


def _kind(tp: Any) -> str:
    """The JSON kind a member of a union is written as."""
    origin = get_origin(tp) or tp
    if origin is Literal:
        return type(get_args(tp)[0]).__name__
    if tp in (str, datetime):
        return "str"
    if tp is bool:
        return "bool"
    if tp in (int, float):
        return "number"
    if origin in _SEQUENCES:
        return "list"
    if origin in (dict, abc.Mapping) or dataclasses.is_dataclass(tp) or is_typeddict(tp):
        return "dict"
    return "any"


def _member(members: list[Any], value: Any) -> Any:
    """The member of a union that ``value``'s JSON kind was written from (``str`` before
    ``datetime``: an argument given as text stays text, for the core to parse)."""
    kind = {str: "str", bool: "bool", int: "number", float: "number", list: "list", dict: "dict"}.get(type(value))
    return next((m for m in sorted(members, key=lambda m: m is not str) if _kind(m) == kind), Any)


def _dataclass(tp: type, value: dict[str, Any], strict: bool) -> Any:
    hints = typing.get_type_hints(tp)
    known = {f.name for f in dataclasses.fields(tp) if f.init}
    unknown = sorted(set(value) - known)
    if unknown and strict:
        raise InvalidInput(f"{tp.__name__} has no field {', '.join(map(shown, unknown))}; its fields: "
                           f"{', '.join(sorted(known))}")
    try:
        return tp(**{key: decode(hints.get(key, Any), item, strict=strict) for key, item in value.items()
                     if key in known})
    except TypeError as exc:  # a required field missing
        raise InvalidInput(f"{tp.__name__}: {exc}") from None


# -- errors -----------------------------------------------------------------------------------


def _taxonomy(cls: type[HippoError]) -> Iterator[type[HippoError]]:
    yield cls
    for sub in cls.__subclasses__():
        yield from _taxonomy(sub)


# hippo's errors by the code the server's envelope carries (every class of hippo.errors, the
# refusals of a key too: Unauthorized, Forbidden); the HTTP layer's own refusals map to the error
# an embedded memory raises for the same cause.
ERRORS: dict[str, type[HippoError]] = {
    cls.code: cls for cls in _taxonomy(HippoError) if cls.__module__ == "hippo.errors"}
HTTP_CODES: dict[str, type[HippoError]] = {
    "invalid_request": InvalidInput,  # the arguments do not fit the operation's signature
    "too_large": InvalidInput,  # the request is over the server's body limit
}


def error_from(status: int, body: Any) -> HippoError:
    """The typed error an error envelope (or, from something in between, any answer) stands for."""
    error = body.get("error") if isinstance(body, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    if not isinstance(code, str) or not isinstance(message, str):
        code, message = f"http_{status}", f"the server answered {status} without hippo's error envelope"
    cls = ERRORS.get(code) or HTTP_CODES.get(code) or HippoError
    found = cls.__new__(cls)
    HippoError.__init__(found, message)
    if isinstance(found, ProviderError):
        found.retryable = False  # the envelope does not say; a 503 may be tried again
    if isinstance(found, MissingDependency):
        found.package, found.extra = "", ""  # named in the message
    if cls is not ERRORS.get(code):
        found.code = code  # the server's own code, kept (internal, too_large, ...)
    return found
