"""How many lines the PostgreSQL backend still repeats from the SQLite backend.

A line of ``stores/postgres`` counts when an equal line stands anywhere in ``stores/sqlite``, after
normalising both sides: ``%s`` placeholders read as ``?``, white space stripped at both ends and
folded inside, and blank lines, comments, lone punctuation (``)``, ``],``, ``\"\"\"``...) and import
lines left out. Each occurrence in the PostgreSQL backend counts once: a line written three times
there, and once in SQLite, counts three. What both backends share lives in ``stores/sql`` and is
counted in neither.

Run as a script for the count and the most repeated lines::

    python tests/stores/backend_overlap.py [SRC]
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

__all__ = ["backend_lines", "normalised", "overlap", "repeated"]

STORES = Path(__file__).resolve().parents[2] / "src" / "hippo" / "stores"
_PUNCTUATION = re.compile(r"^[\s()\[\]{},:;.\"'`\\]*$")
_IMPORT = re.compile(r"^(from\s+\S+\s+import\b|import\s+\S)")
_SPACE = re.compile(r"\s+")


def normalised(line: str) -> str | None:
    """The line as compared, or None when it is left out."""
    text = _SPACE.sub(" ", line.strip()).replace("%s", "?")
    if not text or text.startswith("#") or _PUNCTUATION.fullmatch(text) or _IMPORT.match(text):
        return None
    return text


def backend_lines(folder: Path) -> list[str]:
    """The normalised lines of every Python module under ``folder``, in file order."""
    lines: list[str] = []
    for path in sorted(folder.rglob("*.py")):
        for line in path.read_text(encoding="utf-8").splitlines():
            text = normalised(line)
            if text is not None:
                lines.append(text)
    return lines


def repeated(stores: Path = STORES) -> Counter[str]:
    """Each PostgreSQL line that also stands in the SQLite backend, with how often PostgreSQL has it."""
    sqlite = set(backend_lines(stores / "sqlite"))
    return Counter(line for line in backend_lines(stores / "postgres") if line in sqlite)


def overlap(stores: Path = STORES) -> int:
    """How many lines of the PostgreSQL backend repeat a line of the SQLite backend."""
    return sum(repeated(stores).values())


if __name__ == "__main__":
    root = Path(sys.argv[1]) / "hippo" / "stores" if len(sys.argv) > 1 else STORES
    found = repeated(root)
    for line, times in found.most_common(40):
        print(f"{times:3} {line[:110]}")
    print(f"{sum(found.values())} lines of the PostgreSQL backend repeat the SQLite backend's")
