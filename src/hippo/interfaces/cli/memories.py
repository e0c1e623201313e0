"""``hippo memories``: store, recall, forget, update, delete, delete-all; list, show, stats; the
agent's feedback (reinforce, demote) and links (related); the conversation log. And ``hippo facts``:
remember, split. The deletions write a forget's receipt with ``--receipt FILE``
(:mod:`hippo.interfaces.cli.backups`, which verifies it).

Browsing (list, show, stats, related) never counts as retrieval.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Optional

import typer

from hippo.core.strength import intensity_before
from hippo.core.validation import parse_json
from hippo.errors import InvalidInput, NotFound
from hippo.interfaces.cli import render
from hippo.interfaces.cli.app import (
    JSON,
    META,
    OBSERVED,
    TAG,
    Kind,
    group,
    metadata_from,
    opened,
    outcome,
    read_text,
    when,
)
from hippo.interfaces.cli.backups import RECEIPT, RECEIPT_FORCE, receipt_file, write_receipt

if TYPE_CHECKING:
    from pathlib import Path

    from hippo.core.memory import Memory
    from hippo.types import Chunk, Forgotten, StoreResult

memories = group()
facts = group()

ID = typer.Argument(metavar="ID", help="The id of a fact or memory.")
KIND = typer.Option(metavar="fact|memory", help="Only facts or only memories.")


@memories.command()
def store(
    ctx: typer.Context,
    text: Annotated[str, typer.Argument(help="What to store, verbatim; - reads standard input.")],
    tag: Annotated[Optional[list[str]], TAG] = None,
    meta: Annotated[Optional[list[str]], META] = None,
    intensity: Annotated[float, typer.Option(metavar="X", help="How much it matters, 0 to 1.")] = 0.5,
    observed_at: Annotated[Optional[str], OBSERVED] = None,
    source: Annotated[Optional[str], typer.Option(
        help="Where it came from: agent (default), conversation, migration, ...")] = None,
    session: Annotated[Optional[str], typer.Option(metavar="ID", help="The session it came from.")] = None,
    json: JSON = False,
) -> None:
    """Store a raw memory; storing the same text again strengthens it."""
    content = read_text(text, "text")
    with opened(ctx, create=True) as mem:
        result = mem.store_memory(content, metadata_from(tag, meta), intensity, observed_at=when(observed_at),
                                  source=source, session_id=session)
    if json:
        return render.emit_json(result.to_dict())
    render.print_table(_stored(result, intensity))
    if result.vector_pending:
        render.note("note: the embedder failed; the vector is pending (run `hippo reembed`)")


@memories.command()
def recall(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="What to look for, in plain words.")],
    limit: Annotated[int, typer.Option("--limit", "-n", metavar="N", help="At most this many hits.")] = 10,
    kind: Annotated[Optional[Kind], KIND] = None,
    tag: Annotated[Optional[list[str]], typer.Option(
        "--tag", "-t", metavar="TAG", help="Only chunks with this tag (repeatable: all of them).")] = None,
    since: Annotated[Optional[str], typer.Option(metavar="WHEN", help="Not before: ISO-8601 or an age (7d).")] = None,
    until: Annotated[Optional[str], typer.Option(metavar="WHEN", help="Not after: ISO-8601 or an age (1d).")] = None,
    where: Annotated[Optional[str], typer.Option(
        "--where", metavar="JSON", help='Metadata conditions, e.g. \'{"priority": {"$gte": 2}}\' '
                                        '($eq $ne $in $gt $gte $lt $lte $exists).')] = None,
    source: Annotated[Optional[list[str]], typer.Option(
        metavar="SOURCE", help="Only from this source (repeatable: any of them).")] = None,
    session: Annotated[Optional[str], typer.Option(metavar="ID", help="Only from this session.")] = None,
    include_archived: Annotated[bool, typer.Option(
        "--include-archived", help="Archived memories that match the words compete too (marked).")] = False,
    expand: Annotated[bool, typer.Option(
        "--expand", help="Memories often recalled with the best hits follow them (marked).")] = False,
    touch: Annotated[bool, typer.Option(help="Count the hits as retrieved (strengthens them).")] = True,
    as_of: Annotated[Optional[str], typer.Option(
        "--as-of", metavar="WHEN", help="What was current then (ISO-8601 or an age, 30d); never counted as "
                                        "retrieved.")] = None,
    json: JSON = False,
) -> None:
    """Recall facts and memories by meaning and keyword, ranked by score; with --as-of, as it stood at a date."""
    conditions = parse_json(where, "--where") if where is not None else None
    with opened(ctx) as mem:
        found = mem.recall_memories(query, limit, kind=kind.value if kind else None, tags=tag,
                                    since=when(since), until=when(until), touch=touch, metadata=conditions,
                                    source=source, session_id=session, include_archived=include_archived,
                                    expand=expand, as_of=when(as_of))
    if found.warning:
        render.note(f"warning: {found.warning}")
    render.emit_or_print(json, found.to_dict(), lambda: render.hits_table(found))


@memories.command()
def forget(
    ctx: typer.Context,
    description: Annotated[str, typer.Argument(help="What to forget, described in plain words.")],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Delete without asking.")] = False,
    preview: Annotated[bool, typer.Option("--preview", help="Only show what would be deleted.")] = False,
    limit: Annotated[int, typer.Option("--limit", "-n", metavar="N", help="Delete at most this many.")] = 10,
    receipt: Annotated[Optional[str], RECEIPT] = None,
    force: Annotated[bool, RECEIPT_FORCE] = False,
    json: JSON = False,
) -> None:
    """Hard-delete what matches a description, after showing it and asking.

    With --json and without --yes, prints the preview and deletes nothing. The deletion is one
    forget of the description, as the API's: it also removes the captured messages that hold the
    description's words. With --receipt FILE its signed receipt goes to FILE.
    """
    if receipt is not None and (preview or (json and not yes)):
        raise InvalidInput("--receipt writes the receipt of a deletion: --preview, and --json without --yes, "
                           "delete nothing")
    target = receipt_file(receipt, force)
    with opened(ctx) as mem:
        found = mem.forget_memory(description, preview=True, limit=limit)
        if not found.deleted:
            if json:
                return render.emit_json(found.to_dict())
            return render.note(f"nothing matches {description!r}; nothing deleted")
        if preview or (json and not yes):
            if json:
                return render.emit_json(found.to_dict())
            return render.print_table(render.forgotten_table(found.deleted, f"{found.count} would be deleted"))
        if not yes:
            render.print_table(render.forgotten_table(found.deleted, f"{found.count} would be deleted"))
            if not typer.confirm(f"Delete {'it' if found.count == 1 else f'these {found.count}'} for good?",
                                 default=False, err=True):
                return render.note("nothing deleted")
        deleted = _forgotten(mem, description, limit, [item.id for item in found.deleted], target)
    pending = next((item.note for item in deleted if not item.scrubbed), None)
    if json:
        return render.emit_json({"deleted": [item.to_dict() for item in deleted], "preview": False,
                                 "scrubbed": pending is None, "note": pending,
                                 **({"receipt_file": str(target)} if target is not None else {})})
    render.note(f"deleted {len(deleted)}" + (f"; its text is still in the write-ahead log ({pending}) and is "
                                             "scrubbed as soon as that reader lets go" if pending else "")
                + (f"; receipt written to {target}" if target is not None else ""))


def _forgotten(mem: "Memory", description: str, limit: int, shown: list[str],
               target: "Path | None") -> list["Forgotten"]:
    """One forget of the description, with its receipt written to ``target`` (None: no receipt).
    What matches is what the preview showed unless a write came between: the note says so."""
    done = mem.forget_memory(description, limit=limit, receipt=target is not None)
    if target is not None:
        write_receipt(target, done.receipt)
    changed = {f.id for f in done.deleted} ^ set(shown)
    if changed:
        render.note(f"note: what matches changed since it was shown ({render.plural(len(changed), 'memory')}); "
                    "the deleted ones are listed" + ("; the receipt names them" if target is not None else ""))
    return done.deleted


@memories.command()
def delete(
    ctx: typer.Context,
    chunk_id: Annotated[str, ID],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Delete without asking.")] = False,
    receipt: Annotated[Optional[str], RECEIPT] = None,
    force: Annotated[bool, RECEIPT_FORCE] = False,
    json: JSON = False,
) -> None:
    """Hard-delete one fact or memory by id (an archived one too), after showing it and asking."""
    if json and not yes:
        raise InvalidInput("--json needs --yes: delete does not ask when its output is for a program")
    target = receipt_file(receipt, force)
    with opened(ctx) as mem:
        if not yes:
            render.note(f"{chunk_id}: {_content(mem, chunk_id)}")
            if not typer.confirm("Delete it for good?", default=False, err=True):
                return render.note("nothing deleted")
        gone = mem.delete_memory(chunk_id, receipt=target is not None)
    if target is not None:
        write_receipt(target, gone.receipt)
    render.emit_or_note(json, {**gone.to_dict(), **({"receipt_file": str(target)} if target is not None else {})},
                        f"deleted {gone.id}" + ("" if gone.scrubbed else f"; scrubbing waits ({gone.note})")
                        + (f"; receipt written to {target}" if target is not None else ""))


@memories.command()
def update(
    ctx: typer.Context,
    chunk_id: Annotated[str, ID],
    content: Annotated[Optional[str], typer.Option(
        "--content", "-c", metavar="TEXT",
        help="New text (- reads standard input); the old text leaves every file.")] = None,
    tag: Annotated[Optional[list[str]], TAG] = None,
    meta: Annotated[Optional[list[str]], META] = None,
    json: JSON = False,
) -> None:
    """Change a memory's text and/or replace its metadata (--tag, --meta) in place: same id and strength."""
    text = read_text(content, "--content") if content is not None else None
    with opened(ctx) as mem:
        chunk = mem.update_memory(chunk_id, content=text, metadata=metadata_from(tag, meta))
    render.emit_or_print(json, chunk.to_dict(), lambda: render.chunk_details(chunk))


def _content(mem: "Memory", chunk_id: str) -> str:
    try:
        return mem.get_memory(chunk_id).content
    except NotFound:  # delete_memory looks in the archive and the short-term buffer too
        return "(not a live memory: an archived one or a short-term experience, if any)"


@memories.command("delete-all")
def delete_all(
    ctx: typer.Context,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Delete without asking.")] = False,
    receipt: Annotated[Optional[str], RECEIPT] = None,
    force: Annotated[bool, RECEIPT_FORCE] = False,
    json: JSON = False,
) -> None:
    """Hard-delete every memory, fact and block of the agent (--agent), after asking; other agents stay."""
    target = receipt_file(receipt, force)
    with opened(ctx) as mem:
        counts = mem.stats()
        if not yes:
            if json:
                raise InvalidInput("--json needs --yes: delete-all does not ask when its output is for a program")
            question = (f"Delete all {counts.memories} memories, {counts.facts + counts.superseded_facts} facts and "
                        f"{counts.blocks} blocks of agent {mem.agent_id!r} for good?")
            if not typer.confirm(question, default=False, err=True):
                return render.note("nothing deleted")
        erased = mem.delete_all(receipt=target is not None)
    if target is not None:
        write_receipt(target, erased.receipt)
    render.emit_or_note(json, {**erased.to_dict(), **({"receipt_file": str(target)} if target is not None else {})},
                        f"deleted {erased.memories} memories, {erased.facts} facts and {erased.blocks} blocks of agent "
                        f"{erased.agent_id!r}" + ("" if erased.scrubbed else f"; scrubbing waits ({erased.note})")
                        + (f"; receipt written to {target}" if target is not None else ""))


# -- browsing -------------------------------------------------------------------


@memories.command("list")
def list_(
    ctx: typer.Context,
    limit: Annotated[int, typer.Option("--limit", "-n", metavar="N", help="Chunks per page.")] = 20,
    cursor: Annotated[Optional[str], typer.Option(
        metavar="ID", help="Start after this id (the previous page's next cursor).")] = None,
    kind: Annotated[Optional[Kind], KIND] = None,
    json: JSON = False,
) -> None:
    """List facts and memories, newest first, a page at a time (superseded facts included)."""
    with opened(ctx) as mem:
        page = mem.list_memories(limit=limit, cursor=cursor, kind=kind.value if kind else None)
    if json:
        return render.emit_json(page.to_dict())
    render.print_table(render.chunks_table(page.items))
    if page.next_cursor:
        render.note(f"more: hippo memories list --cursor {page.next_cursor}"
                    + (f" --kind {kind.value}" if kind else ""))


@memories.command()
def show(
    ctx: typer.Context,
    chunk_id: Annotated[str, ID],
    json: JSON = False,
) -> None:
    """Show one fact or memory in full; for a fact, also its history."""
    with opened(ctx) as mem:
        chunk = mem.get_memory(chunk_id)
        history = mem.fact_history(chunk.id) if chunk.kind == "fact" else None
    if json:
        return render.emit_json({"chunk": chunk.to_dict(), "history": history.to_dict() if history else None})
    render.print_table(render.chunk_details(chunk))
    if history is not None and len(history.versions) > 1:
        render.print_table(render.history_table(history))
    if history is not None and history.merged:
        render.print_table(render.merged_table(history))


@memories.command()
def stats(ctx: typer.Context, json: JSON = False) -> None:
    """Count facts, memories, superseded facts, pending vectors and blocks; name the model and size."""
    with opened(ctx) as mem:
        found = mem.stats()
        configured = mem.embedding.embedder.model_id if mem.embedding.embedder else None
    render.emit_or_print(json, found.to_dict(), lambda: render.stats_table(found, configured))


# -- the agent's feedback, links, and the conversation log ---------------------------------------


@memories.command()
def reinforce(ctx: typer.Context, chunk_id: Annotated[str, ID], json: JSON = False) -> None:
    """Mark a memory as useful: it ranks higher where relevant, and counts as fresh again."""
    _feedback(ctx, chunk_id, json, "reinforced")


@memories.command()
def demote(ctx: typer.Context, chunk_id: Annotated[str, ID], json: JSON = False) -> None:
    """Mark a memory as stale or wrong: it ranks lower; nothing is deleted."""
    _feedback(ctx, chunk_id, json, "demoted")


def _feedback(ctx: typer.Context, chunk_id: str, json: bool, done: str) -> None:
    def feedback(mem: "Memory") -> "Chunk":
        return mem.reinforce_memory(chunk_id) if done == "reinforced" else mem.demote_memory(chunk_id)

    outcome(ctx, json, feedback, lambda chunk: f"{done} {chunk.id}: feedback {chunk.feedback:+d}")


@memories.command()
def related(ctx: typer.Context, chunk_id: Annotated[str, ID], json: JSON = False) -> None:
    """A memory's links: memories recalled with it (strongest first) and its supersession history."""
    with opened(ctx) as mem:
        found = mem.related(chunk_id)
    render.emit_or_print(json, {"links": [link.to_dict() for link in found]}, lambda: render.links_table(found))


@memories.command()
def conversation(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="Words to find in past messages.")],
    limit: Annotated[int, typer.Option("--limit", "-n", metavar="N", help="At most this many messages.")] = 10,
    json: JSON = False,
) -> None:
    """Search the application's conversation log (its messages table)."""
    with opened(ctx) as mem:
        hits = mem.recall_conversation(query, limit)
    render.emit_or_print(json, [hit.to_dict() for hit in hits], lambda: render.conversation_table(hits))


# -- facts ----------------------------------------------------------------------------------------


@facts.command()
def remember(
    ctx: typer.Context,
    text: Annotated[str, typer.Argument(help="What the user said; - reads standard input.")],
    messages: Annotated[bool, typer.Option(
        "--messages", help="TEXT is a JSON list of chat messages (OpenAI or Anthropic shape); the user's turns "
                           "are learned.")] = False,
    observed_at: Annotated[Optional[str], OBSERVED] = None,
    tag: Annotated[Optional[list[str]], TAG] = None,
    meta: Annotated[Optional[list[str]], META] = None,
    json: JSON = False,
) -> None:
    """Learn the facts in a text: new, duplicate, supersedes or distinct, and why."""
    content = read_text(text, "text")
    if messages:
        content = parse_json(content, "--messages")
    with opened(ctx, create=True) as mem:
        result = mem.remember_facts(content, observed_at=when(observed_at), metadata=metadata_from(tag, meta))
    if json:
        return render.emit_json(result.to_dict())
    render.print_table(result.summary)
    if result.facts:
        render.print_table(render.facts_table(result))


@facts.command()
def split(
    ctx: typer.Context,
    fact_id: Annotated[str, typer.Argument(metavar="ID", help="The fact the wording was merged into.")],
    wording: Annotated[str, typer.Argument(help="The merged wording, as hippo memories show ID lists it.")],
    json: JSON = False,
) -> None:
    """Undo a wrong merge: a wording merged into a fact as a duplicate becomes a fact of its own again."""
    outcome(ctx, json, lambda mem: mem.split_fact(fact_id, wording),
            lambda chunk: f"split from {fact_id}: new fact {chunk.id}")


def _stored(result: "StoreResult", given: float) -> str:
    """What a store did, in words: a text already held is strengthened in count, while its
    intensity moves toward the one given, down as well as up."""
    if result.action != "strengthened":
        return f"{result.action} {result.id}"
    chunk = result.chunk
    before = intensity_before(chunk.running_intensity, chunk.encounter_count, given)
    moved = (f"intensity {before:.2f} -> {chunk.running_intensity:.2f}" if round(before, 2) != round(
        chunk.running_intensity, 2) else f"intensity {chunk.running_intensity:.2f}, unchanged")
    return f"already held {result.id} (seen {chunk.encounter_count} times); {moved}"
