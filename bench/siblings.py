"""One benchmark script used by another: bench/ holds scripts, not a package, so a script loads
its siblings by path (once; later loads get the same module)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

__all__ = ["load"]

HERE = Path(__file__).resolve().parent


def load(name: str) -> ModuleType:
    """``bench/<name>.py`` as the module ``bench_<name>``."""
    known = sys.modules.get(f"bench_{name}")
    if known is not None:
        return known
    spec = importlib.util.spec_from_file_location(f"bench_{name}", HERE / f"{name}.py")
    if spec is None or spec.loader is None:
        raise ImportError(f"no benchmark script {name}.py in {HERE}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
