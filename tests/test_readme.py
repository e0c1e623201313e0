"""Every Python block of the README and of the documentation pages (docs/) runs exactly as written, in a
fresh folder, with the real local model; every console block runs too, or is tested elsewhere."""

from __future__ import annotations

import os
import re
import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").rglob("*.md"))]


def _blocks(language: str) -> list[tuple[str, str]]:
    """(page, block) for every fenced block of the language, the README's first, then docs/ by path."""
    return [(str(page.relative_to(ROOT)), block) for page in PAGES
            for block in re.findall(rf"```{language}\n(.*?)```", page.read_text(encoding="utf-8"), re.S)]


PYTHON = _blocks("python")
BLOCKS = [block for _, block in PYTHON]


def test_there_are_blocks_to_run():
    assert len([page for page, _ in PYTHON if page == "README.md"]) >= 2
    assert len(BLOCKS) >= 8


@pytest.mark.model  # the examples recall by meaning, with the local model
@pytest.mark.parametrize("number", range(len(BLOCKS)), ids=[f"{page}-{n}" for n, (page, _) in enumerate(PYTHON)])
def test_a_python_block_runs_as_written(number, tmp_path, monkeypatch, capsys):
    pytest.importorskip("onnxruntime")
    monkeypatch.chdir(tmp_path)
    script = tmp_path / f"block{number}.py"
    script.write_text(BLOCKS[number], encoding="utf-8")
    runpy.run_path(str(script), run_name="__main__")
    printed = capsys.readouterr().out
    for line in BLOCKS[number].splitlines():  # every "print(...)  # output" comment is what it prints
        shown = re.match(r"\s*print\(.*\)\s+# (.+)$", line)
        if shown and "..." not in shown.group(1) and "(" not in shown.group(1):
            expected = shown.group(1).split(" (")[0].strip()
            assert any(out.startswith(expected) for out in printed.splitlines()), line


CONSOLE = _blocks("console")
# Console lines a test elsewhere runs in its own way: installing (test_install.py builds the wheel and
# installs it into a fresh environment) and Claude Code's command (test_mcp.py runs its arguments).
ELSEWHERE = ("pip install ", "claude mcp add ")


@pytest.mark.model  # the hippo command on its default embedder, the local model
@pytest.mark.parametrize("number", range(len(CONSOLE)), ids=[f"{page}-{n}" for n, (page, _) in enumerate(CONSOLE)])
def test_every_console_command_runs_or_is_tested_elsewhere(number, tmp_path):
    import subprocess
    import sys

    bin_dir = Path(sys.executable).parent
    block = CONSOLE[number][1]
    lines = block.splitlines()
    commands = [line[2:] for line in lines if line.startswith("$ ")]
    if all(c.startswith(ELSEWHERE) for c in commands) or "postgresql://" in block:
        pytest.skip("run elsewhere: installs in tests/test_install.py, Claude Code's command in "
                    "tests/interfaces/test_mcp.py, the PostgreSQL block in tests/interfaces/server/test_http_scaleout.py")
    script = "set -e\n" + "\n".join(c for c in commands if not c.startswith(ELSEWHERE))
    home = tmp_path / "home"
    home.mkdir()
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(home), "HIPPO_CONFIG": str(home / "none.toml")}
    if os.environ.get("PYTHONPATH"):  # the code under test (a worktree's src/), not the one installed
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    done = subprocess.run(["bash", "-c", script], cwd=home, env=env, input="y\n", capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, f"{script}\n{done.stderr}"
    said = done.stdout + done.stderr
    for line in lines:  # every line of output the page shows starts a line the commands printed
        if line and not line.startswith("$ "):
            expected = re.split(r" \(| 01[0-9A-Z]{24}| /", line)[0]
            assert any(out.startswith(expected) for out in said.splitlines()), (line, said)


@pytest.mark.model
def test_the_experiences_then_the_capture_example_in_one_database_surface_only_the_decision(tmp_path, monkeypatch,
                                                                                            capsys):
    """Issue 33: run one after the other in one folder (one ``memory.db``), the capture example's
    surfacing showed the key-rotation experiences too, lent relevance by the hour they shared."""
    pytest.importorskip("onnxruntime")
    experiences = next(b for b in BLOCKS if "record_experience(" in b)
    capture = next(b for b in BLOCKS if ".surface(" in b)
    monkeypatch.chdir(tmp_path)
    for number, block in enumerate((experiences, capture)):
        script = tmp_path / f"block{number}.py"
        script.write_text(block, encoding="utf-8")
        capsys.readouterr()
        runpy.run_path(str(script), run_name="__main__")
    printed = capsys.readouterr().out.splitlines()
    shown = printed[printed.index("Relevant memories (hippo):") + 1:]
    assert len(shown) == 1 and "] Kris: We decided to ship billing on Fridays only. (" in shown[0], printed


def test_every_public_operation_of_memory_is_documented():
    import hippo

    pages = "".join(page.read_text(encoding="utf-8") for page in [README, *(ROOT / "docs" / "guide").glob("*.md")])
    public = [name for name in dir(hippo.Memory) if not name.startswith("_")]
    assert len(public) > 40
    missing = [name for name in public if not re.search(rf"[`.]{name}\b", pages)]
    assert not missing, f"not in the README or a guide page: {missing}"


def test_every_agent_tool_and_mcp_tool_is_named_in_the_guides(tmp_path):
    import hippo
    from hippo.core.tools.args import TOOL_NAMES
    from hippo.core.tools.capture import capture_tools

    with hippo.open(str(tmp_path / "m.db"), agent_id="a", embedder="fake") as mem:
        captured = [tool.name for tool in capture_tools(mem)]
    tools_page = (ROOT / "docs" / "guide" / "tools.md").read_text(encoding="utf-8")
    mcp_page = (ROOT / "docs" / "guide" / "mcp.md").read_text(encoding="utf-8")
    assert [name for name in TOOL_NAMES if f"`{name}`" not in tools_page] == []
    assert [name for name in captured if f"`{name}`" not in mcp_page] == []


def test_the_readme_stays_short():
    """What hippo is, how to install and start, the main operations, and links to the rest."""
    assert len(README.read_text(encoding="utf-8").splitlines()) < 300


def test_the_readmes_tool_commands_name_the_set_up_that_installs_them():
    """`python -m mkdocs serve` fails after scripts/run.sh (mkdocs is in the dev extra): the README
    says which set-up brings it, and that set-up does install it."""
    import tomllib

    text = " ".join(README.read_text(encoding="utf-8").split())
    sentence = next(s for s in re.split(r"(?<=\.)\s", text) if "mkdocs serve" in s)
    mode = re.search(r"bash scripts/setup\.sh (\w+)", sentence)
    assert mode, sentence
    setup = (ROOT / "scripts" / "setup.sh").read_text(encoding="utf-8")
    extras = re.search(rf"^\s*{mode.group(1)}\)\s+extras=([\w,-]+)", setup, re.M)
    assert extras, f"scripts/setup.sh has no mode {mode.group(1)}"
    wanted = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    brought = [dep for extra in extras.group(1).split(",") for dep in wanted.get(extra, [])]
    assert any(re.match(r"mkdocs\b", dep) for dep in brought), brought
