"""A new text leaves no trace of the old (docs/guide/security.md, issue 46): every operation that
replaces or removes text, other than the forgets of ``test_forget_matrix``, leaves no byte of the
old text in any file of the database once it returns: SQLite's file, its WAL and its shared memory
(read raw); PostgreSQL's relation files after ``scrub``, which a rewrite marks as needed."""

from __future__ import annotations

from typing import Any, Callable

import pytest
from traces import SECRET, occurrences, total

SAID = f"The locker at the climbing gym opens with {SECRET}."
TOOL_OUTPUT = {"type": "function_call_output", "call_id": "c1", "output": f"locker code: {SECRET}"}


def _set_block(mem: Any) -> Callable[[], object]:
    mem.set_memory_block("human", SAID)
    return lambda: mem.set_memory_block("human", "nothing")


def _empty_block(mem: Any) -> Callable[[], object]:
    mem.set_memory_block("human", SAID)
    return lambda: mem.set_memory_block("human", "")


def _replace_in_block(mem: Any) -> Callable[[], object]:
    mem.set_memory_block("human", f"Likes green tea.\n{SAID}")
    mem.append_memory_block("human", "Climbs on Tuesdays.")
    return lambda: mem.replace_memory_block("human", SAID, "The locker code is at the desk.")


def _put_item_again(mem: Any) -> Callable[[], object]:
    mem.put_item("gym/locker", SAID)
    return lambda: mem.put_item("gym/locker", "The locker code is at the desk.")


def _item_metadata(mem: Any) -> Callable[[], object]:
    mem.put_item("gym/locker", "The locker has a code.", metadata={"code": SECRET})
    return lambda: mem.put_item("gym/locker", "The locker has a code.", metadata={"code": "at the desk"})


def _delete_item(mem: Any) -> Callable[[], object]:
    mem.put_item("gym/locker", SAID)
    return lambda: mem.delete_item("gym/locker")


def _update_memory(mem: Any) -> Callable[[], object]:
    chunk_id = mem.store_memory(SAID).id
    return lambda: mem.update_memory(chunk_id, content="The locker code is at the desk.")


def _update_metadata(mem: Any) -> Callable[[], object]:
    chunk_id = mem.store_memory("The locker has a code.", metadata={"code": SECRET, "tags": [SECRET]}).id
    return lambda: mem.update_metadata(chunk_id, {"code": "at the desk", "tags": ["gym"]})


def _pop_session_item(mem: Any) -> Callable[[], object]:
    mem.add_session_items("gym", [{"role": "user", "content": "What opens my locker?"}, TOOL_OUTPUT])
    return lambda: mem.pop_session_item("gym")


def _clear_session_items(mem: Any) -> Callable[[], object]:
    mem.add_session_items("gym", [{"role": "user", "content": "What opens my locker?"}, TOOL_OUTPUT])
    return lambda: mem.clear_session_items("gym")


CASES: dict[str, Callable[[Any], Callable[[], object]]] = {
    "set a block": _set_block, "empty a block": _empty_block, "replace in a block": _replace_in_block,
    "put an item again": _put_item_again, "new metadata for an item": _item_metadata, "delete an item": _delete_item,
    "update a memory": _update_memory, "update metadata": _update_metadata, "pop a session item": _pop_session_item,
    "clear a session": _clear_session_items,
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_replaced_or_removed_text_leaves_every_file_when_the_call_returns(make_mem, db, case):
    mem = make_mem("alice")
    mem.store_memories([f"Gardening note {i}: tomatoes need sun" for i in range(5)])
    remove = CASES[case](mem)
    assert total(occurrences(db)) > 0  # the premise: the old text is in the files
    remove()
    if db.startswith("postgresql://"):
        assert mem.scrub() is None  # PostgreSQL keeps a rewritten row's bytes until hippo scrub
    found = {k: v for k, v in occurrences(db).items() if v}
    assert not found, found


def test_an_append_or_the_same_text_again_keeps_the_text_and_scrubs_nothing(make_mem, db):
    """Nothing is removed: the old text is all in the new one (no checkpoint needed, none made)."""
    mem = make_mem("alice")
    mem.set_memory_block("human", SAID)
    mem.append_memory_block("human", "Climbs on Tuesdays.")
    mem.set_memory_block("human", mem.recall_memory_block("human"))
    assert mem.recall_memory_block("human") == f"{SAID}\nClimbs on Tuesdays."
    assert total(occurrences(db)) > 0
