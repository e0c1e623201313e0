"""What users read names hippo's capabilities, never the internal design documents hippo was built
from ("seed 001", "hippocampus.md"): the README and the guides, every string the package can show
(errors, output, help, tool descriptions, page templates), every tool's description and schema,
and compaction's output. The help of every CLI command is read in
``tests/surfaces/cli/test_cli_groups.py``, every page and JSON document a GET answers in
``tests/surfaces/test_http_get_readonly.py``. The design decisions (``docs/decisions``)
are the team's notes and may cite them."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Iterator

import pytest
from support import internal_names

import hippo

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "hippo"
def test_the_check_finds_what_it_looks_for():
    assert internal_names("Experiences (seed 001)") == ["seed 001"]
    assert internal_names("# hippocampus.md Compaction") == ["hippocampus"]
    assert internal_names("see seeds/003 and Seed 004's modifiers") == ["seeds/", "Seed 004"]
    assert internal_names("reads hippocampus.config.json; seeds the random generator") == []


PAGES = [ROOT / "README.md", *sorted(page for page in (ROOT / "docs").rglob("*.md") if "decisions" not in page.parts)]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_the_readme_and_the_guides(page):
    assert internal_names(page.read_text(encoding="utf-8")) == []


def _shown_strings(path: Path) -> Iterator[tuple[int, str]]:
    """Every string constant of a module but its docstrings (those are read in the code)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    documented = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    docstrings = {id(node.body[0].value) for node in ast.walk(tree) if isinstance(node, documented)
                  and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            yield node.lineno, node.value


def test_no_string_the_package_can_show_names_them():
    found = [f"{path.relative_to(ROOT)}:{line}: {text[:80]!r}" for path in sorted(PACKAGE.rglob("*.py"))
             for line, text in _shown_strings(path) if internal_names(text)]
    found += [str(path.relative_to(ROOT)) for path in sorted(PACKAGE.rglob("*"))
              if path.suffix in (".html", ".js", ".css", ".json", ".md", ".txt")
              and internal_names(path.read_text(encoding="utf-8", errors="ignore"))]
    assert found == []


def test_every_tool_description_and_schema(tmp_path):
    from hippo.surfaces.capture_tools import capture_tools

    with hippo.open(str(tmp_path / "m.db"), agent_id="a", embedder="fake") as mem:
        tools = [*mem.tools(), *capture_tools(mem)]
        shown = [(tool.name, f"{tool.description} {tool.parameters}") for tool in tools]
    assert len(shown) >= 15
    assert [(name, internal_names(text)) for name, text in shown if internal_names(text)] == []


def test_compaction_output(tmp_path):
    turns = [("user", "Let's plan the migration. We decided to move the billing tables to PostgreSQL first."),
             ("assistant", "Understood. I will write the migration plan for the billing tables."),
             ("user", "yes please"), ("assistant", "ok")] * 30
    messages = [{"role": role, "content": f"{text} (turn {n})"} for n, (role, text) in enumerate(turns)]
    with hippo.open(str(tmp_path / "m.db"), agent_id="a", embedder="fake") as mem:
        result = mem.compact(messages, session_id="s1")
    assert result.summary.strip() and result.to_dict()
    assert internal_names(str(result.to_dict())) == []
