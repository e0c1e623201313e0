"""The ``hippo`` command line (Typer + Rich): a thin layer that parses, calls the core, renders.

Every command lives on one Typer ``app`` (``hippo.surfaces.cli.app``). A
surface that brings commands of its own (``serve``, ``keys``, ``mcp``) defines
them in its module with ``@app.command()`` or ``app.add_typer(...)`` and is
imported below, where the command modules are listed.
"""

from __future__ import annotations

import logging
import sys

# The command modules: importing one registers its commands on ``app``. Other
# surfaces' commands (service: serve, keys) join this list the same way.
from hippo.surfaces.cli import (  # noqa: F401
    blocks,
    capture,
    curation,
    experiences,
    hooks,
    memories,
    service,
    transfer,
)
from hippo.surfaces.cli.app import app

__all__ = ["app", "main"]


def main() -> None:
    """The ``hippo`` entry point."""
    logging.basicConfig(level=logging.WARNING, format="hippo: %(message)s", stream=sys.stderr)
    try:
        app(prog_name="hippo")
    except Exception as exc:  # last resort: errors.BoundaryGroup already maps everything it can
        logging.getLogger("hippo.cli").debug("unexpected error", exc_info=exc)
        print(f"error: unexpected {type(exc).__name__}: {exc}", file=sys.stderr)
        sys.exit(1)
