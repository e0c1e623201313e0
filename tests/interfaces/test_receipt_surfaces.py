"""Forget receipts through every way in other than Python: the HTTP API (a delete by id, a forget,
a delete of everything, each answering with its receipt, and ``POST receipts/verify`` checking it
again, on both backends), ``hippo memories forget | delete | delete-all --receipt FILE`` and
``hippo receipts verify FILE`` (run as a separate process), the mem0 compatibility layer's deletes,
the forget tool and MCP. Each receipt verifies; a copy of the text planted after the forget makes
it fail and name the place ("memories")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import httpx
import pytest

import hippo
from hippo.providers.fake import FakeEmbedder

pytest.importorskip("fastapi")
pytest.importorskip("typer")
from typer.testing import CliRunner  # noqa: E402

from hippo.core.keys import create_key  # noqa: E402
from hippo.interfaces.cli.app import app  # noqa: E402
from hippo.interfaces.http.server import BackgroundServer  # noqa: E402

A = "/v1/agents/alice"
SECRET = "Zyzzogeton-Quibblefrump"
SAID = f"My locker at the climbing gym opens with the code {SECRET} every evening."
OTHER = "The spare key to the allotment shed hangs behind the blue door."
FILLER = [f"Gardening note {i}: tomatoes need sun and regular watering" for i in range(6)]
HIPPO = str(Path(sys.executable).with_name("hippo"))
NOW = datetime(2026, 11, 23, tzinfo=timezone.utc)


def _failed(check: dict[str, Any]) -> list[str]:
    return [c["place"] for c in check["checks"] if not c["ok"]]


# -- HTTP ------------------------------------------------------------------------------------------


def test_http_answers_each_delete_with_a_receipt_that_verifies(db, clock):
    """Delete by id, forget by description and delete-all, each with its receipt; on PostgreSQL
    the dead rows wait for a scrub, after which every receipt verifies; a planted copy fails it."""
    base = hippo.open(db, agent_id="alice", embedder=FakeEmbedder(), clock=clock)
    server = db.startswith("postgresql://")
    with BackgroundServer(base) as url, httpx.Client(base_url=url, timeout=30) as api:
        for text in FILLER:
            assert api.post(f"{A}/memories", json={"content": text}).status_code == 201
        one = api.post(f"{A}/memories", json={"content": SAID}).json()["id"]
        deleted = api.delete(f"{A}/memories/{one}", params={"receipt": "true"})
        assert deleted.status_code == 200, deleted.text
        by_id = deleted.json()["receipt"]
        assert [r["id"] for r in by_id["removed"]] == [one] and by_id["operation"] == "delete_memory"
        assert _failed(by_id) == (["dead rows"] if server else []) and SECRET not in json.dumps(by_id)

        api.post(f"{A}/memories", json={"content": f"Again: {SAID}"})
        forgot = api.post(f"{A}/forget", json={"description": SECRET, "receipt": True}).json()
        assert len(forgot["deleted"]) == 1 and forgot["receipt"]["operation"] == "forget_memory"
        assert api.post(f"{A}/forget", json={"description": SECRET, "preview": True}).json()["receipt"] is None
        assert api.delete(f"{A}/memories/{api.post(f'{A}/memories', json={'content': OTHER}).json()['id']}"
                          ).json()["receipt"] is None  # none unless asked

        erased = api.delete(f"{A}/memories", params={"confirm": "alice", "receipt": "true"}).json()
        assert erased["memories"] == len(FILLER) and erased["receipt"]["operation"] == "delete_all"
        if server:
            base.scrub()
        for receipt in (by_id, forgot["receipt"], erased["receipt"]):
            check = api.post(f"{A}/receipts/verify", json=receipt)
            assert check.status_code == 200, check.text
            assert check.json()["verified"] is True and check.json()["failed"] == [], check.json()

        api.post(f"{A}/memories", json={"content": f"Copied from a note: {SAID}"})  # planted back
        failing = api.post(f"{A}/receipts/verify", json=by_id).json()
        assert failing["verified"] is False and failing["failed"] == ["memories"]
        assert SECRET not in json.dumps(failing)


@pytest.fixture
def served(db_path, clock):
    """A server with keys on a SQLite file: alice's receipt of a delete, and keys for alice and bob."""
    base = hippo.open(db_path, agent_id="alice", embedder=FakeEmbedder(), clock=clock)
    alice, _ = create_key(base.store, ["alice"], now=NOW)
    bob, _ = create_key(base.store, ["bob"], now=NOW)
    with BackgroundServer(base) as url, httpx.Client(base_url=url, timeout=30) as api:
        api.headers["Authorization"] = f"Bearer {alice}"
        chunk = api.post(f"{A}/memories", json={"content": SAID}).json()["id"]
        receipt = api.delete(f"{A}/memories/{chunk}", params={"receipt": True}).json()["receipt"]
        yield api, receipt, bob


def test_http_refuses_a_malformed_receipt_and_another_agents(served):
    api, receipt, bob = served
    assert api.post(f"{A}/receipts/verify", json=receipt).json()["verified"] is True
    missing = api.post(f"{A}/receipts/verify", json={k: v for k, v in receipt.items() if k != "removed"})
    assert missing.status_code == 422 and missing.json()["error"]["code"] == "invalid_request"
    assert "removed" in missing.json()["error"]["message"]
    assert api.post(f"{A}/receipts/verify", content=b"not json", headers={"Content-Type": "application/json"}
                    ).status_code == 422
    bad_date = api.post(f"{A}/receipts/verify", json={**receipt, "issued_at": "last March"})
    assert bad_date.status_code == 400 and bad_date.json()["error"]["code"] == "invalid_input"
    altered = api.post(f"{A}/receipts/verify", json={**receipt, "counts": {"chunks": 2}}).json()
    assert altered["verified"] is False and altered["failed"] == ["signature"]
    # bob's key may not reach alice's agent; alice's receipt checked as bob's agent is refused
    refused = api.post(f"{A}/receipts/verify", json=receipt, headers={"Authorization": f"Bearer {bob}"})
    assert refused.status_code == 403
    as_bob = api.post("/v1/agents/bob/receipts/verify", json=receipt, headers={"Authorization": f"Bearer {bob}"})
    assert as_bob.status_code == 400 and "alice" in as_bob.json()["error"]["message"]
    assert api.post(f"{A}/receipts/verify", json=receipt, headers={"Authorization": ""}).status_code == 401
    assert api.delete(f"{A}/memories", params={"confirm": "alice", "receipt": "maybe"}).status_code == 422


# -- the command line ---------------------------------------------------------------------------


def _cli(db: Path, *args: str, input: str | None = None) -> Any:
    argv = ["--db", str(db), "--agent", "alice", "--embedder", "fake", *args]
    return CliRunner().invoke(app, argv, input=input, env={"COLUMNS": "200"})


def _verify(db: Path, receipt: Path | str, *extra: str, input: str | None = None) -> subprocess.CompletedProcess:
    """``hippo receipts verify`` in a process of its own (no --agent: the receipt's)."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "COLUMNS": "200"}
    env.pop("HIPPO_AGENT_ID", None)
    return subprocess.run([HIPPO, "--db", str(db), "--embedder", "fake", "receipts", "verify", str(receipt), *extra],
                          input=input, capture_output=True, text=True, env=env, timeout=120)


@pytest.fixture
def filled(db_path):
    with hippo.open(db_path, agent_id="alice", embedder=FakeEmbedder()) as mem:
        mem.store_memories(FILLER)
        ids = [mem.store_memory(SAID).id, mem.store_memory(OTHER).id]
    return db_path, ids


def test_cli_forget_writes_a_receipt_that_verifies_in_another_process(filled, tmp_path):
    db, (said, _) = filled
    out = tmp_path / "forget.json"
    done = _cli(db, "memories", "forget", SECRET, "--yes", "--receipt", str(out))
    assert done.exit_code == 0, done.output
    assert "receipt written to" in done.stderr
    receipt = json.loads(out.read_text())
    assert [r["id"] for r in receipt["removed"]] == [said] and receipt["agent_id"] == "alice"
    assert oct(out.stat().st_mode & 0o777) == "0o600"
    checked = _verify(db, out)
    assert checked.returncode == 0, checked.stderr
    lines = checked.stdout.splitlines()
    assert lines[0].startswith("receipt of forget_memory by agent 'alice'") and lines[-1] == "verified"
    assert any(line.startswith("ok") and " memories " in line for line in lines)
    assert not [line for line in lines if line.startswith("FAILED")]

    with hippo.open(db, agent_id="alice", embedder=FakeEmbedder()) as mem:
        mem.store_memory(f"Copied from a note: {SAID}")  # planted back
    again = _verify(db, out, "--json")
    assert again.returncode == 1 and "does not verify: memories" in again.stderr
    assert json.loads(again.stdout)["failed"] == ["memories"]
    piped = _verify(db, "-", input=out.read_text())
    assert piped.returncode == 1 and any(line.startswith("FAILED  memories") for line in piped.stdout.splitlines())


def test_cli_delete_and_delete_all_write_receipts_and_refuse_to_overwrite(filled, tmp_path):
    db, (said, other) = filled
    out = tmp_path / "delete.json"
    asked = _cli(db, "memories", "delete", said, "--receipt", str(out), input="n\n")
    assert asked.exit_code == 0 and "nothing deleted" in asked.stderr and not out.exists()
    done = _cli(db, "memories", "delete", said, "--receipt", str(out), input="y\n")
    assert done.exit_code == 0, done.output
    assert json.loads(out.read_text())["operation"] == "delete_memory"
    kept = out.read_text()
    refused = _cli(db, "memories", "delete", other, "--yes", "--receipt", str(out))
    assert refused.exit_code == 1 and "exists already" in refused.stderr and "--force" in refused.stderr
    with hippo.open(db, agent_id="alice", embedder=FakeEmbedder()) as mem:
        assert mem.get_memory(other).content == OTHER  # refused before anything was deleted
    assert out.read_text() == kept
    assert _verify(db, out).returncode == 0

    everything = tmp_path / "all.json"
    erased = _cli(db, "memories", "delete-all", "--yes", "--json", "--receipt", str(out), "--force")
    assert erased.exit_code == 0, erased.output
    assert json.loads(erased.stdout)["receipt_file"] == str(out)
    assert json.loads(out.read_text())["operation"] == "delete_all"
    assert _verify(db, out).returncode == 0
    preview = _cli(db, "memories", "forget", "tomatoes", "--preview", "--receipt", str(everything))
    assert preview.exit_code == 1 and "delete nothing" in preview.stderr and not everything.exists()


def test_cli_verify_says_what_is_wrong_with_a_file_that_is_no_receipt(filled, tmp_path):
    db, _ = filled
    broken = tmp_path / "broken.json"
    for text, said in (("{not json", "is not a receipt"), ('{"agent_id": "alice"}', "needs"), ("[1, 2]", "object")):
        broken.write_text(text)
        checked = _verify(db, broken)
        assert checked.returncode == 1 and said in checked.stderr, checked.stderr
        assert "Traceback" not in checked.stderr and checked.stderr.startswith("error: ")
    assert "No such file" in _verify(db, tmp_path / "absent.json").stderr


# -- mem0's deletes, the forget tool, MCP ----------------------------------------------------------


def test_mem0_deletes_return_receipts_that_verify(db_path):
    from hippo.compat.mem0 import Memory

    m = Memory(db_path, embedder=FakeEmbedder())
    try:
        one = m.add(SAID, user_id="alice", infer=False)["results"][0]["id"]
        m.add(OTHER, user_id="alice", infer=False)
        m.add(OTHER, user_id="alice", agent_id="helper", infer=False)
        assert m.delete(one) == {"message": "Memory deleted successfully!"}  # mem0's shape, unchanged
        two = m.add(f"Again: {SAID}", user_id="alice", infer=False)["results"][0]["id"]
        gone = m.delete(two, receipt=True)
        assert gone["message"] == "Memory deleted successfully!" and gone["receipt"]["removed"][0]["id"] == two
        erased = m.delete_all(user_id="alice", receipt=True)
        assert erased["message"] == "Memories deleted successfully!" and len(erased["receipts"]) == 2
        with pytest.raises(hippo.InvalidInput, match="receipt"):
            m.delete_all(user_id="alice", receipt="yes")
    finally:
        m.close()
    for receipt in [gone["receipt"], *erased["receipts"]]:
        with hippo.open(db_path, agent_id=receipt["agent_id"], embedder=FakeEmbedder()) as mem:
            check = mem.verify_receipt(receipt)
            assert check.verified, check.checks


def test_the_forget_tool_returns_a_receipt(db_path):
    with hippo.open(db_path, agent_id="alice", embedder=FakeEmbedder()) as mem:
        mem.store_memories([*FILLER, SAID])
        tools = mem.tools()
        assert "receipt" in tools["forget_memory"].parameters["properties"]
        assert "receipt" not in tools.call("forget_memory", {"description": "tomatoes", "preview": True})
        done = tools.call("forget_memory", {"description": SECRET, "receipt": True})
        assert done["ok"] and done["count"] == 1 and mem.verify_receipt(done["receipt"]).verified
        assert "receipt" not in tools.call("forget_memory", {"description": "Gardening note 1"})
        bad = tools.call("forget_memory", {"description": "tomatoes", "receipt": "perhaps"})
        assert bad["ok"] is False and "receipt" in bad["error"]["message"]


def test_mcp_forgets_with_a_receipt_that_verifies(filled):
    pytest.importorskip("mcp")
    import anyio
    from mcp import Client, StdioServerParameters

    db, (said, _) = filled
    params = StdioServerParameters(command=HIPPO, args=["--db", str(db), "--agent", "alice", "--embedder", "fake",
                                                        "mcp"], env={**os.environ, "HF_HUB_OFFLINE": "1"})

    async def main() -> dict[str, Any]:
        async with Client(params, read_timeout_seconds=60) as client:
            done = await client.call_tool("forget_memory", {"description": SECRET, "receipt": True})
            assert done.is_error is False
            return done.structured_content

    found = anyio.run(main)
    assert [d["id"] for d in found["deleted"]] == [said]
    with hippo.open(db, agent_id="alice", embedder=FakeEmbedder()) as mem:
        check = mem.verify_receipt(found["receipt"])
        assert check.verified, check.checks
        assert check.checks[1].place == "audit record"
        assert mem.audit(operation="forget_memory").items[0].surface == "mcp"
