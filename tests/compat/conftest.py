"""mem0's API on hippo, over the test's database (SQLite or PostgreSQL), sync and async."""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Callable, Iterator

import pytest

from hippo.compat.mem0 import AsyncMemory, Memory


class AsyncView:
    """An ``AsyncMemory`` driven through its coroutines on one event loop in a thread of its own
    (as an application's loop would run them), seen as the sync ``Memory``."""

    _loop: asyncio.AbstractEventLoop | None = None

    def __init__(self, memory: AsyncMemory) -> None:
        self.memory = memory
        if AsyncView._loop is None:
            AsyncView._loop = asyncio.new_event_loop()
            threading.Thread(target=AsyncView._loop.run_forever, daemon=True, name="AsyncView loop").start()

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(self.memory, name)
        if name == "close":  # mem0's AsyncMemory.close is not a coroutine either
            return method
        assert asyncio.iscoroutinefunction(method), f"{name} is not a coroutine"

        def call(*args: Any, **kwargs: Any) -> Any:
            assert AsyncView._loop is not None
            return asyncio.run_coroutine_threadsafe(method(*args, **kwargs), AsyncView._loop).result(timeout=300)

        return call


@pytest.fixture(params=["sync", "async"])
def open_mem0(request: pytest.FixtureRequest, db: str, embedder: Any, clock: Any) -> Iterator[Callable[..., Any]]:
    """``open_mem0(llm=None)``: mem0's ``Memory`` over the test's database and fake embedder; under
    ``async``, an ``AsyncMemory`` driven through its coroutines."""
    opened: list[Any] = []

    def make(**options: Any) -> Any:
        options = {"embedder": embedder, "clock": clock, **options}
        memory: Any = Memory(db, **options) if request.param == "sync" else AsyncView(AsyncMemory(db, **options))
        opened.append(memory)
        return memory

    yield make
    for memory in opened:
        memory.close()
