"""``hippo blocks``: named memory blocks (persona, human) read and edited whole or in place."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Optional

import typer

from hippo.errors import InvalidInput, NotFound
from hippo.interfaces.cli import render
from hippo.interfaces.cli.app import JSON, group, opened, read_text
from hippo.types import UNCHANGED

if TYPE_CHECKING:
    from hippo.types import BlockResult

blocks = group()

KEY = typer.Argument(metavar="KEY", help="The block's name, e.g. persona or human.")


def _done(result: "BlockResult", json: bool, what: str) -> None:
    """Render a block write (a failure raised its error: exit 1 through the CLI's error table)."""
    render.emit_or_note(json, result.to_dict(), f"{what} block {result.key!r} ({len(result.value or '')} characters)")


@blocks.command("get")
def get(ctx: typer.Context, key: Annotated[str, KEY], json: JSON = False) -> None:
    """Print a block's text (exit 1 when there is no such block)."""
    with opened(ctx) as mem:
        block = mem.memory_block(key)
    if block is None:
        raise NotFound(f"there is no memory block {key!r}")
    if json:
        return render.emit_json(block.to_dict())
    typer.echo(block.value)  # raw, so that it pipes


@blocks.command("list")
def list_blocks(ctx: typer.Context, json: JSON = False) -> None:
    """List every block with its size and limit."""
    with opened(ctx) as mem:
        found = mem.memory_blocks()
    if json:
        return render.emit_json([block.to_dict() for block in found])
    for block in found:
        limit = f", limit {block.char_limit}" if block.char_limit is not None else ""
        render.print_table(f"{block.key}: {len(block.value)} characters{limit}")


@blocks.command("context")
def context(
    ctx: typer.Context,
    max_tokens: Annotated[int, typer.Option("--max-tokens", metavar="N", help="Budget for the section (estimated).")]
    = 2000,
    json: JSON = False,
) -> None:
    """Print every block as one system-prompt section, in a stable order, within a token budget."""
    with opened(ctx) as mem:
        section = mem.context(max_tokens)
    if json:
        return render.emit_json({"context": section})
    typer.echo(section)  # raw, so that it pipes


@blocks.command("set")
def set_(
    ctx: typer.Context,
    key: Annotated[str, KEY],
    value: Annotated[str, typer.Argument(help="The whole new text; - reads standard input.")],
    char_limit: Annotated[Optional[int], typer.Option(
        "--char-limit", min=1, metavar="N", help="Cap this block's length from now on.")] = None,
    no_limit: Annotated[bool, typer.Option("--no-limit", help="Remove this block's own cap.")] = False,
    json: JSON = False,
) -> None:
    """Write a block's whole text, creating it if missing."""
    if no_limit and char_limit is not None:
        raise InvalidInput("give --char-limit or --no-limit, not both")
    text = read_text(value, "value")
    limit = None if no_limit else (char_limit if char_limit is not None else UNCHANGED)
    with opened(ctx, create=True) as mem:
        result = mem.set_memory_block(key, text, char_limit=limit)
    _done(result, json, "created" if result.created else "set")


@blocks.command("append")
def append(
    ctx: typer.Context,
    key: Annotated[str, KEY],
    text: Annotated[str, typer.Argument(help="The line to add; - reads standard input.")],
    json: JSON = False,
) -> None:
    """Append a line to a block, creating it if missing."""
    line = read_text(text, "text")
    with opened(ctx, create=True) as mem:
        result = mem.append_memory_block(key, line)
    _done(result, json, "created" if result.created else "appended to")


@blocks.command("replace")
def replace(
    ctx: typer.Context,
    key: Annotated[str, KEY],
    old: Annotated[str, typer.Argument(help="The text to find (every occurrence is replaced).")],
    new: Annotated[str, typer.Argument(help="What to put instead (may be empty).")],
    json: JSON = False,
) -> None:
    """Replace text inside a block (exit 1 when the block or the text is missing)."""
    with opened(ctx) as mem:
        result = mem.replace_memory_block(key, old, new)
    _done(result, json, f"replaced {result.replaced} in")
