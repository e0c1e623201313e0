"""The architecture, checked on the source (docs/architecture.md explains each rule).

- One allowed-import matrix over every top-level part of ``hippo``: a module may import its own
  part and what its part's row allows, nothing else. Every import counts, inside functions and
  under ``TYPE_CHECKING`` too.
- The core imports no module of ``stores``: it owns the ports (``core.ports``) the stores implement.
- No import from the composition root (``wiring``) back into the ways in (``interfaces``).
- No import cycle among the modules, counting every import: lazy ones inside functions and those
  under ``TYPE_CHECKING``.
- No module reads another class's private attribute.
- No folder holds more than 15 modules, in ``src/hippo`` and in ``tests``; ``Memory``'s own module
  stays under 300 lines.
- The suite's tiers: the fast tier (``scripts/test.sh --fast``) leaves out every tier marker
  registered in pyproject.toml, and the markers follow a test's backend and API parameters.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from imports_graph import cycles, graph, module_of, read_imports

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
SRC = ROOT / "src" / "hippo"
IMPORTS = read_imports(SRC)

FOUNDATION = {"errors", "limits", "clock", "dictable", "types", "trust", "config", "installed"}
# Each part and what it may import besides itself. A dotted name allows that module (and below)
# only: the core owns the ports (``core.ports``) the stores implement, and imports no module of
# ``stores``; outside the stores, only their registry is named, so no backend is imported from
# outside ``stores``.
ALLOWED: dict[str, set[str]] = {
    "limits": set(),
    "clock": set(),
    "installed": set(),
    "errors": {"limits", "installed"},
    "dictable": set(),
    "trust": {"dictable"},  # the audit trail's and receipts' public types
    "types": {"errors", "limits", "clock", "dictable", "trust"},
    "config": {"errors", "limits"},
    "providers": FOUNDATION,
    # a store implements the core's ports, and applies curation's rules for links in its bookkeeping
    "stores": FOUNDATION | {"core.ports", "core.curation.rules"},
    # the core owns its ports; it sees the providers' interface, and the tokenizer the local model
    # ships (token budgets). No module of ``stores``.
    "core": FOUNDATION | {"providers.base", "providers.local"},
    "aio": FOUNDATION | {"core"},
    # the composition root builds stores, providers and toolsets; it imports none of the ways in
    "wiring": FOUNDATION | {"core", "aio", "stores.registry", "providers.base", "providers.registry"},
    "hippo": FOUNDATION | {"wiring", "aio", "core", "client"},  # the package: what it re-exports
    # hippo.connect: Memory's operations over HTTP, read from the facade (names, signatures, result
    # types); no capability, store or provider, so it runs wherever the core's facade imports
    "client": FOUNDATION | {"core.memory"},
    "integrations": FOUNDATION | {"wiring", "aio", "core"},
    # other libraries' APIs (mem0's) over the core, opened through the composition root
    "compat": FOUNDATION | {"wiring", "aio", "core"},
    # the ways in. The CLI is the outermost: it also runs the integrations' commands (hooks,
    # transcripts), and the operations route speaks the client's codec (client.wire), so both ends
    # read one table
    "interfaces": FOUNDATION | {"wiring", "aio", "core", "integrations", "client.wire"},
    "__main__": {"interfaces"},
}


def part(module: str) -> str:
    bits = module.split(".")
    return "hippo" if len(bits) == 1 else bits[1]


def allowed(module: str, target: str) -> bool:
    if part(module) == part(target):
        return True
    name = target.removeprefix("hippo.")
    return any(name == rule or name.startswith(rule + ".") for rule in ALLOWED[part(module)])


def test_the_matrix_covers_every_top_level_part():
    parts = {part(m) for m in IMPORTS}
    assert parts == set(ALLOWED), f"parts without a row: {parts - set(ALLOWED)}; rows without a part: " \
                                  f"{set(ALLOWED) - parts}"


@pytest.mark.parametrize("module", sorted(IMPORTS))
def test_a_module_imports_only_what_its_layer_allows(module):
    wrong = sorted({f"{i.target} (line {i.line})" for i in IMPORTS[module] if not allowed(module, i.target)})
    assert not wrong, f"{module} ({part(module)}) may not import: {', '.join(wrong)}"


def test_a_backend_imports_no_other_backend():
    backends = ("hippo.stores.sqlite", "hippo.stores.postgres")
    for module, found in IMPORTS.items():
        for backend in backends:
            if module.startswith(backend):
                assert not [i for i in found if i.target.startswith(backends) and not i.target.startswith(backend)]


def test_the_core_imports_no_store():
    wrong = sorted(f"{module} -> {i.target} (line {i.line})" for module, found in IMPORTS.items()
                   if part(module) == "core" for i in found if part(i.target) == "stores")
    assert not wrong


def test_the_composition_root_imports_none_of_the_ways_in():
    wrong = sorted(f"{i.target} (line {i.line})" for i in IMPORTS["hippo.wiring"] if part(i.target) == "interfaces")
    assert not wrong
    assert "interfaces" not in ALLOWED["wiring"]


def test_there_is_no_import_cycle():
    assert cycles(graph(IMPORTS)) == []


def test_the_cycle_check_finds_cycles_through_lazy_and_typing_imports(tmp_path):
    package = tmp_path / "planted"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from planted import b\n")
    (package / "b.py").write_text("def later():\n    from planted.c import thing\n    return thing\n")
    (package / "c.py").write_text("import planted.a\nthing = 1\n")
    (package / "d.py").write_text("import planted.e\n")
    (package / "e.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from planted.d import X\n")
    (package / "f.py").write_text("import planted.a\n")  # imports a cycle, closes none
    found = cycles(graph(read_imports(package)))
    assert found == [["planted.a", "planted.b", "planted.c"], ["planted.d", "planted.e"]]


# A named tuple's own methods and fields start with an underscore and are public.
NAMED_TUPLE = {"_replace", "_asdict", "_fields", "_make"}


def _private_reads(tree: ast.AST) -> list[tuple[int, str]]:
    """``x._name`` where ``x`` is not ``self`` or ``cls`` and this module never defines ``_name``."""
    own = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)}
    own |= {node.name for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    own |= {t.id for node in ast.walk(tree) if isinstance(node, (ast.Assign, ast.AnnAssign))
            for t in (node.targets if isinstance(node, ast.Assign) else [node.target]) if isinstance(t, ast.Name)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            owner = node.value.id if isinstance(node.value, ast.Name) else None
            if owner not in ("self", "cls") and node.attr not in own | NAMED_TUPLE:
                found.append((node.lineno, f"{ast.unparse(node.value)}.{node.attr}"))
    return found


@pytest.mark.parametrize("path", sorted(SRC.rglob("*.py")), ids=lambda p: module_of(p, SRC))
def test_no_module_reads_another_class_private_attributes(path):
    assert _private_reads(ast.parse(path.read_text(encoding="utf-8"))) == []


def test_the_private_check_sees_a_read():
    tree = ast.parse("class A:\n    def f(self, other):\n        return self._a + other._b\n")
    assert _private_reads(tree) == [(3, "other._b")]


def test_no_folder_holds_more_than_fifteen_modules():
    folders = {p.parent for root in (SRC, TESTS) for p in root.rglob("*.py")}
    crowded = {str(f.relative_to(ROOT)): n for f in folders if (n := len(list(f.glob("*.py")))) > 15}
    assert not crowded


def test_memory_stays_a_thin_facade():
    assert len((SRC / "core" / "memory.py").read_text(encoding="utf-8").splitlines()) < 300


def _fast_tier() -> str:
    script = (ROOT / "scripts" / "test.sh").read_text(encoding="utf-8")
    found = re.search(r'^FAST="(not \((.+)\))"$', script, re.M)
    assert found, "scripts/test.sh names the fast tier's markers in one FAST= line"
    return found.group(1)


def test_the_fast_tier_leaves_out_every_tier_marker():
    lines = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]["ini_options"]
    registered = {line.split(":")[0] for line in lines["markers"]}
    assert set(re.findall(r"\w+", _fast_tier())) - {"not", "or"} == registered


def _collected(*args: str) -> set[str]:
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return {line for line in done.stdout.splitlines() if "::" in line}


@pytest.mark.slow  # three runs of pytest's collection
def test_the_fast_tier_keeps_the_sync_runs_on_sqlite_and_leaves_out_the_other_combinations():
    folder = "tests/contract/blocks"  # behaviour tests over make_mem, none of them on the real model
    every, fast = _collected(folder), _collected("-m", _fast_tier(), folder)
    others = {test for test in every if re.search(r"\[(async|remote)-|postgres", test)}
    assert others and fast and fast == every - others
    assert _collected("-m", "postgres", folder) == {test for test in every if "postgres" in test}
