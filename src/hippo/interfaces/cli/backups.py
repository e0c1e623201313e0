"""``hippo data backup``, ``restore`` and ``check`` (also ``hippo backup``, ``hippo restore``,
``hippo check``): a consistent copy of a live database, putting a checked copy back, and checking
a database. Registered on ``hippo data`` by :mod:`hippo.interfaces.cli.transfer`. And the audit
trail, which a check of a database goes with: ``hippo audit list | verify | trim`` (the group
``audit``; ``hippo audit --since ...`` lists), and the receipts of forgets: ``hippo receipts
verify`` (the group ``receipts``), with the file a forget's ``--receipt FILE`` writes.

The work is the core's and the store's (``Memory.backup``, ``Memory.check``) and the composition
root's for a restore (``wiring.restore``: no memory may be open on the database it replaces);
these commands parse, call and render.
"""

from __future__ import annotations

import os
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from hippo.errors import InvalidInput
from hippo.interfaces.cli import render
from hippo.interfaces.cli.app import JSON, LIMIT, Options, group, opened
from hippo.interfaces.cli.errors import fail

if TYPE_CHECKING:
    from hippo.core.ports.database import CheckReport
    from hippo.types import AuditRecord, Receipt, ReceiptCheck

__all__ = ["RECEIPT", "RECEIPT_FORCE", "audit", "backup", "check", "receipt_file", "receipts", "restore",
           "write_receipt"]

audit = group()
receipts = group()

RECEIPT = typer.Option("--receipt", metavar="FILE", help=(
    "Write the signed receipt of the deletion to FILE (JSON, no text of what went); hippo receipts verify FILE "
    "checks it again later."))
RECEIPT_FORCE = typer.Option("--force", help="With --receipt: replace FILE when it exists.")


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


# -- the audit trail ---------------------------------------------------------------------------


@audit.command("list")
def audit_list(
    ctx: typer.Context,
    since: Annotated[Optional[str], typer.Option("--since", metavar="WHEN",
                                                 help="Records at or after this time (ISO 8601).")] = None,
    until: Annotated[Optional[str], typer.Option("--until", metavar="WHEN",
                                                 help="Records before this time (ISO 8601).")] = None,
    operation: Annotated[Optional[str], typer.Option("--operation", metavar="NAME",
                                                     help="Records of one operation (forget_memory, ...).")] = None,
    chunk_id: Annotated[Optional[str], typer.Option("--id", metavar="ID",
                                                    help="Records that touched this memory.")] = None,
    limit: Annotated[int, LIMIT] = 50,
    json: JSON = False,
) -> None:
    """The agent's audit trail, newest first: every change to its memory, when, by whom
    (an API key's id or local, and the way in), the operation, the ids it touched, counts.

    The trail holds digests of what was stored, never its text.
    """
    with opened(ctx) as mem:
        page = mem.audit(since=since, until=until, operation=operation, chunk_id=chunk_id, limit=limit)
    if json:
        render.emit_json(page.to_dict())
        return
    if not page.items:
        render.note("no audit records")
    for record in page.items:
        typer.echo(_audit_line(record))


def _audit_line(record: "AuditRecord") -> str:
    counts = ", ".join(f"{n} {what.replace('_', ' ')}" for what, n in record.counts.items())
    ids = ", ".join(record.touched) if len(record.touched) <= 3 else f"{len(record.touched)} ids"
    what = f"checkpoint through record {record.checkpoint['through']}" if record.checkpoint else counts
    return f"{record.seq:>6}  {record.at:%Y-%m-%d %H:%M:%S}  {record.operation:<20} {record.who}/{record.surface}" \
           + (f"  {what}" if what else "") + (f"  [{ids}]" if ids else "")


@audit.command("verify")
def audit_verify(
    ctx: typer.Context,
    every_agent: Annotated[bool, typer.Option("--all", help="Every agent's trail in the database, and the "
                                                            "API keys'.")] = False,
    json: JSON = False,
) -> None:
    """Recompute the audit trail's hash chain: exit status 0 only when it holds.

    Each record's hash, each link to the record before, a trimmed trail's signed checkpoint and
    the newest record are checked; the first record that does not hold is named, with why
    (altered, removed, reordered).
    """
    with opened(ctx) as mem:
        report = mem.verify_audit(every_agent=every_agent)
    if json:
        render.emit_json(report.to_dict())
    else:
        typer.echo(f"{render.plural(report.records, 'record')} of {render.plural(report.agents, 'trail')} checked")
        for broken in report.breaks:
            typer.echo(f"BROKEN  {broken.agent_id}  record {broken.seq}: {broken.reason}")
    if not report.ok:
        raise fail(f"{render.plural(len(report.breaks), 'audit trail')} broken")


@audit.command("trim")
def audit_trim(
    ctx: typer.Context,
    days: Annotated[Optional[int], typer.Option("--older-than", metavar="DAYS", help="Remove records older than "
                                                "this many days (default: the audit_retention_days setting).")] = None,
    every: Annotated[bool, typer.Option("--all", help="Every trail of the database (every agent's and the "
                                                      "API keys'), as hippo serve does daily.")] = False,
    json: JSON = False,
) -> None:
    """Remove the agent's old audit records, leaving a signed checkpoint that keeps the trail verifiable."""
    with opened(ctx) as mem:
        removed = mem.trim_audit(older_than_days=days, every_agent=every)
    render.emit_or_note(json, {"removed": removed}, f"removed {render.plural(removed, 'audit record')}")


# -- forget receipts ---------------------------------------------------------------------------


def receipt_file(path: str | None, force: bool) -> Path | None:
    """Where ``--receipt`` writes, checked before anything is deleted: a file in an existing folder,
    not there yet unless ``force``."""
    if path is None:
        return None
    target = Path(os.path.abspath(os.path.expanduser(path)))
    if target.is_dir():
        raise InvalidInput(f"{path} is a folder: name the receipt file to write")
    if not target.parent.is_dir():
        raise InvalidInput(f"no folder {target.parent} to write the receipt into")
    if target.exists() and not force:
        raise InvalidInput(f"{path} exists already: choose another name, or pass --force to replace it")
    return target


def write_receipt(target: Path, receipt: "Receipt | None") -> None:
    """The receipt's JSON, written whole beside ``target`` (readable by its owner only) and renamed onto it."""
    if receipt is None:  # only a preview gives none, and --receipt is refused with one
        raise InvalidInput("the deletion gave no receipt")
    try:
        handle, partial = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".partial")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(receipt.to_json() + "\n")
            os.replace(partial, target)
        except BaseException:
            Path(partial).unlink(missing_ok=True)
            raise
    except OSError as exc:  # the deletion is done: its receipt must not be lost with the file
        sys.stdout.write(receipt.to_json() + "\n")
        raise fail(f"deleted, but the receipt could not be written to {target} ({exc.strerror or exc}): "
                   "it is printed on standard output instead") from None


@receipts.command("verify")
def receipts_verify(
    ctx: typer.Context,
    file: Annotated[str, typer.Argument(metavar="FILE", help=(
        "A receipt: the file --receipt wrote, or a forget's receipt saved from the API; - reads standard input."))],
    json: JSON = False,
) -> None:
    """Check a forget's receipt again, on the database it came from (--db): exit status 0 only
    when it verifies.

    Opens the receipt's agent (--agent, when given, must be that one). Checks the receipt's
    signature (issued by this database, unaltered), its record in the audit trail, and that no
    place of the database holds anything it removed: no row with a removed id, no copy of a
    removed text (found by keyed word fingerprints, inside a longer text too), no index entry or
    log page left. Prints each place, ok or FAILED, and what was found there.
    """
    from hippo.types import Receipt

    text = sys.stdin.read() if file == "-" else Path(file).read_text(encoding="utf-8")
    try:
        receipt = Receipt.from_json(text)
    except ValueError as exc:
        raise InvalidInput(f"{'standard input' if file == '-' else file} is not a receipt: {exc}") from None
    root = ctx.find_root()
    options: Options = root.obj or Options()
    if options.agent is None:
        root.obj = replace(options, agent=receipt.agent_id)
    with opened(ctx) as mem:
        check = mem.verify_receipt(receipt)
    if json:
        render.emit_json(check.to_dict())
    else:
        typer.echo(_receipt_lines(receipt, check))
    if not check.verified:
        raise fail(f"the receipt does not verify: {', '.join(check.failed)}")


def _receipt_lines(receipt: "Receipt", check: "ReceiptCheck") -> str:
    width = max(len(c.place) for c in check.checks)
    lines = [f"{'ok    ' if c.ok else 'FAILED'}  {c.place:<{width}}  {c.detail}" for c in check.checks]
    head = (f"receipt of {receipt.operation} by agent {receipt.agent_id!r} at {receipt.issued_at:%Y-%m-%d %H:%M:%S}: "
            f"{len(receipt.removed)} removed")
    tail = "verified" if check.verified else f"NOT verified: {render.plural(len(check.failed), 'place')} failed"
    return "\n".join([head, *lines, tail])
