"""The SQLite store shared by several processes: vector matrices refresh, no write is lost."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

import hippo

pytestmark = pytest.mark.sqlite_only  # SQLite's own files and schema


def _run(code: str) -> None:
    subprocess.run([sys.executable, "-c", textwrap.dedent(code)], check=True, timeout=120)


def test_recall_sees_another_process_writes_and_deletes(tmp_path):
    path = tmp_path / "hippo.db"
    with hippo.open(path, agent_id="alice", embedder="fake") as mem:
        mem.store_memory("The staging cluster runs on three small nodes.")
        assert len(mem.recall_memories("staging cluster nodes", touch=False)) == 1  # matrix now loaded

        _run(f"""
            import hippo
            with hippo.open({str(path)!r}, agent_id="alice", embedder="fake") as other:
                other.store_memory("The production cluster runs on nine large nodes.")
        """)
        recall = mem.recall_memories("production cluster nodes", touch=False)
        assert any("production" in h.content and h.similarity is not None for h in recall)

        _run(f"""
            import hippo
            with hippo.open({str(path)!r}, agent_id="alice", embedder="fake") as other:
                other.forget_memory("The production cluster runs on nine large nodes.")
        """)
        recall = mem.recall_memories("production cluster nodes", touch=False)
        assert all("production" not in h.content for h in recall)


def test_concurrent_writers_lose_nothing(tmp_path):
    path = tmp_path / "hippo.db"
    hippo.open(path, agent_id="w", embedder="fake").close()  # migrate once up front
    writer = f"""
        import sys, hippo
        n = int(sys.argv[1])
        with hippo.open({str(path)!r}, agent_id="w", embedder="fake") as mem:
            for i in range(60):
                mem.store_memory(f"writer {{n}} note {{i}}")
                mem.store_memory("shared note every writer stores")
    """
    procs = [
        subprocess.Popen([sys.executable, "-c", textwrap.dedent(writer), str(n)], stderr=subprocess.PIPE)
        for n in range(4)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
    with hippo.open(path, agent_id="w", embedder="fake") as mem:
        conn = mem.store.db.conn
        assert conn.execute("SELECT count(*) FROM chunks WHERE agent_id = 'w'").fetchone()[0] == 4 * 60 + 1
        shared = conn.execute(
            "SELECT encounter_count FROM chunks WHERE content = 'shared note every writer stores'"
        ).fetchone()[0]
        assert shared == 4 * 60
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
