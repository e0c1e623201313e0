"""Seed 001's database per persona: ``memories/{agent_id}.db`` gives each agent a SQLite file of
its own, everywhere a database path is taken; and what a crash may lose of the short-term buffer."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

import hippo
from hippo.errors import ConfigError
from hippo.interfaces.cli import app

pytestmark = pytest.mark.sqlite_only  # SQLite files, one per agent; a server database holds every agent

TEMPLATE = "memories/{agent_id}.db"


def test_each_agent_gets_its_own_file_and_never_sees_another(tmp_path):
    template = str(tmp_path / TEMPLATE)
    with hippo.open(template, agent_id="alice", embedder="fake") as alice:
        alice.record_experience("decision", "Alice keeps her notes in Zanzibar-7")
        bob = alice.for_agent("bob")  # the same template: bob's own file
        bob.record_experience("decision", "Bob prefers the night shift")
        assert [e.content for e in bob.recall(query="Zanzibar notes")] == []
        assert bob.database.endswith("bob.db") and alice.database.endswith("alice.db")
        bob.close()
    folder = tmp_path / "memories"
    assert sorted(p.name for p in folder.glob("*.db")) == ["alice.db", "bob.db"]
    assert b"Zanzibar-7" not in b"".join(p.read_bytes() for p in folder.glob("bob.db*"))
    with hippo.open(template, agent_id="alice", embedder="fake") as again:  # persists across a restart
        assert [e.content for e in again.recall()] == ["Alice keeps her notes in Zanzibar-7"]


def test_the_cli_takes_a_template_as_its_database(tmp_path):
    template = str(tmp_path / TEMPLATE)
    runner = CliRunner()
    for agent, text in (("alice", "Alice's café is on Sukhumvit"), ("bob", "Bob's café is in Lyon")):
        result = runner.invoke(app, ["--db", template, "--agent", agent, "--embedder", "fake", "store", text])
        assert result.exit_code == 0, result.output
    listed = runner.invoke(app, ["--db", template, "--agent", "bob", "--embedder", "fake", "list", "--json"])
    assert "Lyon" in listed.output and "Sukhumvit" not in listed.output
    assert (tmp_path / "memories" / "alice.db").exists() and (tmp_path / "memories" / "bob.db").exists()


def test_a_template_is_refused_where_no_agent_is_given_and_for_servers(tmp_path):
    from hippo.stores.registry import for_agent, open_store

    with pytest.raises(ConfigError, match="one database per agent"):
        open_store(str(tmp_path / TEMPLATE))
    with pytest.raises(ConfigError, match="SQLite file per agent"):
        for_agent("postgresql://h/db_{agent_id}", "alice")


def _record_then_die(path: Path, durable: bool) -> None:
    """A process records experiences and is killed (SIGKILL) before it can close."""
    code = textwrap.dedent(f"""
        import os, signal, hippo
        mem = hippo.open({str(path)!r}, agent_id="alice", embedder="fake", short_term_durable={durable})
        mem.record_experience("decision", "Ship the beta on Friday")          # 0.8: consolidated at once
        mem.record_experience("chat", "The user likes the dark theme")        # 0.6: short-term
        print(mem.record_experience("observation", "It is raining").durable, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == -signal.SIGKILL
    assert done.stdout.strip() == str(durable)  # what the process was told about its buffer


@pytest.mark.parametrize("durable", [False, True])
def test_a_killed_process_loses_only_what_it_was_told_it_may_lose(tmp_path, durable):
    path = tmp_path / "hippo.db"
    _record_then_die(path, durable)
    with hippo.open(path, agent_id="alice", embedder="fake", short_term_durable=durable) as mem:
        assert [e.content for e in mem.recall() if e.tier == "long_term"] == ["Ship the beta on Friday"]
        recent = [e.content for e in mem.short_term()]
        assert recent == (["It is raining", "The user likes the dark theme"] if durable else [])
    assert os.path.exists(path)
