"""The fact operations of one agent: learning facts from what the user said (extraction, then
recognition against what is known: new, duplicate, replacement or distinct), a fact's history,
and splitting a wrongly merged wording back out. The pipeline is :mod:`hippo.core.facts.remember`'s."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Mapping, Sequence

from hippo.core import validation as v
from hippo.core.context import Capability
from hippo.core.facts.remember import remember
from hippo.core.memories import edits
from hippo.core.memories.operations import fetch
from hippo.core.messages import user_text
from hippo.errors import InvalidInput
from hippo.types import Chunk, FactHistory, RememberResult, Validity

__all__ = ["Facts"]


def validity(versions: list[Chunk]) -> list[Validity]:
    """Each version's interval: from when it was stored until its successor was (None while it is
    current, or when the successor is gone: forgotten, its time with it)."""
    stored = {c.id: c.created_at for c in versions}
    return [Validity(c.id, c.created_at, stored.get(c.superseded_by) if c.superseded_by else None,
                     c.superseded_by is None) for c in versions]


class Facts(Capability):
    """Facts for one agent."""

    def remember_facts(
        self,
        text: str | Sequence[Mapping[str, Any]],
        *,
        observed_at: datetime | str | None = None,
        metadata: Mapping[str, Any] | None = None,
        session_id: str | None = None,
    ) -> RememberResult:
        """Learn the facts in what the user said, reconciled with what is known.

        ``text`` is what the user said, or a list of chat messages (OpenAI or Anthropic shape),
        of which the user's turns are read. Extraction uses the configured LLM, or offline rules
        when there is none; each fact is then new, a duplicate (strengthened), a replacement
        (supersedes the old fact) or distinct. All actions commit together. ``session_id`` is the
        session the new facts come from (``recall_memories(session_id=...)`` finds them by it).
        """
        if not isinstance(text, str):
            text = user_text(text)
            if not text:
                raise InvalidInput("the messages hold no user turn with text to learn from")
        text = v.check_text(text, "text", max_chars=self.ctx.settings.max_content_chars)
        return remember(
            store=self.ctx.store, embedding=self.ctx.embedding, llm=self.ctx.llm, text=text,
            now=self.ctx.now(), observed_at=v.check_datetime(observed_at, "observed_at"),
            metadata=v.check_metadata(metadata), offline_rule=self.ctx.offline_rule,
            session_id=v.check_session_id(session_id),
        )

    def fact_history(self, chunk_id: str) -> FactHistory:
        """Every version of a fact, oldest first: what it superseded, what superseded it; when each
        was current (``validity``: from when it was stored until its successor was; ``at(when)``
        names the version current at a date); and the wordings merged into them as duplicates
        (``merged``), which :meth:`split_fact` can split back."""
        chunk = fetch(self.ctx, chunk_id)
        older: list[Chunk] = []
        frontier = [chunk]
        while frontier:  # walk back; a fact may have replaced several
            frontier = [p for c in frontier for p in self.ctx.store.superseded_by(c.id)]
            older.extend(frontier)
        newer: list[Chunk] = []
        current: Chunk | None = chunk
        while current is not None and current.superseded_by is not None:
            found = self.ctx.store.get_chunks([current.superseded_by])
            current = found[0] if found else None
            if current is not None:
                newer.append(current)
        versions = sorted([*older, chunk, *newer], key=lambda c: (c.created_at, c.id))
        merged = self.ctx.store.merged_wordings([c.id for c in versions])
        return FactHistory(versions, current, merged, validity(versions))

    def split_fact(self, fact_id: str, wording: str) -> Chunk:
        """Undo a wrong merge: the wording that ``remember_facts`` merged into fact ``fact_id`` as a
        duplicate (``fact_history(fact_id).merged``) becomes a fact of its own again, embedded, with
        the intensity it was said with; the fact gives back the strength the merge added. Returns the
        new fact. An unknown id is ``NotFound``; a wording never merged into that fact, ``InvalidInput``."""
        fact = fetch(self.ctx, fact_id)
        return edits.split_fact(self.ctx.store, self.ctx.embedding, fact, wording,
                                max_chars=self.ctx.settings.max_content_chars)

