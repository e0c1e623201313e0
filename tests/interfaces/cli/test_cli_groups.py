"""``hippo`` in groups: the help is a map of groups, every command name of earlier releases still
runs, help shows no type placeholders and no sentence broken across lines, ``--version``."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest
import typer
from cli_helpers import ok
from support import internal_names

import hippo
from hippo.interfaces.cli import app
from hippo.interfaces.cli.groups import ALIASES, GROUPS

# `hippo --help`'s commands at 4ad0e2d, before the groups: each must keep working.
BEFORE = ["store", "remember", "recall", "forget", "update", "delete-all", "block", "conversation", "list", "show",
          "stats", "export", "import", "reembed", "scrub", "prepare", "observe", "process", "surface", "compact",
          "reinforce", "demote", "related", "maintain", "archive", "restore", "consolidate", "hook", "split",
          "serve", "mcp", "experience", "hooks", "keys"]


def _root():
    root = typer.main.get_command(app)
    return root, root.context_class(root, info_name="hippo")


def _paths() -> list[list[str]]:
    """The root, every group and every command of a group."""
    root, ctx = _root()
    found: list[list[str]] = [[]]
    for name in GROUPS:
        group = root.get_command(ctx, name)
        found += [[name], *([name, command] for command in group.list_commands(ctx))]
    return found


PATHS = _paths()


def test_the_help_is_a_map_of_the_groups(runner):
    shown = ok(runner.invoke(app, ["--help"])).stdout
    listed = shown.split("Commands:\n")[1].split("\n\n")[0]
    names = [line.split()[0] for line in listed.splitlines() if re.match(r"  \S", line)]
    assert names == list(GROUPS)
    assert all(len(line) <= 80 for line in listed.splitlines())  # one line a group at 80 columns
    assert not set(names) & set(ALIASES)  # the old names are hidden


# One-word names added since: the public names for hippo data backup and check.
SINCE = ["backup", "check"]


def test_every_name_of_before_the_groups_is_still_there():
    assert set(BEFORE) | set(SINCE) == set(ALIASES) | {"archive", "keys", "hooks"}
    root, ctx = _root()
    for old, (group, command) in ALIASES.items():
        target = root.get_command(ctx, group)
        assert root.get_command(ctx, old) is (target if command is None else target.get_command(ctx, command)), old


@pytest.fixture
def held(cli, tmp_path):
    """A database holding a memory, and the files the old names read: (memory id, {placeholder: value})."""
    stored = json.loads(ok(cli("memories", "store", "A note about herons", "--json")).stdout)
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps([{"role": "user", "id": "m1", "content": "We decided to watch herons on Fridays."}]))
    export = tmp_path / "export.jsonl"
    ok(cli("data", "export", export))
    return {"{id}": stored["id"], "{chat}": str(chat), "{export}": str(export), "{dir}": str(tmp_path)}


# Each old name run as before: its arguments, the exit code, and words of what it says.
RUNS = {
    "store": (["Herons nest in colonies"], 0, "inserted"),
    "remember": (["I live in Berlin."], 0, "Learned 1 fact"),
    "recall": (["herons"], 0, "A note about herons"),
    "forget": (["nothing like this whatsoever"], 0, "nothing matches"),
    "update": (["{id}", "--tag", "birds"], 0, "birds"),
    "delete-all": (["--yes"], 0, "deleted 1 memories"),
    "block": (["set", "human", "Name: Kris"], 0, "created block 'human'"),
    "conversation": (["herons"], 1, "no messages table"),
    "list": ([], 0, "A note about herons"),
    "show": (["{id}"], 0, "A note about herons"),
    "stats": ([], 0, "memories"),
    "export": ([], 0, "exported 1 chunk"),
    "import": (["{export}"], 0, "1 already there"),
    "reembed": ([], 0, "embedded 0"),
    "scrub": ([], 0, "scrubbed"),
    "prepare": ([], 0, "is ready"),
    "observe": (["{chat}", "--session", "s1"], 0, "observed 1 message"),
    "process": ([], 0, "processed 0 messages"),
    "surface": (["--session", "s1", "--prompt", "herons"], 0, "nothing relevant to surface"),
    "compact": (["{chat}"], 0, "herons"),
    "reinforce": (["{id}"], 0, "reinforced"),
    "demote": (["{id}"], 0, "demoted"),
    "related": (["{id}"], 0, "0 linked"),
    "maintain": ([], 0, "no size cap"),
    "archive": (["herons"], 0, "0 archived"),
    "restore": (["{id}"], 1, "no archived memory"),
    "consolidate": ([], 0, "considered 0"),
    "hook": (["Stop"], 0, ""),
    "split": (["{id}", "a wording"], 1, "not a fact"),
    "serve": (["--help"], 0, "dashboard"),
    "mcp": (["--help"], 0, "over MCP"),
    "experience": (["record", "decision", "Watch herons on Fridays"], 0, "recorded"),
    "hooks": (["install", "--project", "{dir}"], 0, "hippo hooks in"),
    "keys": (["list"], 0, "no API keys"),
}


@pytest.mark.parametrize("name", BEFORE)
def test_every_old_name_runs(cli, held, name):
    args, code, said = RUNS[name]
    result = cli(name, *(held.get(arg, arg) for arg in args), input="{}")
    assert result.exit_code == code, (result.stdout, result.stderr)
    assert said in result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr


def test_archive_takes_its_query_as_before_and_its_commands_now(cli, monkeypatch):
    stored = json.loads(ok(cli("memories", "store", "An old note about the heron", "--json")).stdout)
    monkeypatch.setenv("HIPPO_MAX_DB_BYTES", "1")
    assert json.loads(ok(cli("archive", "maintain", "--json")).stdout)["archived"] == 1
    for argv in (["archive", "heron"], ["archive", "--json", "heron"], ["archive", "search", "heron", "--json"]):
        assert stored["id"] in ok(cli(*argv)).stdout, argv
    assert json.loads(ok(cli("archive", "restore", stored["id"], "--json")).stdout)["id"] == stored["id"]


def test_the_groups_run_a_session(cli):
    stored = json.loads(ok(cli("memories", "store", "We chose SQLite for the prototype", "--json")).stdout)
    hits = json.loads(ok(cli("memories", "recall", "SQLite", "--json")).stdout)["hits"]
    assert [h["chunk"]["id"] for h in hits] == [stored["id"]]
    assert "Learned 1 fact" in ok(cli("facts", "remember", "I live in Berlin.")).stdout
    ok(cli("blocks", "append", "human", "Name: Kris"))
    assert ok(cli("blocks", "get", "human")).stdout == "Name: Kris\n"
    assert "recorded" in ok(cli("experiences", "record", "decision", "Ship on Fridays")).stdout
    assert json.loads(ok(cli("data", "scrub", "--json")).stdout)["scrubbed"] is True
    assert cli("memories").exit_code == 2  # a group alone shows its help
    assert "store" in cli("memories").stdout


def test_a_typo_of_a_command_is_a_usage_error_with_a_suggestion(cli):
    result = cli("memories", "recal", "x")
    assert result.exit_code == 2 and "recall" in result.stderr
    assert cli("no-such-group").exit_code == 2


def test_version(runner):
    result = ok(runner.invoke(app, ["--version"]))
    assert result.stdout == f"hippo {hippo.__version__}\n"


def test_storing_again_says_what_happened_to_the_intensity(cli):
    first = json.loads(ok(cli("memories", "store", "Krz prefers tea", "--intensity", "0.9", "--json")).stdout)
    again = ok(cli("memories", "store", "Krz prefers tea")).stdout  # the default reading, 0.5
    assert again == f"already held {first['id']} (seen 2 times); intensity 0.90 -> 0.70\n"
    third = ok(cli("memories", "store", "Krz prefers tea", "--intensity", "0.7")).stdout
    assert third == f"already held {first['id']} (seen 3 times); intensity 0.70, unchanged\n"
    # the JSON result is the core's, unchanged
    assert json.loads(ok(cli("store", "Krz prefers tea", "--json")).stdout)["action"] == "strengthened"


def test_a_fact_learned_again_shows_its_intensity_before_and_after(cli):
    ok(cli("facts", "remember", "I live in Berlin."))
    again = json.loads(ok(cli("facts", "remember", "I live in Berlin.", "--json")).stdout)["facts"][0]
    assert again["action"] == "duplicate"
    table = ok(cli("facts", "remember", "I live in Berlin.")).stdout
    assert re.search(rf"{again['intensity_after']:.2f}, unchanged", table), table


# -- help -------------------------------------------------------------------------------------------

PLACEHOLDER = re.compile(r"<[\w\[\]|,. ]+>|\{[a-z_]+\}")
HEADERS = ("Usage:", "Arguments:", "Options:", "Commands:")


def _wide_help(runner, path: list[str]) -> str:
    """The help of ``hippo PATH`` without any wrapping: a line break in it is the help's own."""
    result = runner.invoke(app, [*path, "--help"], terminal_width=100_000, max_content_width=100_000)
    return ok(result).stdout


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(p) or "hippo")
def test_help_has_no_placeholder_and_no_broken_sentence(runner, path):
    wide = _wide_help(runner, path)
    narrow = ok(runner.invoke(app, [*path, "--help"], env={"COLUMNS": "80"})).stdout
    for shown in (wide, narrow):
        assert not PLACEHOLDER.findall(shown), PLACEHOLDER.findall(shown)
        assert internal_names(shown) == []
    for line in wide.splitlines():
        text = line.strip()
        if text and not text.startswith(HEADERS):
            assert text[-1] in ".:;!?)]", f"hippo {' '.join(path)}: a line that ends mid-sentence: {line!r}"
    root, ctx = _root()
    command = root
    for name in path:
        command = command.get_command(ctx, name)
    lines = wide.splitlines()
    for paragraph in (command.help or "").split("\n\n"):  # each paragraph of the docstring on one line
        flowing = " ".join(paragraph.split())
        assert any(flowing in line for line in lines), f"hippo {' '.join(path)}: {flowing!r} is broken up"
    for param in command.params:
        if getattr(param, "help", None) and not getattr(param, "hidden", False):
            assert any(" ".join(param.help.split()) in line for line in lines), (path, param.name)


@pytest.mark.parametrize("name", sorted(ALIASES))
def test_an_old_name_has_the_same_help_as_its_command(runner, name):
    group, command = ALIASES[name]
    old = _wide_help(runner, [name]).split("\n", 1)[1]
    new = _wide_help(runner, [group, *([command] if command else [])]).split("\n", 1)[1]
    assert old == new  # all but the usage line, which names what was typed


# -- a process of its own: what --help loads, what serve says ---------------------------------------

HIPPO = ["-c", "from hippo.interfaces.command import main; main()"]


def _env(tmp_path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIPPO_")}
    env["HIPPO_CONFIG"] = str(tmp_path / "no-such-hippo.toml")
    return env


def test_help_loads_no_command_module_nor_rich_nor_pydantic(tmp_path):
    code = ("import json, sys\n"
            "sys.argv = ['hippo', '--help']\n"
            "from hippo.interfaces.command import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "names = ('rich', 'pydantic', 'numpy', 'hippo.core.memory', 'hippo.interfaces.cli.memories')\n"
            "print(json.dumps([m for m in sys.modules if m.startswith(names)]), file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=_env(tmp_path), capture_output=True,
                          text=True, timeout=60, check=True)
    assert "memories" in done.stdout
    assert json.loads(done.stderr) == []


def test_serve_names_the_dashboard_and_the_api_docs(tmp_path):
    pytest.importorskip("uvicorn")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, *HIPPO, "--db", "mem.db", "--embedder", "fake", "serve", "--port",
                               str(port)], cwd=tmp_path, env=_env(tmp_path), stderr=subprocess.PIPE, text=True)
    try:
        said = [server.stderr.readline() for _ in range(4)] if server.stderr else []
        assert said.pop(0) == "hippo: loading the embedding model fake:64 ...\n"  # before it serves: ready at once
        assert said.pop(0).startswith("hippo: model ready in ")
        assert said[0].startswith("hippo ") and f"at http://127.0.0.1:{port}" in said[0]
        assert said[1] == f"dashboard: http://127.0.0.1:{port}/  API docs: http://127.0.0.1:{port}/docs\n"
        page = _get(f"http://127.0.0.1:{port}/")
        assert "<html" in page.lower()
    finally:
        server.terminate()
        server.wait(timeout=30)


def _get(url: str) -> str:
    for _ in range(100):  # the line is said before uvicorn listens
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return response.read().decode()
        except urllib.error.URLError:
            time.sleep(0.1)
    raise AssertionError(f"nothing answered at {url}")


def test_a_json_recall_loads_neither_rich_nor_pydantic(tmp_path):
    code = ("import json, sys\n"
            "import hippo\n"
            "with hippo.open('m.db', agent_id='me', embedder='fake') as mem:\n"
            "    mem.store_memory('We chose SQLite')\n"
            "sys.argv = ['hippo', '--db', 'm.db', '--agent', 'me', '--embedder', 'fake', 'recall', 'SQLite', "
            "'--limit', '3', '--tag', 'x', '--json']\n"
            "from hippo.interfaces.command import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(json.dumps([m for m in sys.modules if m.startswith(('rich', 'pydantic'))]), file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=_env(tmp_path), capture_output=True,
                          text=True, timeout=60, check=True)
    assert json.loads(done.stdout)["hits"] == []  # read as a list of tags: none matches "x"
    assert json.loads(done.stderr) == []


@pytest.mark.parametrize("args, said", [
    (["recall", "x", "--limit", "many"], "'many' is not a whole number."),
    (["recall", "x", "--limit", "9" * 5000], "a number of 5,000 digits"),
    (["recall", "x", "--kind", "nope"], "'nope' is not one of fact, memory."),
    (["store", "x", "--intensity", "much"], "'much' is not a number."),
    (["blocks", "set", "k", "v", "--char-limit", "0"], "0 is less than 1."),
    (["server", "http", "--port", "70000"], "70000 is more than 65535."),
])
def test_a_bad_value_is_a_usage_error_that_names_it(cli, args, said):
    result = cli(*args)
    assert result.exit_code == 2 and said in result.stderr, result.stderr


def test_values_arrive_as_their_types(cli):
    stored = json.loads(ok(cli("store", "Tea at noon", "--intensity", "0.25", "-t", "a", "-t", "b", "--json")).stdout)
    assert stored["chunk"]["running_intensity"] == 0.25 and stored["chunk"]["metadata"] == {"tags": ["a", "b"]}
    hits = json.loads(ok(cli("recall", "tea", "--kind", "memory", "--limit", " 2 ", "-t", "a", "--json")).stdout)
    assert [h["chunk"]["id"] for h in hits["hits"]] == [stored["id"]]
