"""How a facade offers its capabilities' operations: each one written once, on its capability.

``Memory`` is composed of capability objects (raw memories, facts, recall, blocks, ...). A line
``recall_memories = Operation(Recaller.recall_memories)`` in its class body makes
``mem.recall_memories(...)`` the method of the memory's own ``Recaller``, with that method's
signature (type checkers see it: the descriptor is generic over the method's parameters) and
docstring. ``AsyncOperation`` does the same for ``AsyncMemory``, whose calls run the one sync
implementation in a worker thread, so the event loop never waits on the database or a model.

A facade says which object holds an operation's capability through one public method,
``capability(method)``.

Every call opens the audit trail's scope (:func:`hippo.core.ports.audit.operation`) with the
operation's public name and the facade's clock: whatever the call writes is recorded under that
name, whichever capability or store method does the writing (the store appends the record in the
write's own transaction, ``stores/audit.py``).
"""

from __future__ import annotations

import functools
from typing import Any, Awaitable, Callable, Concatenate, Generic, ParamSpec, Protocol, TypeVar, overload

from hippo.core.ports.audit import operation

__all__ = ["AsyncOperation", "Composed", "Operation", "owner_name"]

P = ParamSpec("P")
R = TypeVar("R")
C = TypeVar("C")


class Composed(Protocol):
    def capability(self, method: Callable[..., Any]) -> object:
        """The object of this facade whose class defines ``method``."""


def owner_name(method: Callable[..., Any]) -> str:
    """The qualified name of the class that defines ``method`` (``Recaller`` for ``Recaller.recall_memories``)."""
    return method.__qualname__.rpartition(".")[0]


class _Delegate(Generic[C, P, R]):
    def __init__(self, method: Callable[Concatenate[C, P], R]) -> None:
        self.method = method
        self.__doc__ = method.__doc__
        self.__wrapped__ = method  # inspect.signature and help() follow it

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def bound(self, obj: Composed) -> Callable[P, R]:
        """The method bound to the object of ``obj`` that holds its capability, run inside the audit
        scope of this operation (its name, the facade's clock)."""
        method = self.method.__get__(obj.capability(self.method))
        name, clock = self.name, getattr(getattr(obj, "sync", obj), "now", None)  # AsyncMemory's: its sync one

        @functools.wraps(method)
        def call(*args: Any, **kwargs: Any) -> Any:
            with operation(name, clock=clock):
                return method(*args, **kwargs)

        return call


class Operation(_Delegate[C, P, R]):
    """A facade's method that is a capability's method (see the module's docstring)."""

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> "Operation[C, P, R]": ...
    @overload
    def __get__(self, obj: Composed, owner: type | None = None) -> Callable[P, R]: ...

    def __get__(self, obj: Composed | None, owner: type | None = None) -> Any:
        return self if obj is None else self.bound(obj)


class AsyncOperation(_Delegate[C, P, R]):
    """An async facade's coroutine that runs a capability's method in a worker thread."""

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> "AsyncOperation[C, P, R]": ...
    @overload
    def __get__(self, obj: Composed, owner: type | None = None) -> Callable[P, Awaitable[R]]: ...

    def __get__(self, obj: Composed | None, owner: type | None = None) -> Any:
        if obj is None:
            return self
        bound = self.bound(obj)

        @functools.wraps(bound)
        async def call(*args: Any, **kwargs: Any) -> Any:
            import asyncio  # here: a synchronous Memory (the CLI's) never loads it, 17 ms

            return await asyncio.to_thread(bound, *args, **kwargs)

        return call
