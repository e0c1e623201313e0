"""``hippo experiences``: record, recall, short-term, related and consolidate.

Browsing the short-term buffer never counts as retrieval; ``recall`` does for long-term results.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Optional, Sequence

import typer

from hippo.core.validation import parse_json
from hippo.interfaces.cli import render
from hippo.interfaces.cli.app import JSON, LIMIT, OBSERVED, TAG, group, opened, outcome, read_text, when

if TYPE_CHECKING:
    from hippo.types import Experience

experiences = group()

TYPE_HELP = "chat, observation, task, decision, tool-use, error or insight."


@experiences.command()
def record(
    ctx: typer.Context,
    kind: Annotated[str, typer.Argument(metavar="TYPE", help=TYPE_HELP)],
    content: Annotated[str, typer.Argument(help="What happened; - reads standard input.")],
    context: Annotated[Optional[str], typer.Option(
        "--context", "-c", metavar="JSON",
        help='A JSON object: {"userId": "u1", "roomId": "r1", "taskId": "t1", "mentionedMe": true, ...}.')] = None,
    importance: Annotated[Optional[float], typer.Option(
        metavar="X", help="0 to 1; default: rated by type and the context's flags.")] = None,
    tag: Annotated[Optional[list[str]], TAG] = None,
    source: Annotated[Optional[str], typer.Option(help="Where it came from: agent (default), ...")] = None,
    session: Annotated[Optional[str], typer.Option(metavar="ID", help="The session it came from.")] = None,
    observed_at: Annotated[Optional[str], OBSERVED] = None,
    json: JSON = False,
) -> None:
    """Record an experience: short-term at once; an important one is consolidated at once."""
    text = read_text(content, "content")
    fields = parse_json(context, "--context") if context is not None else None
    with opened(ctx, create=True) as mem:
        found = mem.record_experience(kind, text, context=fields, importance=importance, tags=tag or (),
                                      source=source, session_id=session, observed_at=when(observed_at))
    if json:
        return render.emit_json(found.to_dict())
    kept = "" if found.durable else " (in this process: kept if consolidated as the command ends; " \
                                     "short_term_durable keeps the buffer in the database)"
    render.print_table(f"recorded {found.id}: {found.type}, importance {found.importance:g}, "
                       f"{found.tier.replace('_', '-')}{kept}")


@experiences.command()
def recall(
    ctx: typer.Context,
    query: Annotated[Optional[str], typer.Option(
        "--query", "-q", metavar="TEXT", help="Search text: by relevance; without it the latest first.")] = None,
    kind: Annotated[Optional[list[str]], typer.Option(
        "--type", metavar="TYPE", help=f"Only this type (repeatable: any of them): {TYPE_HELP}")] = None,
    tag: Annotated[Optional[list[str]], typer.Option(
        "--tag", "-t", metavar="TAG", help="Only with this tag (repeatable: all of them).")] = None,
    min_importance: Annotated[Optional[float], typer.Option(
        metavar="X", help="Only at least this important (0 to 1).")] = None,
    since: Annotated[Optional[str], typer.Option(metavar="WHEN", help="Not before: ISO-8601 or an age (7d).")] = None,
    limit: Annotated[int, LIMIT] = 10,
    json: JSON = False,
) -> None:
    """Recall experiences from short-term and long-term memory together."""
    with opened(ctx) as mem:
        found = mem.recall(types=kind, tags=tag, min_importance=min_importance, since=when(since), limit=limit,
                           query=query)
    _show(found, json, scored=query is not None)


@experiences.command("short-term")
def short_term(ctx: typer.Context, json: JSON = False) -> None:
    """The short-term buffer, newest first (not yet consolidated)."""
    with opened(ctx) as mem:
        found = mem.short_term()
    _show(found, json)


@experiences.command()
def related(
    ctx: typer.Context,
    user: Annotated[Optional[str], typer.Option(
        "--user", metavar="ID", help="Whose experiences (userId or senderId).")] = None,
    room: Annotated[Optional[str], typer.Option("--room", metavar="ID", help="In this room (roomId).")] = None,
    task: Annotated[Optional[str], typer.Option("--task", metavar="ID", help="About this task (taskId).")] = None,
    limit: Annotated[int, LIMIT] = 100,
    json: JSON = False,
) -> None:
    """Experiences whose context names this user, room or task (all of those given), latest first."""
    with opened(ctx) as mem:
        found = mem.recall_related(user_id=user, room_id=room, task_id=task, limit=limit)
    _show(found, json)


@experiences.command()
def consolidate(ctx: typer.Context, json: JSON = False) -> None:
    """Move the short-term buffer's important experiences to long-term memory now, then prune it."""
    outcome(ctx, json, lambda mem: mem.consolidate(), lambda done: (
        f"considered {done.considered}: consolidated {done.consolidated} (merged {done.merged} into memories "
        f"already held), pruned {done.pruned}, {done.remaining} remain short-term"))


def _show(found: Sequence["Experience"], json: bool, *, scored: bool = False) -> None:
    render.emit_or_print(json, {"items": [e.to_dict() for e in found]},
                         lambda: render.experiences_table(found, scored=scored))
