"""Claude Code with hippo as the README sets it up (issue 36): the hooks installed by the README's
own command and the MCP server started from the README's own configuration name one database and
one agent, so what the hooks capture the MCP tools recall; and within one session, a memory
captured after a `Stop` (processed in the background, no `SessionEnd`) surfaces on a later prompt.
Offline defaults throughout: the local model, no LLM."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from hook_runs import SESSION, command, line, payload, run, wait_until
from typer.testing import CliRunner

import hippo
from hippo.interfaces.cli import app

pytest.importorskip("onnxruntime")
pytest.importorskip("mcp")
pytestmark = [pytest.mark.slow, pytest.mark.model]  # whole sessions of hooks and MCP servers, by meaning
from mcp import Client, StdioServerParameters  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
HIPPO = str(Path(sys.executable).with_name("hippo"))
DECISION = "We decided to deploy billing on Fridays only."
LATER = [("Rename the helper in utils.py to parse_date.", "Renamed parse_date and updated its three callers."),
         ("The invoice PDF footer should show the VAT number.", "Added the VAT number to the invoice footer."),
         ("Write the release checklist for the billing service.",
          "Here is the billing release checklist: run the migrations, tag the release, deploy.")]


def section(page: str, title: str) -> str:
    text = (ROOT / page).read_text(encoding="utf-8")
    return text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def option(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def readme_setup() -> tuple[dict, str]:
    """The README's MCP entry (command and args) and its command that installs the hooks."""
    mcp = section("README.md", "MCP server")
    entry = json.loads(re.search(r"```json\n(.*?)```", mcp, re.S).group(1))["mcpServers"]["hippo"]
    hooks = re.search(r"^\$ (hippo .*hooks install.*)$", section("README.md", "Claude Code"), re.M).group(1)
    return entry, hooks


def test_every_snippet_names_one_database_and_one_agent():
    pages = [section("README.md", "MCP server"), section("README.md", "Claude Code"),
             (ROOT / "docs/guide/mcp.md").read_text(), (ROOT / "docs/guide/claude-code.md").read_text()]
    text = "\n".join(pages)
    commands = [shlex.split(c) for c in re.findall(r"^\$ (?:claude mcp add hippo -- )?(hippo .*)$", text, re.M)]
    entries = [json.loads(b)["mcpServers"]["hippo"]["args"] for b in re.findall(r"```json\n(.*?)```", text, re.S)]
    named = [argv for argv in [*commands, *entries] if "mcp" in argv or "install" in argv]
    assert len(named) >= 6  # the MCP entry, Claude Code's MCP command and the hooks, in the README and a guide
    assert {(option(argv, "--db"), option(argv, "--agent")) for argv in named} == {("~/hippo.db", "me")}


def test_what_the_readmes_hooks_capture_the_readmes_mcp_server_recalls(tmp_path):
    entry, install = readme_setup()
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir(), project.mkdir()
    env = {**os.environ, "HOME": str(home), "XDG_STATE_HOME": str(home / ".local" / "state"), "HF_HUB_OFFLINE": "1",
           "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    done = subprocess.run(["bash", "-c", install], env=env, cwd=project, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    hook = shlex.split(command(settings, "Stop").removesuffix(" 2>/dev/null || true"))
    assert option(hook, "--agent") == option(entry["args"], "--agent")
    assert option(hook, "--db") == str(home / "hippo.db")

    transcript = project / "session.jsonl"  # Claude Code's transcript after the first reply
    transcript.write_text(line("user", "u-1", DECISION)
                          + line("assistant", "a-1", [{"type": "text", "text": "Noted: Fridays."}], "u-1"))
    done, _ = run(command(settings, "Stop"), payload("Stop", transcript, stop_hook_active=False), home,
                  HIPPO_AGENT_ID="someone-else")  # Claude Code's environment does not decide the agent
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    with hippo.open(home / "hippo.db", agent_id=option(entry["args"], "--agent")) as mem:
        wait_until(lambda: not mem.pending_agents() and mem.list_memories(limit=10).items,
                   "the Stop hook's background processing")

    server = StdioServerParameters(command=HIPPO if entry["command"] == "hippo" else entry["command"],
                                   args=entry["args"], env=env, cwd=str(project))

    async def recall() -> list[str]:
        async with Client(server, read_timeout_seconds=60) as client:
            found = await client.call_tool("recall_memories", {"query": "Which day do we deploy billing?"})
            return [m["content"] for m in found.structured_content["memories"]]

    assert anyio.run(recall)[0] == DECISION


def test_a_memory_captured_after_a_stop_surfaces_later_in_the_same_session(tmp_path):
    project = tmp_path / "project"
    result = CliRunner().invoke(app, ["--db", str(tmp_path / "hooks.db"), "hooks", "install", "--project",
                                      str(project), "--agent", "alice"])
    assert result.exit_code == 0, result.stderr
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    transcript = tmp_path / "session.jsonl"

    def stop(*lines: str) -> None:
        with transcript.open("a") as f:
            f.write("".join(lines))
        done, _ = run(command(settings, "Stop"), payload("Stop", transcript), tmp_path)
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")

    stop(line("user", "u-1", DECISION), line("assistant", "a-1", [{"type": "text", "text": "Noted."}], "u-1"))
    with hippo.open(tmp_path / "hooks.db", agent_id="alice") as mem:
        memories = wait_until(lambda: not mem.pending_agents() and mem.list_memories(limit=10).items,
                              "the first Stop's background processing")
        assert [m.content for m in memories] == [DECISION] and memories[0].session_id == SESSION
        for turn, (asked, said) in enumerate(LATER, 2):  # the session goes on, a Stop after each reply
            stop(line("user", f"u-{turn}", asked), line("assistant", f"a-{turn}", [{"type": "text", "text": said}]))
        wait_until(lambda: not mem.pending_agents() and len(mem.list_memories(limit=10).items) > 1,
                   "the later Stops' background processing")

    ask = payload("UserPromptSubmit", transcript, prompt="Which day of the week can we ship the billing release?")
    done, _ = run(command(settings, "UserPromptSubmit"), ask, tmp_path)
    shown = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert DECISION in shown
    done, _ = run(command(settings, "UserPromptSubmit"), ask, tmp_path)
    assert (done.returncode, done.stdout) == (0, "")  # shown once to the session, not at every prompt
