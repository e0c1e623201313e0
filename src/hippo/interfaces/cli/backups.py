"""``hippo data backup``, ``restore`` and ``check`` (also ``hippo backup``, ``hippo restore``,
``hippo check``): a consistent copy of a live database, putting a checked copy back, and checking
a database. Registered on ``hippo data`` by :mod:`hippo.interfaces.cli.transfer`.

The work is the core's and the store's (``Memory.backup``, ``Memory.check``) and the composition
root's for a restore (``wiring.restore``: no memory may be open on the database it replaces);
these commands parse, call and render.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from hippo.interfaces.cli import render
from hippo.interfaces.cli.app import JSON, Options, opened
from hippo.interfaces.cli.errors import fail

if TYPE_CHECKING:
    from hippo.core.ports.database import CheckReport

__all__ = ["backup", "check", "restore"]


def backup(
    ctx: typer.Context,
    path: Annotated[str, typer.Argument(metavar="PATH", help="The file to write the copy to.")],
    force: Annotated[bool, typer.Option("--force", help="Replace PATH when it exists.")] = False,
    json: JSON = False,
) -> None:
    """Copy the whole database (every agent) to PATH while servers go on writing to it.

    The copy is one snapshot (SQLite's online backup): each write is in it whole or not at all.
    It is written beside PATH and renamed once complete, readable by its owner only; ANN index
    files are left out and built again after a restore. A PostgreSQL database is backed up with
    pg_dump: the error says how.
    """
    with opened(ctx) as mem, render.ProgressBar("backing up") as bar:
        where = mem.database
        result = mem.backup(path, overwrite=force, progress=bar)
    render.emit_or_note(json, result.to_dict(), f"backed up {where} to {result.path} ({result.bytes:,} bytes, "
                                                f"schema version {result.schema_version})")


def restore(
    ctx: typer.Context,
    backup: Annotated[str, typer.Argument(metavar="BACKUP", help="A file made by hippo backup.")],
    json: JSON = False,
) -> None:
    """Put a backup in place of the database (--db), after checking it.

    The backup must open as a hippo database, pass SQLite's integrity check and have a schema
    version this hippo can open; otherwise nothing changes. Stop every hippo serve and hippo mcp
    using the database first: a database another process has open is refused when that can be
    seen, and one opened while the restore runs is not. The database's own ANN index files are
    removed and built again from the restored vectors.

    hippo restore ID, with the id of an archived memory that is not a file, still brings that
    memory back from the archive (hippo archive restore ID).
    """
    from hippo import wiring

    options: Options = ctx.find_root().obj or Options()
    with render.ProgressBar("restoring") as bar:
        result = wiring.restore(backup, options.db, agent_id=options.agent, progress=bar)
    render.emit_or_note(json, result.to_dict(), f"restored {result.backup} into {result.database} "
                                                f"({result.bytes:,} bytes, schema version {result.schema_version})")


def check(ctx: typer.Context, json: JSON = False) -> None:
    """Check the database (every agent): exit status 0 only when every check holds.

    On SQLite: its integrity and foreign keys, the keyword indexes against the chunks, every
    chunk's vector (or counted as pending), the saved ANN index files, the schema version. On
    PostgreSQL: the schema version, the counts, the words and vector rows against the chunks.
    """
    with opened(ctx) as mem:
        report = mem.check()
    if json:
        render.emit_json(report.to_dict())
    else:
        typer.echo(_shown(report))  # one line a finding, never wrapped
    if not report.ok:
        raise fail(f"{render.plural(len(report.failed), 'check')} failed: "
                   + ", ".join(finding.name for finding in report.failed))


def _shown(report: "CheckReport") -> str:
    width = max(len(finding.name) for finding in report.findings)
    lines = [f"{'ok  ' if finding.ok else 'FAIL'}  {finding.name:<{width}}  {finding.detail}"
             for finding in report.findings]
    counts = ", ".join(f"{count:,} {name.replace('_', ' ')}" for name, count in report.counts.items())
    return "\n".join([f"{report.location}:", *lines, f"counted: {counts}"])
