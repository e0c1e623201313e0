"""``hippo capture``: observe, process, surface and compact.

A FILE is a JSON list of chat messages, or JSON Lines: a chat message a line, or a Claude Code
transcript (read by :mod:`hippo.integrations.claude_code`); ``-`` reads standard input.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from hippo.errors import InvalidInput
from hippo.integrations.claude_code import load_messages
from hippo.interfaces.cli import render
from hippo.interfaces.cli.app import JSON, group, opened, outcome

FILE_HELP = ("A JSON list of chat messages, or JSON Lines (a message a line, or a Claude Code transcript); "
             "- reads standard input.")
SESSION = typer.Option("--session", "-s", metavar="ID", help="The conversation's session id.")

capture = group()


def read_messages_file(name: str) -> list[dict[str, Any]]:
    """The messages of FILE (``-``: standard input)."""
    text = sys.stdin.read() if name == "-" else Path(name).read_text(encoding="utf-8")
    return load_messages(text)


@capture.command()
def observe(
    ctx: typer.Context,
    file: Annotated[str, typer.Argument(metavar="FILE", help=FILE_HELP)],
    session: Annotated[str, SESSION],
    json: JSON = False,
) -> None:
    """Hand hippo a conversation to remember: kept at once, turned into memories by hippo capture
    process (or by hippo server http every capture_every seconds). Messages it already has are skipped."""
    messages = read_messages_file(file)
    outcome(ctx, json, lambda mem: mem.observe(messages, session_id=session), lambda seen: (
        f"observed {render.plural(seen.accepted, 'message')} in session {seen.session_id} ({seen.duplicates} "
        f"already held, {seen.skipped} left out: system prompts, tool outputs, empty); hippo capture process turns "
        "them into memories"), create=True)


@capture.command()
def process(ctx: typer.Context, json: JSON = False) -> None:
    """Turn what was observed into memories now (windows, gate, extraction, dedup)."""
    with render.ProgressBar("capturing") as bar:
        outcome(ctx, json, lambda mem: mem.process_pending(progress=bar), lambda done: (
            f"processed {done.messages} messages of {render.plural(done.sessions, 'session')} in {done.windows} "
            f"windows ({done.gated_in} worth remembering): {done.memories} memories ({done.merged} merged into ones "
            f"already held), {done.facts} facts"))


@capture.command()
def surface(
    ctx: typer.Context,
    session: Annotated[str, SESSION],
    file: Annotated[Optional[str], typer.Argument(metavar="FILE", help=FILE_HELP)] = None,
    prompt: Annotated[Optional[str], typer.Option("--prompt", "-p", metavar="TEXT",
                                                  help="The user's message, instead of FILE.")] = None,
    max_tokens: Annotated[int, typer.Option("--max-tokens", min=1, metavar="N", help="The context block's budget.")]
    = 500,
    json: JSON = False,
) -> None:
    """What memory has to offer for the last messages, not shown to this session yet: prints the
    context block (nothing when nothing is relevant)."""
    if (file is None) == (prompt is None):
        raise InvalidInput("give either FILE or --prompt TEXT")
    messages = read_messages_file(file) if file is not None else [{"role": "user", "content": prompt}]
    with opened(ctx) as mem:
        found = mem.surface(messages, session_id=session, max_tokens=max_tokens)
    if json:
        return render.emit_json(found.to_dict())
    if found.text:
        typer.echo(found.text)
    else:
        render.note("nothing relevant to surface")


@capture.command()
def compact(
    ctx: typer.Context,
    file: Annotated[str, typer.Argument(metavar="FILE", help=FILE_HELP)],
    session: Annotated[Optional[str], typer.Option(
        "--session", "-s", metavar="ID",
        help="Keep what the summary shortens as memories of this session; without it nothing is stored.")] = None,
    previous: Annotated[Optional[str], typer.Option(
        "--previous-summary", metavar="FILE", help="The summary of an earlier compaction (Prior Context).")] = None,
    show: Annotated[Optional[int], typer.Option(
        "--show", metavar="N", min=0, help="Print message N of FILE whole (a summary's #N) instead of compacting.")]
    = None,
    json: JSON = False,
) -> None:
    """Compact a long session into a summary (printed). Each line starts with #N, the message it
    shortens (--show N prints it whole); with --session what the summary shortens is kept as
    memories and its line carries their ids (hippo get ID)."""
    messages = read_messages_file(file)
    if show is not None:
        return _show(messages, show, json)
    before = Path(previous).read_text(encoding="utf-8") if previous is not None else None
    if session is None:
        from hippo.core.compaction.compact import compact as summarize

        done = summarize(messages, previous_summary=before)
    else:
        with opened(ctx, create=True) as mem, render.ProgressBar("storing") as bar:
            done = mem.compact(messages, session_id=session, previous_summary=before, progress=bar)
    if json:
        return render.emit_json(done.to_dict())
    typer.echo(done.summary)
    stats, stored = done.stats, sum(len(e.memory_ids) for e in done.entries)
    kept = (f"; {stored} {'memory' if stored == 1 else 'memories'} stored in session {session}"
            if session is not None else "; nothing stored (--session keeps it)")
    render.note(f"compacted {render.plural(stats.entries, 'message')}, {stats.tokens_before} tokens into "
                f"{stats.summary_tokens}: {stats.kept} kept, {stats.compressed} compressed, {stats.sparse} pointers, "
                f"{stats.omitted} left out{kept}")


def _show(messages: list[dict[str, Any]], index: int, json: bool) -> None:
    from hippo.core.compaction.compact import content_of
    from hippo.core.messages import read_messages

    read = read_messages(messages)
    if index >= len(read):
        raise InvalidInput(f"--show {index}: the session has {render.plural(len(read), 'message')} (#0 to "
                           f"#{len(read) - 1})")
    message = read[index]
    if json:
        return render.emit_json({"index": index, "role": message.role, "content": content_of(message)})
    typer.echo(content_of(message))
