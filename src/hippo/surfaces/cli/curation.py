"""Commands of curation: the agent's feedback (reinforce, demote) and the archive
(maintain, archive, restore)."""

from __future__ import annotations

from typing import Annotated

import typer

from hippo.surfaces.cli import render
from hippo.surfaces.cli.app import JSON, LIMIT, app, opened

ID = typer.Argument(metavar="ID", help="The id of a fact or memory.")


@app.command()
def reinforce(ctx: typer.Context, chunk_id: Annotated[str, ID], json: JSON = False) -> None:
    """Mark a memory as useful: it ranks higher where relevant, and counts as fresh again."""
    _feedback(ctx, chunk_id, json, "reinforced")


@app.command()
def demote(ctx: typer.Context, chunk_id: Annotated[str, ID], json: JSON = False) -> None:
    """Mark a memory as stale or wrong: it ranks lower; nothing is deleted."""
    _feedback(ctx, chunk_id, json, "demoted")


def _feedback(ctx: typer.Context, chunk_id: str, json: bool, done: str) -> None:
    with opened(ctx) as mem:
        chunk = mem.reinforce_memory(chunk_id) if done == "reinforced" else mem.demote_memory(chunk_id)
    render.emit_or_note(json, chunk.to_dict(), f"{done} {chunk.id}: feedback {chunk.feedback:+d}")


@app.command()
def related(ctx: typer.Context, chunk_id: Annotated[str, ID], json: JSON = False) -> None:
    """A memory's links: memories recalled with it (strongest first) and its supersession history."""
    with opened(ctx) as mem:
        found = mem.related(chunk_id)
    render.emit_or_print(json, {"links": [link.to_dict() for link in found]}, render.links_table(found))


@app.command()
def maintain(ctx: typer.Context, json: JSON = False) -> None:
    """Over the size cap (max_db_bytes), archive the least useful memories until under it; never deletes."""
    with render.ProgressBar("archiving") as bar, opened(ctx) as mem:
        result = mem.maintain(progress=bar)
    if json:
        return render.emit_json(result.to_dict())
    if result.cap is None:
        return render.note("no size cap set (max_db_bytes): nothing to do")
    render.note(f"{result.bytes_before:,} bytes against a cap of {result.cap:,}: archived {result.archived}, "
                f"now {result.bytes_after:,} bytes" + (f"; {result.note}" if result.note else ""))


@app.command()
def archive(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="Words to look for among archived memories.")],
    limit: Annotated[int, LIMIT] = 10,
    json: JSON = False,
) -> None:
    """Search the archive by words (what maintain moved out of recall)."""
    with opened(ctx) as mem:
        found = mem.search_archive(query, limit)
    render.emit_or_print(json, {"hits": [h.to_dict() for h in found]}, render.archive_table(found))


@app.command()
def restore(ctx: typer.Context, chunk_id: Annotated[str, ID], json: JSON = False) -> None:
    """Bring an archived memory back into recall (same id, embedded again)."""
    with opened(ctx) as mem:
        chunk = mem.restore_memory(chunk_id)
    render.emit_or_note(json, chunk.to_dict(), f"restored {chunk.id}")
