"""hippo.open_async: the one implementation as coroutines; many at once lose nothing.

The behaviour tests of Memory run against AsyncMemory too (the ``api`` parameter of
conftest's ``make_mem``); these are what only the async API has."""

from __future__ import annotations

import asyncio
import inspect

import hippo
from hippo.aio import ASYNC_OPERATIONS, AsyncMemory
from hippo.core.memory import Memory
from hippo.core.operation import Operation
from hippo.providers.fake import FakeEmbedder

# AsyncMemory has its own (backup and check: the whole database's, in a worker thread)
SYNC_ONLY = {"capability", "close", "for_agent", "now", "tools", "export_records", "backup", "check"}


def test_every_operation_of_memory_is_a_coroutine_with_its_signature(db):
    operations = {n for n, member in vars(Memory).items() if isinstance(member, Operation)}
    own = {n for n, f in inspect.getmembers(Memory, inspect.isfunction) if not n.startswith("_")}
    assert (operations | own) - SYNC_ONLY == set(ASYNC_OPERATIONS)
    amem = hippo.open_async(db, agent_id="alice", embedder=FakeEmbedder())
    try:
        for name in ASYNC_OPERATIONS:
            method, sync = getattr(amem, name), getattr(amem.sync, name)
            assert inspect.iscoroutinefunction(method)
            assert inspect.signature(method) == inspect.signature(sync)
            assert method.__doc__ == sync.__doc__
    finally:
        asyncio.run(amem.close())


def test_fifty_coroutines_storing_and_recalling_lose_nothing(db):
    async def main() -> None:
        async with hippo.open_async(db, agent_id="alice", embedder=FakeEmbedder()) as mem:
            bob = mem.for_agent("bob")

            async def worker(n: int) -> None:
                for i in range(5):
                    who = bob if n % 2 else mem
                    stored = await who.store_memory(f"coroutine {n} note {i} about kayak{n}x{i}")
                    hits = await who.recall_memories(f"kayak{n}x{i}", limit=3, touch=True)
                    assert stored.id in [h.id for h in hits]

            await asyncio.gather(*(worker(n) for n in range(50)))
            assert (await mem.stats()).memories == 125 and (await bob.stats()).memories == 125
            alice_texts = [r["content"] for r in await mem.export_records() if r.get("type") == "chunk"]
            assert len(alice_texts) == 125  # no agent saw another's writes
            assert all(int(t.split()[1]) % 2 == 0 for t in alice_texts)

    asyncio.run(main())


def test_backup_and_check_are_coroutines_over_the_whole_database(tmp_path):
    async def main() -> None:
        async with hippo.open_async(str(tmp_path / "live.db"), agent_id="alice", embedder=FakeEmbedder()) as mem:
            await mem.store_memory("The kayak club meets on Thursdays")
            made = await mem.backup(str(tmp_path / "copy.db"))
            report = await mem.check()
        assert made.bytes > 0 and report.ok
        async with hippo.open_async(str(tmp_path / "copy.db"), agent_id="alice", embedder=FakeEmbedder()) as copy:
            assert [h.content for h in await copy.recall_memories("kayak club")] == ["The kayak club meets on Thursdays"]

    asyncio.run(main())
