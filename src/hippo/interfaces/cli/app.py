"""The Typer application, its global options, and how a command opens the memory.

The commands live in groups (``hippo memories recall``), each on a ``typer.Typer`` of its own
module, listed in :mod:`hippo.interfaces.cli.groups` and imported only when used. Nothing heavy is
imported here: ``hippo.open`` runs inside commands, so ``hippo --help`` loads no model runtime,
no command module and touches no database.
"""

from __future__ import annotations

import logging
import re
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any, Callable, Iterator, Optional

import typer

from hippo.core.ports.audit import acting_as
from hippo.core.validation import parse_json
from hippo.errors import InvalidInput, NotFound
from hippo.interfaces.cli.errors import BoundaryGroup

if TYPE_CHECKING:
    from hippo.core.memory import Memory

__all__ = ["JSON", "LIMIT", "META", "OBSERVED", "TAG", "Kind", "Options", "app", "group", "metadata_from", "opened",
           "read_text", "when"]

app = typer.Typer(
    name="hippo",
    cls=BoundaryGroup,
    help="Long-term memory for LLM agents, from the shell.",
    epilog="hippo GROUP --help lists a group's commands. Each command also answers to its one-word name of "
           "earlier releases: hippo recall QUERY is hippo memories recall QUERY.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,  # Click's plain help: paragraphs flow whole, and no Rich to import for it
    pretty_exceptions_enable=False,  # the boundary in errors.py reports errors in one line
    context_settings={"help_option_names": ["-h", "--help"]},
)

JSON = Annotated[bool, typer.Option("--json", help="Print JSON on stdout instead of a table.")]
LIMIT = typer.Option("--limit", "-n", metavar="N", help="At most this many.")
TAG = typer.Option("--tag", "-t", metavar="TAG", help="A tag (repeatable).")
META = typer.Option("--meta", "-m", metavar="KEY=VALUE",
                    help="A metadata field (repeatable); VALUE is JSON if it parses, else text.")
OBSERVED = typer.Option("--observed-at", metavar="WHEN",
                        help="When it happened: ISO-8601 (2025-03-01T12:00:00Z) or an age like 3d, 12h.")


def group() -> typer.Typer:
    """The registry of one group's commands (its help and place are in ``groups.GROUPS``)."""
    return typer.Typer(rich_markup_mode=None)


class Kind(str, Enum):
    fact = "fact"
    memory = "memory"


@dataclass(frozen=True, slots=True)
class Options:
    """The global options; unset ones fall back to HIPPO_* variables, hippo.toml, then defaults."""

    db: str | None = None
    agent: str | None = None
    embedder: str | None = None
    llm: str | None = None

    def path(self) -> str:
        from hippo import wiring

        return wiring.settings(self.db).db


def _print_version(value: bool) -> None:
    if value:
        from hippo.wiring import __version__

        typer.echo(f"hippo {__version__}")
        raise typer.Exit()


@app.callback()
def _global(
    ctx: typer.Context,
    db: Annotated[Optional[str], typer.Option(
        "--db", envvar="HIPPO_DB", metavar="PATH",
        help="Database file or postgresql:// URL (default: hippo.toml's db, else ./hippo.db).")] = None,
    agent: Annotated[Optional[str], typer.Option("--agent", envvar="HIPPO_AGENT_ID", metavar="ID",
                                                 help="Agent whose memory to use (default: 'default').")] = None,
    embedder: Annotated[Optional[str], typer.Option(
        "--embedder", metavar="SPEC",
        help="Embedder: local (default), ollama:MODEL, openai:MODEL, fake, or none for keywords only.")] = None,
    llm: Annotated[Optional[str], typer.Option(
        "--llm", metavar="SPEC", help="LLM for fact extraction (openai:MODEL, anthropic:MODEL); "
                                      "default: offline rules.")] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log details (and tracebacks) on stderr.")] = False,
    version: Annotated[bool, typer.Option("--version", is_eager=True, callback=_print_version,
                                          help="Print hippo's version and exit.")] = False,
) -> None:
    """hippo: long-term memory for LLM agents, from the shell."""
    if verbose:
        logging.getLogger("hippo").setLevel(logging.DEBUG)
    ctx.obj = Options(db=db, agent=agent, embedder=embedder, llm=llm)
    ctx.with_resource(acting_as("local", "cli"))  # the audit trail's actor of this command's changes


@contextmanager
def opened(ctx: typer.Context, *, create: bool = False) -> Iterator["Memory"]:
    """The memory the global options name, closed afterwards.

    Commands that only read pass ``create=False``: a mistyped ``--db`` is then an
    error instead of a new empty database.
    """
    from hippo import wiring

    options: Options = ctx.find_root().obj or Options()
    path = options.path()
    existed = wiring.database_exists(path, options.agent)
    if not create and not existed:
        raise NotFound(f"no database at {path} (check --db, or store something first)")
    try:
        mem = wiring.open(path, agent_id=options.agent, embedder=options.embedder, llm=options.llm)
    except BaseException:
        if not existed:  # a command that could not even open leaves no new database behind
            wiring.discard_database(path, options.agent)
        raise
    try:
        yield mem
    except BaseException:
        # A command that failed on a database it just created leaves nothing behind, but only while the
        # database is still empty: Ctrl-C on a fresh `hippo serve` must not take what it stored with it.
        if not existed and _is_empty(mem):
            mem.close()
            wiring.discard_database(path, options.agent)
        raise
    finally:
        mem.close()


def outcome(ctx: typer.Context, json: bool, run: Callable[["Memory"], Any], said: Callable[[Any], str], *,
            create: bool = False) -> None:
    """Run one operation on the memory the global options name, then show what it did: with --json
    its result's ``to_dict()`` on standard output, else ``said(result)`` as one note."""
    from hippo.interfaces.cli import render

    with opened(ctx, create=create) as mem:
        result = run(mem)
    render.emit_or_note(json, result.to_dict(), said(result))


def _is_empty(mem: "Memory") -> bool:
    try:
        return mem.holds_nothing()
    except Exception:  # when in doubt, keep the file
        return False


def read_text(value: str, name: str) -> str:
    """The argument itself, or standard input when it is ``-``."""
    if value != "-":
        return value
    text = sys.stdin.read()
    if not text.strip():
        raise InvalidInput(f"{name} read from standard input is empty")
    return text.rstrip("\n")


def metadata_from(tags: list[str] | None, meta: list[str] | None) -> dict[str, Any] | None:
    """``--tag`` and ``--meta key=value`` options as one metadata object."""
    fields: dict[str, Any] = {}
    for item in meta or []:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise InvalidInput(f"--meta takes key=value, got {item!r}")
        fields[key.strip()] = parse_json(raw, f"--meta {key.strip()}", or_text=True)  # JSON when it parses
    if tags:
        fields["tags"] = list(dict.fromkeys(tags))
    return fields or None


_RELATIVE = re.compile(r"^(\d+)\s*(m|min|h|d|w)$")
_UNITS = {"m": "minutes", "min": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def when(value: str | None) -> str | None:
    """``7d``, ``12h``, ``30m``, ``2w`` (that long ago), or ISO-8601 text passed on to the core."""
    if value is None:
        return None
    match = _RELATIVE.match(value.strip().lower())
    if match is None:
        return value
    try:
        return (datetime.now(timezone.utc) - timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})).isoformat()
    except (OverflowError, ValueError):  # 99999999d reaches back before the year 1
        raise InvalidInput(f"{value!r} reaches back further than dates go") from None
