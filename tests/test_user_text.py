"""What users read names hippo's capabilities, never the internal design documents hippo was built
from ("seed 001", "hippocampus.md"): the README and the guides, every string the package can show
(errors, output, help, tool descriptions, page templates), every tool's description and schema,
and compaction's output. The help of every CLI command is read in
``tests/interfaces/cli/test_cli_groups.py``, every page and JSON document a GET answers in
``tests/interfaces/http/test_http_get_readonly.py``. The design decisions (``docs/decisions``)
are the team's notes and may cite them. What maintainers read in ``src/`` (docstrings and
comments too) cites none of them either: it names the capability or links a page of ``docs/``."""

from __future__ import annotations

import ast
import re
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
    from hippo.core.tools.capture import capture_tools

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


# Citations of the design documents hippo was built from, which a clone of the repository does not
# hold: "seed 003", "Seed 001's", "the seed's bands", "seeds/", "the seed document", "the reference's
# formula", "reference implementation", "the specification", DESIGN.md, hippocampus.md. Left alone:
# random seeds ("random.seed(7)", "seed=7"), recall's neighbour seeds ("best_seeds", "the neighbours
# of each seed"), an API reference, SQL's REFERENCES, a test's reference vectors, the compaction
# setting classifier="reference", the OpenAPI specification, and hippocampus.config.json.
CITATION = re.compile(
    r"\bseeds?[ -]?0\d\d\b|\bseed['’]s\b|\bseeds?/|\bseeds?\s+(?:document|design|spec)"
    r"|\bthe\s+reference\b(?!\s+vectors?\b)|\breference\s+(?:implementation|extension|format|layout|rules)\b"
    r"|(?<!openapi )\bspecifications?\b|(?-i:\b(?:DESIGN|STYLE)\.md\b)|/work/shared"
    r"|\bhippocampus\b(?!\.config\.json)", re.I)
SOURCES = sorted(path for path in PACKAGE.rglob("*") if "__pycache__" not in path.parts
                 and path.suffix in (".py", ".html", ".js", ".css", ".md", ".json", ".toml", ".txt"))
USER_PAGES = [ROOT / "README.md", ROOT / "docs" / "index.md", *sorted((ROOT / "docs" / "guide").glob("*.md")),
              *sorted((ROOT / "docs" / "reference").glob("*.md"))]


def citations(text: str) -> list[str]:
    return [found.group(0) for found in CITATION.finditer(text)]


def test_the_citation_check_finds_citations_and_only_them():
    cited = ["Recognition (seed 000)", "Seed 001's consolidation", "the seed's bands", "see seeds/002",
             "as the seed document says", "the reference's formula", "the reference\nimplementation",
             "a reference implementation", "the compaction specification's rules", "shared/DESIGN.md",
             "STYLE.md", "the hippocampus.md extension"]
    assert [text for text in cited if not citations(text)] == []
    legitimate = ["random.seed(7)", "default_rng(seed=7)", "seeds the random generator", "best_seeds(found, SEEDS)",
                  "the neighbours of each seed", "the seeds' neighbours", "the Python API reference",
                  "a text NOT NULL REFERENCES chunks (id)", "the reference vectors of test_local.py",
                  'classifier="reference"', "REFERENCE_BONUS", "classify_reference(message)",
                  "the OpenAPI specification", "a hippocampus.config.json", "docs/design/recall.md"]
    assert [(text, citations(text)) for text in legitimate if citations(text)] == []


def test_no_file_of_the_package_cites_a_design_document():
    """Docstrings and comments too, and the pages users read: a maintainer who clones hippo has only
    ``docs/`` to follow, so the code names the capability or links a page there."""
    found = []
    for path in [*SOURCES, *USER_PAGES]:
        text = path.read_text(encoding="utf-8", errors="ignore")
        found += [f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, hit.start()) + 1}: {hit.group(0)!r}"
                  for hit in CITATION.finditer(text)]
    assert found == []
    # The whole package was read, every kind of file in it, and the word "seed" where it is
    # legitimate (recall's neighbour seeds) did not trip the check.
    assert sum(path.suffix == ".py" for path in SOURCES) >= 200
    assert {path.suffix for path in SOURCES} >= {".py", ".html", ".js", ".css", ".md", ".json"}
    assert len(USER_PAGES) >= 20
    assert any(re.search(r"\bseeds?\b", path.read_text(encoding="utf-8")) for path in SOURCES if path.suffix == ".py")
