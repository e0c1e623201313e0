"""The layers, checked on the source: which package may import which (DESIGN.md's layering rules).

- No module outside ``hippo.stores`` imports a backend (``hippo.stores.sqlite``/``.postgres``);
  the registry (``hippo.stores.registry``) is the one door to them.
- ``hippo.core`` imports no surface, integration.
- Surfaces and integrations never reach past the core into a store (``hippo.stores`` at all).
- A backend imports no other backend.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "hippo"
BACKENDS = ("hippo.stores.sqlite", "hippo.stores.postgres")


def imports(path: Path) -> set[str]:
    """Every module a file imports, at any depth (lazy imports inside functions included)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def module_of(path: Path) -> str:
    return ".".join(("hippo", *path.relative_to(SRC).with_suffix("").parts)).removesuffix(".__init__")


MODULES = {module_of(p): imports(p) for p in SRC.rglob("*.py")}


def under(name: str, *packages: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in packages)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_layering(module):
    used = MODULES[module]
    if not under(module, "hippo.stores"):
        assert not [m for m in used if under(m, *BACKENDS)], "a backend imported outside hippo.stores"
    if under(module, "hippo.core"):
        assert not [m for m in used if under(m, "hippo.surfaces", "hippo.integrations")]
    if under(module, "hippo.surfaces", "hippo.integrations"):
        assert not [m for m in used if under(m, "hippo.stores")], "a surface reached past the core into a store"
    for backend in BACKENDS:
        if under(module, backend):
            assert not [m for m in used if under(m, *BACKENDS) and not under(m, backend)]


def test_the_checks_see_the_modules():
    assert {"hippo.core.memory", "hippo.stores.registry", "hippo.stores.postgres.store", "hippo.surfaces.tools"} \
        <= set(MODULES)
    assert "hippo.stores.sqlite" in MODULES["hippo.stores.registry"]
