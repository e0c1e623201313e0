"""How many code lines the PostgreSQL backend still repeats from the SQLite backend.

A line of ``stores/postgres`` counts when an equal line stands anywhere in ``stores/sqlite``, after
normalising both sides: ``%s`` placeholders read as ``?``, white space stripped at both ends and
folded inside. Only code lines count, as issue 35 counted them: blank lines, comments, lone
punctuation (``)``, ``],``...), import lines, docstrings (module, class and function docstrings,
found with ``ast``) and lines that are a single keyword or decorator (``try:``, ``else:``,
``return``, ``pass``, ``yield``, ``@contextmanager``...) are left out. Each occurrence in the
PostgreSQL backend counts once: a line written three times there, and once in SQLite, counts three.
What both backends share lives in ``stores/sql`` and is counted in neither.

Measured so: 433 lines at the start of issue 35 (commit 2cd3862; the issue said 441, counted with a
slightly different normalisation, the other variants give 485 to 627), 170 once ``stores/sql``
held the first shared parts.

Run as a script for the count and the most repeated lines::

    python tests/stores/backend_overlap.py [SRC]
"""

from __future__ import annotations

import ast
import re
import sys
from collections import Counter
from pathlib import Path

__all__ = ["backend_lines", "code_lines", "normalised", "overlap", "repeated"]

STORES = Path(__file__).resolve().parents[2] / "src" / "hippo" / "stores"
_PUNCTUATION = re.compile(r"^[\s()\[\]{},:;.\"'`\\]*$")
_IMPORT = re.compile(r"^(from\s+\S+\s+import\b|import\s+\S)")
_KEYWORD = re.compile(r"^(try|else|finally|return|pass|break|continue|raise|yield|@\w+|\w+:)$")
_SPACE = re.compile(r"\s+")
_DOCUMENTED = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def normalised(line: str) -> str | None:
    """The line as compared, or None when it is left out."""
    text = _SPACE.sub(" ", line.strip()).replace("%s", "?")
    if not text or text.startswith("#") or _PUNCTUATION.fullmatch(text) or _IMPORT.match(text):
        return None
    if _KEYWORD.fullmatch(text):
        return None
    return text


def docstring_lines(source: str) -> set[int]:
    """The numbers (from 1) of the lines of every module, class and function docstring."""
    lines: set[int] = set()
    try:
        tree = ast.parse(source)
    except SyntaxError:  # a fragment (the tests'): no docstrings known
        return lines
    for node in ast.walk(tree):
        if isinstance(node, _DOCUMENTED) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                lines.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return lines


def code_lines(source: str) -> list[str]:
    """The normalised code lines of one module, in order."""
    docs = docstring_lines(source)
    found = (normalised(line) for number, line in enumerate(source.splitlines(), 1) if number not in docs)
    return [text for text in found if text is not None]


def backend_lines(folder: Path) -> list[str]:
    """The normalised code lines of every Python module under ``folder``, in file order."""
    return [line for path in sorted(folder.rglob("*.py")) for line in code_lines(path.read_text(encoding="utf-8"))]


def repeated(stores: Path = STORES) -> Counter[str]:
    """Each PostgreSQL line that also stands in the SQLite backend, with how often PostgreSQL has it."""
    sqlite = set(backend_lines(stores / "sqlite"))
    return Counter(line for line in backend_lines(stores / "postgres") if line in sqlite)


def overlap(stores: Path = STORES) -> int:
    """How many code lines of the PostgreSQL backend repeat a line of the SQLite backend."""
    return sum(repeated(stores).values())


if __name__ == "__main__":
    root = Path(sys.argv[1]) / "hippo" / "stores" if len(sys.argv) > 1 else STORES
    found = repeated(root)
    for line, times in found.most_common(40):
        print(f"{times:3} {line[:110]}")
    print(f"{sum(found.values())} code lines of the PostgreSQL backend repeat the SQLite backend's")
