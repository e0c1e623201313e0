"""Property-based fuzz of the Python API: 2,000 generated calls over every operation ``Memory``
names (``OPERATIONS``, the database-wide ones too) and its ``for_agent`` and ``tools``, with
arguments drawn from each operation's own type hints (:mod:`typed`): right types with bad values,
edge values, wrong types. Each call returns or raises a hippo error, nothing else, and a call that
raises leaves the database as it was."""

from __future__ import annotations

from typing import Any

from nasty import fingerprint, hippo_error_or_none
from typed import MEMORY_METHODS, Seeds, drive, import_files, shown

import hippo
from hippo.core.memory import OPERATIONS
from hippo.providers.fake import FakeEmbedder

CALLS = 2_200  # about 32 calls an operation: each gets at least 5


def test_generated_calls_raise_only_hippo_errors_and_rejections_change_nothing(tmp_path):
    db = tmp_path / "fuzz.db"
    mem = hippo.open(db, agent_id="alice", embedder=FakeEmbedder())
    hippo.create_messages_table(db)
    import_files(tmp_path / "files")
    seeds = Seeds()
    seeds.refresh(mem)

    def each(name: str, kwargs: dict[str, Any]) -> None:
        before = fingerprint(seeds.settle(mem))
        error = None
        try:
            result = getattr(mem, name)(**kwargs)
            if name == "export_records":
                list(result)  # a generator: its checks run as it is read
        except Exception as exc:  # noqa: BLE001 - the property: nothing but hippo errors
            error = exc
        hippo_error_or_none(error)
        if error is not None:
            assert fingerprint(seeds.settle(mem)) == before, f"{name}({shown(kwargs)}) raised {error!r} but wrote"[:600]
        else:
            seeds.after(name, mem)

    made = drive(OPERATIONS + MEMORY_METHODS, seeds, tmp_path / "files", CALLS, each)
    mem.close()
    assert sum(made.values()) >= CALLS and min(made.values()) >= 5, made
    assert set(made) == set(OPERATIONS + MEMORY_METHODS)
