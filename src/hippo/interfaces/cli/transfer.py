"""``hippo data``: moving memory in and out: export, import (JSON Lines), reembed, and scrub; and
the whole database's backup, restore and check (:mod:`hippo.interfaces.cli.backups`).

The format is described in ``hippo.core.transfer``: a header line, one line per
chunk (a fact's with the wordings merged into it), one per block. An export to a regular file is written to a temporary
file that replaces it only when complete (a FIFO or a device is written to
directly); imports are read and validated in full before anything is written.
"""

from __future__ import annotations

import errno
import json as jsonlib
import os
import stat
import sys
import tempfile
from collections import Counter
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Iterator, Optional, TextIO

import typer

from hippo.core.validation import parse_json, shown
from hippo.errors import InvalidInput, NotFound
from hippo.interfaces.cli import backups, render
from hippo.interfaces.cli.app import JSON, Options, group, opened

if TYPE_CHECKING:
    from hippo.core.memory import Memory

data = group()
for _command in (backups.backup, backups.restore, backups.check):  # backups.py: a database's upkeep
    data.command()(_command)


@contextmanager
def _output(file: str | None) -> Iterator[TextIO]:
    """Where an export goes: standard output for ``-`` or none, else what ``file`` names.

    A regular file (or a new one) is written to a private temporary file beside it and moved
    over it only when complete, with the mode it had (a new file: the umask's). Through a
    symlink, the link stays and its target is written. Anything else (a FIFO, a device) is
    written to directly, never replaced by a file of memories.
    """
    if file in (None, "-"):
        yield sys.stdout
        return
    assert file is not None
    try:
        found: os.stat_result | None = os.stat(file)  # through symlinks
    except FileNotFoundError:
        found = None
    if found is not None and stat.S_ISDIR(found.st_mode):
        raise IsADirectoryError(errno.EISDIR, "cannot export to a directory", file)
    if found is not None and not stat.S_ISREG(found.st_mode):
        with open(file, "w", encoding="utf-8") as out:
            yield out
        return
    with _replacing(Path(os.path.realpath(file)), found) as out:
        yield out


@contextmanager
def _replacing(target: Path, found: os.stat_result | None) -> Iterator[TextIO]:
    """A temporary file (created 0600 by mkstemp) renamed over ``target`` once written in full."""
    mode = stat.S_IMODE(found.st_mode) if found is not None else 0o666 & ~_umask()
    handle, partial = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".partial")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            yield out
            out.flush()
            os.fsync(out.fileno())
            os.fchmod(out.fileno(), mode)
            if found is not None and os.geteuid() == 0:
                os.fchown(out.fileno(), found.st_uid, found.st_gid)  # root exporting over a user's file
        os.replace(partial, target)
    finally:
        with suppress(FileNotFoundError):
            os.unlink(partial)


def _umask() -> int:
    current = os.umask(0o077)
    os.umask(current)
    return current


def _dumps(record: Any) -> str:
    return jsonlib.dumps(record, ensure_ascii=False, separators=(",", ":"))


@data.command()
def export(
    ctx: typer.Context,
    file: Annotated[Optional[str], typer.Argument(
        metavar="FILE", help="Where to write (default or -: standard output).")] = None,
    vectors: Annotated[bool, typer.Option("--vectors", help="Include each chunk's vector (base64 float32).")] = False,
) -> None:
    """Export the agent's memory as JSON Lines: a header, every chunk, every block."""
    with opened(ctx) as mem:
        records = mem.export_records(vectors=vectors)
        header = next(records)
        total = header["chunks"] + header["blocks"]  # type: ignore[typeddict-item]
        written: Counter[str] = Counter()
        with render.ProgressBar("exporting") as bar, _output(file) as out:
            out.write(_dumps(header) + "\n")
            for record in records:
                out.write(_dumps(record) + "\n")
                written[record["type"]] += 1
                bar(written.total(), max(total, written.total()))
            out.flush()
    where = "standard output" if file in (None, "-") else file
    render.note(f"exported {render.plural(written['chunk'], 'chunk')} and {render.plural(written['block'], 'block')}"
                f" of agent {header['agent_id']!r} to {where}"  # type: ignore[typeddict-item]  # the header record
                + (" with vectors" if header.get("vectors") else ""))


def _read_records(file: str) -> list[dict[str, Any]]:
    """Every line of a JSON Lines file as a dict; the first bad line is an error naming it."""
    if file == "-":
        lines = sys.stdin.read().splitlines()
    else:
        try:
            with open(file, encoding="utf-8") as handle:
                lines = handle.read().splitlines()
        except UnicodeDecodeError:
            raise  # the error table's: a file that is not text
        except ValueError as exc:  # a NUL or a lone surrogate in the name
            raise InvalidInput(f"cannot open {shown(file)}: {exc}") from None
    records: list[dict[str, Any]] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = parse_json(line, "the line")
        except InvalidInput as exc:
            raise InvalidInput(f"{file}: line {number} is not JSON: {exc.message}") from None
        if not isinstance(record, dict):
            raise InvalidInput(f"{file}: line {number} is not a JSON object")
        records.append(record)
    return records


@data.command("import")
def import_(
    ctx: typer.Context,
    file: Annotated[str, typer.Argument(metavar="FILE", help="A file made by hippo data export (- reads standard "
                                                             "input), or another memory system's file or folder "
                                                             "(--format).")],
    format: Annotated[str, typer.Option(
        "--format", "-f", help="hippo (an export), markdown (MEMORY.md, memory/*.md), mcp-memory (the MCP memory "
                               "server's JSONL), mem0 (get_all output) or letta (an .af agent file).")] = "hippo",
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Read and report; write nothing.")] = False,
    json: JSON = False,
) -> None:
    """Import into the agent (--agent); safe to run twice.

    A hippo export keeps ids and strength: chunks the agent already has (same id,
    or a memory with the same text) are skipped; a block is written when the
    file's is newer; vectors from another model, or none, are replaced by this
    database's embedder's. Other formats become memories with source "migration";
    what the agent already holds, or what cannot be read, is skipped and reported.
    """
    if format != "hippo":
        return _import_other(ctx, file, format, dry_run, json)
    if dry_run:
        raise InvalidInput("--dry-run is for the other formats: a hippo export can be checked with hippo data "
                           "import into a scratch database (--db)")
    records = _read_records(file)
    with opened(ctx, create=True) as mem, render.ProgressBar("importing") as bar:
        result = mem.import_records(records, progress=bar)
    if json:
        return render.emit_json(result.to_dict())
    parts = [f"imported {render.plural(result.inserted, 'chunk')} into agent {result.agent_id!r}",
             f"{result.skipped} already there", f"{render.plural(result.blocks_written, 'block')} written"]
    if result.merged:
        parts.append(f"{render.plural(result.merged, 'merged wording')} kept with their facts")
    if result.renamed:
        parts.append(f"{result.renamed} given new ids (taken by another agent)")
    if result.embedded:
        parts.append(f"{result.embedded} embedded with this database's model")
    if result.pending:
        parts.append(f"{result.pending} without a vector (run hippo data reembed)")
    render.note("; ".join(parts))


SKIPS_SHOWN = 20  # problem lines before "... and N more": --json lists every one


def _import_other(ctx: typer.Context, file: str, format: str, dry_run: bool, json: bool) -> None:
    with _import_target(ctx, dry_run) as mem, render.ProgressBar("importing") as bar:
        report = mem.import_from(file, format, dry_run=dry_run, progress=bar)
    if json:
        return render.emit_json(report.to_dict())
    problems = report.problems
    for item in problems[:SKIPS_SHOWN]:
        render.note(f"skipped {item.where}: {item.reason}")
    if len(problems) > SKIPS_SHOWN:
        render.note(f"... and {len(problems) - SKIPS_SHOWN} more skipped (--json lists them all)")
    verb = "would import" if dry_run else "imported"
    memories = f"{report.imported} memor{'y' if report.imported == 1 else 'ies'}"
    if report.facts:
        memories += f" ({render.plural(report.facts, 'fact')})"
    where = ", ".join(f"{agent} ({count})" for agent, count in report.agents.items())
    render.note(f"{verb} {memories} and {render.plural(report.blocks, 'block')} "
                f"from {format}" + (f", {render.plural(report.links, 'link')}" if report.links else "")
                + (f" into agents {where}" if where else "")
                + f"; {len(report.skipped) - len(problems)} already there, {len(problems)} skipped")


@contextmanager
def _import_target(ctx: typer.Context, dry_run: bool) -> Iterator["Memory"]:
    """The memory to import into; for a dry run against a database that is not there yet, an
    empty one in memory (nothing to compare with, and no file made for a look)."""
    from hippo import wiring

    options: Options = ctx.find_root().obj or Options()
    if not dry_run or wiring.database_exists(options.path(), options.agent):
        with opened(ctx, create=not dry_run) as mem:
            yield mem
        return
    with wiring.open(":memory:", agent_id=options.agent, embedder=options.embedder, llm=options.llm) as scratch:
        yield scratch


@data.command()
def reembed(
    ctx: typer.Context,
    embedder: Annotated[Optional[str], typer.Option(
        "--embedder", metavar="SPEC",
        help="Switch the whole database (every agent) to this model: drop every vector and embed every "
             "chunk again.")] = None,
    json: JSON = False,
) -> None:
    """Fill the agent's pending vectors, or switch the database to another embedding model."""
    from hippo import wiring

    with render.ProgressBar("embedding") as bar:
        if embedder is None:
            with opened(ctx) as mem:
                result = mem.reembed(progress=bar)
        else:
            path = (ctx.find_root().obj or Options()).path()
            if not wiring.database_exists(path):
                raise NotFound(f"no database at {path} (check --db)")
            result = wiring.reembed(path, embedder=embedder, progress=bar)
    if json:
        return render.emit_json(result.to_dict())
    dimension = f", dimension {result.dimension}" if result.dimension else ""
    render.note(f"embedded {result.embedded}; {result.pending} still pending; model {result.model_id}{dimension}")


@data.command()
def scrub(ctx: typer.Context, json: JSON = False) -> None:
    """Remove the text of forgotten memories from the database files now (every agent). SQLite does
    this by itself; on PostgreSQL it rewrites the tables (VACUUM FULL), locking them while it runs."""
    with opened(ctx) as mem:
        pending = mem.scrub()
    render.emit_or_note(json, {"scrubbed": pending is None, "note": pending},
                        "scrubbed: no deleted text is left in the database files" if pending is None
                        else f"not yet: {pending}")
