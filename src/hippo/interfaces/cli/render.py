"""How the CLI shows results: Rich tables on stdout, JSON on stdout, notes and progress on stderr.

With ``--json`` stdout carries exactly one JSON document and nothing else, so
it can be piped. User text never goes through Rich markup (``[tag]`` and
``:emoji:`` stay as typed). Rich is imported by the first table or note, not
before: ``--json`` output and the Claude Code hooks never load it.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress
    from rich.table import Table
    from rich.text import Text

    from hippo.types import (
        ArchivedHit,
        Chunk,
        ConversationHit,
        Experience,
        FactHistory,
        FactOutcome,
        Forgotten,
        Link,
        Recall,
        RememberResult,
        Stats,
    )

__all__ = [
    "PROGRESS_ABOVE", "ProgressBar", "age", "archive_table", "chunk_details", "chunks_table", "conversation_table",
    "emit_json", "emit_or_note", "emit_or_print", "experiences_table", "links_table",
    "facts_table", "forgotten_table", "history_table", "hits_table", "note", "plural", "print_table",
    "stats_table",
]

PROGRESS_ABOVE = 100  # items; smaller jobs finish before a bar would help


def _console(stderr: bool = False) -> "Console":
    from rich.console import Console

    # Built per call: the streams may have been swapped (tests, redirection) since import.
    return Console(file=sys.stderr if stderr else sys.stdout, emoji=False, highlight=False, markup=False,
                   soft_wrap=False)


def emit_json(data: Any) -> None:
    """One JSON document on stdout."""
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n")


def note(message: str) -> None:
    """A line for the human, on stderr (keeps stdout for results)."""
    from rich.text import Text

    _console(stderr=True).print(Text(message), soft_wrap=True)


def emit_or_note(json: bool, data: Any, message: str) -> None:
    """A command's outcome: with --json ``data`` as one JSON document on stdout, else ``message`` as a note."""
    if json:
        return emit_json(data)
    note(message)


def emit_or_print(json: bool, data: Any, shown: Callable[[], Table | Text | str]) -> None:
    """A command's result: with --json ``data`` as one JSON document on stdout, else what ``shown``
    makes printed there (made only then: --json loads no Rich)."""
    if json:
        return emit_json(data)
    print_table(shown())


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def print_table(table: Table | Text | str) -> None:
    from rich.text import Text

    _console().print(table if not isinstance(table, str) else Text(table))


def age(when: datetime, now: datetime | None = None) -> str:
    """``now``, ``5m``, ``3h``, ``2d``, ``5w``, ``4mo``, ``2y``."""
    seconds = ((now or datetime.now(timezone.utc)) - when).total_seconds()
    for unit, size in (("y", 365 * 86400), ("mo", 30 * 86400), ("w", 7 * 86400), ("d", 86400), ("h", 3600),
                       ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return "now"


def _num(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


_WIDE = {"content", "fact", "reason", "snippet"}


def _table(*columns: str, title: str | None = None) -> Table:
    from rich.table import Table

    table = Table(title=title, title_justify="left", show_lines=False, header_style="bold")
    for name in columns:
        if name in _WIDE:  # only these wrap; the short columns keep their width
            table.add_column(name, overflow="fold", min_width=12)
        else:
            table.add_column(name, no_wrap=True)
    return table


def hits_table(recall: Recall) -> Table:
    from rich.text import Text

    table = _table("score", "age", "kind", "content", "id", title=f"{len(recall)} recalled ({recall.mode})")
    for hit in recall:
        chunk = hit.chunk
        table.add_row(f"{hit.score:.3f}", age(chunk.observed_at or chunk.created_at),
                      chunk.kind + (" (archived)" if hit.archived else " (linked)" if hit.linked_from else ""),
                      Text(chunk.content), chunk.id)
    return table


def facts_table(result: RememberResult) -> Table:
    from rich.text import Text

    table = _table("fact", "action", "intensity", "similarity", "reason")
    for fact in result.facts:
        table.add_row(Text(fact.fact), fact.action, _intensity(fact), _num(fact.similarity), Text(fact.reason))
    return table


def _intensity(fact: FactOutcome) -> str:
    """A fact's reading, or what a duplicate did to the stored fact's intensity (down as well as up)."""
    before, after = fact.intensity_before, fact.intensity_after
    if before is None or after is None:
        return _num(fact.intensity)
    return f"{before:.2f} -> {after:.2f}" if round(before, 2) != round(after, 2) else f"{after:.2f}, unchanged"


def forgotten_table(items: Sequence[Forgotten], title: str) -> Table:
    from rich.text import Text

    table = _table("id", "kind", "similarity", "content", title=title)
    for item in items:
        table.add_row(item.id, item.kind, _num(item.similarity), Text(item.content))
    return table


def chunks_table(chunks: Iterable[Chunk]) -> Table:
    from rich.text import Text

    table = _table("id", "kind", "age", "intensity", "content")
    for chunk in chunks:
        content = Text(chunk.content)
        if chunk.superseded_by:
            content = Text.assemble(Text("(superseded) ", style="dim"), content)
        table.add_row(chunk.id, chunk.kind, age(chunk.observed_at or chunk.created_at), _num(chunk.running_intensity),
                      content)
    return table


def _when(value: datetime | None) -> str:
    return value.isoformat(timespec="seconds") if value else "-"


def chunk_details(chunk: Chunk) -> Table:
    from rich.table import Table
    from rich.text import Text

    table = Table(show_header=False, box=None, padding=(0, 2, 0, 0))
    table.add_column("field", style="bold", no_wrap=True)
    table.add_column("value", overflow="fold")
    rows: list[tuple[str, str]] = [
        ("id", chunk.id), ("kind", chunk.kind), ("agent", chunk.agent_id),
        ("created", _when(chunk.created_at)), ("observed", _when(chunk.observed_at)),
        ("intensity", f"{chunk.running_intensity:.3f}"), ("encounters", str(chunk.encounter_count)),
        ("accesses", str(chunk.access_count)), ("last access", _when(chunk.last_accessed_at)),
        ("feedback", f"{chunk.feedback:+d}" + (f" (reinforced {_when(chunk.reinforced_at)})"
                                                 if chunk.reinforced_at else "")),
        ("source", chunk.source or "-"), ("session", chunk.session_id or "-"),
        ("superseded by", chunk.superseded_by or "-"), ("vector", "yes" if chunk.has_vector else "pending"),
        ("content hash", chunk.content_hash or "-"),
        ("metadata", json.dumps(chunk.metadata, ensure_ascii=False) if chunk.metadata else "-"),
        ("content", chunk.content),
    ]
    for name, value in rows:
        table.add_row(name, Text(value))
    return table


def experiences_table(found: Sequence[Experience], *, scored: bool = False) -> Table:
    """Experiences of both tiers (short- or long-term); ``scored``: with their relevance."""
    from rich.text import Text

    table = _table(*(["score"] if scored else []), "age", "type", "imp", "tier", "content", "id",
                   title=plural(len(found), "experience"))
    for e in found:
        table.add_row(*([_num(e.relevance)] if scored else []), age(e.observed_at), e.type, _num(e.importance),
                      e.tier.removesuffix("_term"), Text(e.content), e.id)
    return table


def archive_table(found: list[ArchivedHit]) -> Table:
    from rich.text import Text

    table = _table("score", "id", "content", title=f"{len(found)} archived (hippo restore ID brings one back)")
    for hit in found:
        table.add_row(f"{hit.score:.2f}", hit.id, Text(hit.chunk.content))
    return table


def links_table(found: list[Link]) -> Table:
    from rich.text import Text

    table = _table("link", "strength", "id", "content", title=f"{len(found)} linked")
    for link in found:
        table.add_row(link.kind, f"{link.strength:g}", link.chunk.id, Text(link.chunk.content))
    return table


def history_table(history: FactHistory) -> Table:
    from rich.text import Text

    table = _table("created", "id", "status", "content", title="history (oldest first; --json names successors)")
    for version in history.versions:
        if history.current is not None and version.id == history.current.id:
            status = "current"
        else:
            status = "replaced" if version.superseded_by else "-"
        table.add_row(version.created_at.strftime("%Y-%m-%d %H:%M"), version.id, status, Text(version.content))
    return table


def merged_table(history: FactHistory) -> Table:
    from rich.text import Text

    table = _table("merged", "into", "similarity", "wording",
                   title="merged wordings (recognised as duplicates; `hippo split ID WORDING` undoes one)")
    for merged in history.merged:
        similarity = f"{merged.similarity:.2f}" if merged.similarity is not None else "-"
        table.add_row(merged.merged_at.strftime("%Y-%m-%d %H:%M"), merged.fact_id, similarity, Text(merged.content))
    return table


def stats_table(stats: Stats, configured: str | None) -> Table:
    from rich.table import Table
    from rich.text import Text

    table = Table(show_header=False, box=None, padding=(0, 2, 0, 0))
    table.add_column("what", style="bold", no_wrap=True)
    table.add_column("value", overflow="fold")
    model = stats.embedder or f"none recorded yet (configured: {configured or 'none'})"
    for name, value in [
        ("agent", stats.agent_id), ("facts", stats.facts), ("superseded facts", stats.superseded_facts),
        ("memories", stats.memories), ("pending vectors", stats.pending_vectors), ("blocks", stats.blocks),
        ("embedder", model), ("dimension", stats.dimension if stats.dimension is not None else "-"),
        ("database", stats.database), ("database size", _size(stats.database_bytes)),
    ]:
        table.add_row(name, Text(str(value)))
    return table


def _size(n: int | None) -> str:
    if n is None:
        return "unknown"
    value = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"  # pragma: no cover


def conversation_table(hits: Sequence[ConversationHit]) -> Table:
    from rich.text import Text

    table = _table("id", "role", "when", "snippet", title=plural(len(hits), "message"))
    for hit in hits:
        table.add_row(str(hit.id), Text(str(hit.fields.get("role", "-"))),
                      Text(str(hit.fields.get("created_at", "-"))), Text(hit.snippet or hit.content))
    return table


class ProgressBar:
    """A ``(done, total)`` callback that shows a bar on stderr once a job is larger than PROGRESS_ABOVE."""

    def __init__(self, label: str) -> None:
        self.label = label
        self._progress: Progress | None = None
        self._task: Any = None

    def __call__(self, done: int, total: int) -> None:
        if self._progress is None and total > PROGRESS_ABOVE:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            console = _console(stderr=True)
            self._progress = Progress(TextColumn(self.label), BarColumn(), MofNCompleteColumn(),
                                      TimeRemainingColumn(), console=console, transient=True,
                                      disable=not console.is_terminal)  # no bar in logs and pipes
            self._progress.start()
            self._task = self._progress.add_task(self.label, total=total)
        if self._progress is not None:
            self._progress.update(self._task, completed=done, total=total)

    def __enter__(self) -> "ProgressBar":
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()
