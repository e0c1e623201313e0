"""The ``hippo`` command line (Typer + Rich): a thin layer that parses, calls the core, renders.

The commands live in groups (``hippo memories recall``), each defined in its module on a
``typer.Typer`` of its own; :mod:`hippo.interfaces.cli.groups` lists them and imports a group's
module only when one of its commands runs, so ``hippo --help`` imports none. A surface that brings
commands of its own (``server``, ``keys``) defines them the same way and joins ``groups.GROUPS``.
"""

from __future__ import annotations

import logging
import sys

from hippo.interfaces.cli.app import app

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
