"""``hippo archive``: maintain (archive the least useful memories over the size cap), search
and restore.

``hippo archive QUERY``, the search's form before the groups, still searches (see
:data:`hippo.interfaces.cli.groups.GROUPS`).
"""

from __future__ import annotations

from typing import Annotated

import typer

from hippo.interfaces.cli import render
from hippo.interfaces.cli.app import JSON, LIMIT, group, opened, outcome

archive = group()

ID = typer.Argument(metavar="ID", help="The id of an archived memory.")


@archive.command()
def search(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="Words to look for among archived memories.")],
    limit: Annotated[int, LIMIT] = 10,
    json: JSON = False,
) -> None:
    """Search the archive by words (what maintain moved out of recall)."""
    with opened(ctx) as mem:
        found = mem.search_archive(query, limit)
    render.emit_or_print(json, {"hits": [h.to_dict() for h in found]}, lambda: render.archive_table(found))


@archive.command()
def restore(ctx: typer.Context, chunk_id: Annotated[str, ID], json: JSON = False) -> None:
    """Bring an archived memory back into recall (same id, embedded again)."""
    outcome(ctx, json, lambda mem: mem.restore_memory(chunk_id), lambda chunk: f"restored {chunk.id}")


@archive.command()
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
