"""`import hippo` is light: no model runtime, SDK or web framework, and no file created."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

HEAVY = [
    "onnxruntime", "torch", "transformers", "sentence_transformers", "tokenizers",
    "httpx", "openai", "anthropic", "fastapi", "starlette",
]


def _run(code: str, cwd) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIPPO_")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, env=env, capture_output=True, text=True, timeout=60,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_loads_nothing_heavy_and_writes_nothing(tmp_path):
    work = tmp_path / "cwd"
    work.mkdir()
    result = _run(
        f"""
        import json, sys
        import hippo
        # Touch the public names that are plain attributes.
        hippo.InvalidInput, hippo.Recall, hippo.__version__
        heavy = {HEAVY!r}
        print(json.dumps({{"loaded": [m for m in heavy if m in sys.modules or any(
            k.startswith(m + ".") for k in sys.modules)]}}))
        """,
        work,
    )
    assert result["loaded"] == []
    assert list(work.iterdir()) == []


def test_fake_embedder_memory_loads_nothing_heavy(tmp_path):
    """Opening a memory with the fake embedder needs no model runtime or HTTP client either."""
    work = tmp_path / "cwd"
    work.mkdir()
    result = _run(
        f"""
        import json, sys
        import hippo
        with hippo.open("mem.db", agent_id="a", embedder="fake") as mem:
            mem.store_memory("hello world")
            mem.recall_memories("hello")
        heavy = {HEAVY!r}
        print(json.dumps({{"loaded": [m for m in heavy if m in sys.modules]}}))
        """,
        work,
    )
    assert result["loaded"] == []
    assert {p.name for p in work.iterdir()} <= {"mem.db", "mem.db-wal", "mem.db-shm"}
