"""The ``hippo`` console script: runs the CLI, or says in one line which extra it needs.

The CLI package imports Typer and Rich at once; a ``pip install hippo-memory``
without the ``cli`` extra still installs the ``hippo`` command, which must then
say what to install instead of printing a traceback.
"""

from __future__ import annotations

import sys

__all__ = ["main"]


def main() -> None:
    """The ``hippo`` entry point."""
    from hippo.errors import missing_extra

    try:
        from hippo.interfaces.cli import main as run
    except ImportError as exc:
        missing = missing_extra(exc)
        if missing is None:
            raise
        print(f"error: the hippo command needs the cli extra: {missing.message}", file=sys.stderr)
        sys.exit(1)
    run()
