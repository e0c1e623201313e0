"""The CLI's error boundary: which error gives which exit code, in one table.

0 is success, 1 a problem the user can fix (every :class:`hippo.errors.HippoError`,
a file that cannot be read or written), 2 a usage error (Typer's own). A user
error prints one line, ``error: <message>``, on stderr. Anything else is a bug:
it is logged (the traceback only with ``--verbose``) and reported in one line
with exit code 1. No traceback reaches the user otherwise.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from typing import Any

import typer

from hippo.errors import HippoError, missing_extra
from hippo.interfaces.cli.groups import Root

try:  # Typer vendors Click from 0.29 on; before, it uses the click package.
    from typer._click.exceptions import ClickException
except ImportError:  # pragma: no cover - older Typer
    from click.exceptions import ClickException  # type: ignore[assignment]

__all__ = ["EXIT_CODES", "USAGE", "USER_ERROR", "BoundaryGroup", "exit_code_for", "fail"]

log = logging.getLogger("hippo.cli")

USER_ERROR = 1
USAGE = 2  # Typer/Click's own code for bad options and arguments

# The one table. The first class in an exception's MRO found here decides. The CLI tells no
# error class from another by its code: every one is the user's to fix (the message says how).
EXIT_CODES: dict[type[BaseException], int] = {
    HippoError: USER_ERROR,
    json.JSONDecodeError: USER_ERROR,  # a file that is not what it claims
    UnicodeDecodeError: USER_ERROR,
    OSError: USER_ERROR,  # a file or directory that cannot be read or written
}


def exit_code_for(exc: BaseException) -> int | None:
    """The exit code of a known user error, ``None`` for anything else."""
    for cls in type(exc).__mro__:
        if cls in EXIT_CODES:
            return EXIT_CODES[cls]
    return None


def _message(exc: BaseException) -> str:
    if isinstance(exc, HippoError):
        text = exc.message
    elif isinstance(exc, OSError) and exc.filename is not None:
        text = f"{exc.strerror or exc}: {exc.filename}"
    else:
        text = str(exc) or type(exc).__name__
    return " ".join(text.split())  # one line, whatever the message held


def fail(message: str, code: int = USER_ERROR) -> typer.Exit:
    """Print ``error: message`` on stderr; raise the returned Exit to stop with ``code``."""
    print(f"error: {' '.join(message.split())}", file=sys.stderr)
    return typer.Exit(code)


def _silence_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's final flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no real file descriptor (tests): nothing to silence
        pass


class BoundaryGroup(Root):
    """The root command group: every command runs inside this error boundary."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort, ClickException):
            raise
        except BrokenPipeError:  # the reader went away (hippo export | head): stop quietly
            _silence_stdout()
            raise typer.Exit(USER_ERROR) from None
        except KeyboardInterrupt:
            print("interrupted", file=sys.stderr)
            raise typer.Exit(130) from None
        except Exception as exc:  # the surface boundary: map, or log the unexpected
            exc = missing_extra(exc) or exc  # an optional package not installed: name its extra
            code = exit_code_for(exc)
            if code is None:
                log.debug("unexpected error", exc_info=exc)
                raise fail(f"unexpected {type(exc).__name__}: {_message(exc)} (run with --verbose for details)") \
                    from None
            raise fail(_message(exc), code) from None
