"""The import graph of a package, read from its source: what the layer tests check.

Every import counts, at any depth: at the top of a module, inside a function (a lazy import is
still a dependency, and still closes a cycle when it runs), and under ``if TYPE_CHECKING:`` (it
never runs, but two modules that name each other's types are still one tangle to read and to
change). :func:`graph` holds them all, and :func:`cycles` finds the cycles among them.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Import", "cycles", "graph", "module_of", "read_imports"]


@dataclass(frozen=True)
class Import:
    target: str  # the module imported (``from a import b`` names ``a.b`` when ``b`` is a module)
    typing_only: bool  # under ``if TYPE_CHECKING:``
    line: int


def module_of(path: Path, root: Path) -> str:
    """``hippo.core.memory`` for ``<root>/core/memory.py`` when ``root`` is the ``hippo`` folder."""
    return ".".join((root.name, *path.relative_to(root).with_suffix("").parts)).removesuffix(".__init__")


def _typing_blocks(tree: ast.AST) -> set[int]:
    """The ids of the import nodes inside ``if TYPE_CHECKING:`` blocks."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            inside.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return inside


def read_imports(root: Path) -> dict[str, list[Import]]:
    """Each module of the package at ``root`` and the package's own modules it imports."""
    paths = {module_of(p, root): p for p in root.rglob("*.py")}
    found: dict[str, list[Import]] = {}
    for module, path in paths.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        typing = _typing_blocks(tree)
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        imports = []
        for node in ast.walk(tree):
            for target in _targets(node, package, paths):
                if target == root.name or target.startswith(root.name + "."):
                    imports.append(Import(target, id(node) in typing, node.lineno))
        found[module] = imports
    return found


def _targets(node: ast.AST, package: str, modules: dict[str, Path]) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    base = node.module or ""
    if node.level:  # a relative import: from its package upwards
        parts = package.split(".")
        base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
    named = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in modules]
    return named if len(named) == len(node.names) else [base, *named]


def graph(imports: dict[str, list[Import]]) -> dict[str, set[str]]:
    """Module -> the modules it imports, typing-only imports included."""
    return {m: {i.target for i in found if i.target in imports and i.target != m} for m, found in imports.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles: each strongly connected group of two or more modules, sorted (Tarjan's
    algorithm, iterative so that a deep package does not hit the recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return sorted(groups)
