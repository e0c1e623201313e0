"""Browsing an agent's memory the way a person does (the dashboard): sorted by strength,
last access or feedback as well as newest first, filtered by kind, experience type, tag,
source, session and time, superseded facts and archived memories shown on request and marked.

The store filters, sorts and pages every live chunk (``browse_chunks``: exact at any size, each
order computed by the database). Archived memories come from the archive's own listing
(``list_archived``, the latest archived ``scan``) or its word search and are sorted in here;
``Listing.complete`` says whether that listing read the whole archive. Nothing counts as a retrieval.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any, Callable, Mapping, Sequence

from hippo import limits
from hippo.core import validation as v
from hippo.core.context import Capability
from hippo.core.curation import archive
from hippo.core.experiences.importance import check_type
from hippo.core.ports import BROWSE_ORDERS, BrowseOrder, ExperienceFilter
from hippo.core.recall.filters import passes, recall_filter
from hippo.core.strength import effective_strength
from hippo.errors import InvalidInput
from hippo.types import Chunk, Listing

__all__ = ["ARCHIVE_SCAN", "SORTS", "Browser", "MAX_SCAN", "sort_key"]

SORTS = BROWSE_ORDERS
ARCHIVE_SCAN = 2_000  # the latest archived chunks a browse lists by default
MAX_SCAN = 5_000  # the most archived chunks one browse lists; the listing says when that was not all
_READ = 1_000  # chunks per store listing call
ARCHIVED_DEPTH = 20_000  # how deep a browse that sorts archived memories in pages (it reads each live one before)


def sort_key(sort: str, now: datetime, decay_lambda: float) -> Callable[[Chunk], Any]:
    """The descending order of a sort: each key breaks ties by creation time, then id."""
    def strength(c: Chunk) -> float:
        return effective_strength(c.running_intensity, c.access_count, c.last_accessed_at, now,
                                  decay_lambda=decay_lambda)

    keys: dict[str, Callable[[Chunk], Any]] = {
        "newest": lambda c: (c.created_at, c.id),
        "strength": lambda c: (strength(c), c.created_at, c.id),
        "last_access": lambda c: (c.last_accessed_at, c.created_at, c.id),
        "feedback": lambda c: (c.feedback, strength(c), c.created_at, c.id),
    }
    if not isinstance(sort, str) or sort not in keys:
        raise InvalidInput(f"sort must be one of {', '.join(SORTS)}, got {v.shown(sort)}")
    return keys[sort]


class Browser(Capability):
    """Browsing one agent's memory (nothing counts as retrieved)."""

    def browse_memories(self, *, sort: str = "newest", limit: int = 20, offset: int = 0,
                        kind: str | None = None, tags: Sequence[str] | None = None,
                        source: str | None = None, session_id: str | None = None,
                        since: datetime | str | None = None, until: datetime | str | None = None,
                        superseded: bool = True, archived: bool = False, archived_matching: str | None = None,
                        types: str | Sequence[str] | None = None, scan: int = ARCHIVE_SCAN,
                        metadata: Mapping[str, Any] | None = None) -> Listing:
        """A page of this agent's facts and memories, filtered and sorted (``newest``, ``strength``,
        ``last_access``, ``feedback``; strongest, latest or most reinforced first) over all of them by
        the store. ``types`` keeps the experiences of those types only; ``Listing.types`` names
        the type of each shown experience. ``metadata`` filters as recall's does (live chunks only).
        ``archived`` adds the latest archived ``scan`` (at most
        5,000), ``archived_matching`` the archived memories that match its words (their ids in
        ``Listing.archived``), sorted in with the rest. Browsing: nothing counts as retrieved."""
        limit, where = v.check_limit(limit), recall_filter(kind=kind, tags=tags, since=since, until=until,
                                                             source=source, session_id=session_id, metadata=metadata)
        superseded, archived = v.check_flag(superseded, "superseded"), v.check_flag(archived, "archived")
        if archived_matching is not None:
            archived_matching = v.check_text(archived_matching, "archived_matching",
                                             max_chars=self.ctx.settings.max_query_chars, allow_empty=True)
        if where.metadata and (archived or archived_matching):
            raise InvalidInput("metadata filters do not reach the archive: leave out archived or metadata")
        v.check_int(offset, "offset", 0, limits.BROWSE_OFFSET)
        v.check_int(scan, "scan", 1, MAX_SCAN)
        now = self.ctx.now()
        key = sort_key(sort, now, self.ctx.settings.decay_lambda)
        wanted = _types(types)
        where = replace(where, include_superseded=superseded,
                        experience=ExperienceFilter(types=wanted) if wanted else None)
        gone, read_all = self._archived(archived, archived_matching, scan)
        if wanted:
            typed = self._types_of([c.id for c in gone], wanted)
            gone = [c for c in gone if c.id in typed]
        gone = [c for c in gone if passes(c, replace(where, experience=None))]
        if gone and offset + limit > ARCHIVED_DEPTH:
            raise InvalidInput(f"with archived memories shown, browse pages go {ARCHIVED_DEPTH:,} deep; "
                               f"got offset {offset} and limit {limit}")
        order = BrowseOrder(sort, now, self.ctx.settings.decay_lambda)
        # With archived ones to sort in, the store's first offset + limit are all the page can hold.
        live, matched = self.ctx.store.browse_chunks(where, order, offset=0 if gone else offset,
                                                 limit=offset + limit if gone else limit)
        shown = sorted(live + gone, key=key, reverse=True)[offset:offset + limit] if gone else live
        matched += len(gone)
        gone_ids = {c.id for c in gone}
        return Listing(items=shown, archived=frozenset(c.id for c in shown if c.id in gone_ids),
                       next_offset=offset + limit if matched > offset + limit else None,
                       matched=matched, complete=read_all, types=self._types_of([c.id for c in shown]))

    def _archived(self, listed: bool, matching: str | None, scan: int) -> tuple[list[Chunk], bool]:
        """The latest archived ``scan`` (when ``listed``) and those matching the words, once each;
        and whether the listing read the whole archive."""
        gone: dict[str, Chunk] = {}
        read_all = True
        if listed:
            before = None
            while len(gone) < scan:
                rows = self.ctx.store.list_archived(limit=min(_READ, scan - len(gone)),
                                                    before=before)
                gone.update((a.id, a.chunk) for a in rows)
                if len(rows) < min(_READ, scan - len(gone) + len(rows)):
                    break
                before = (rows[-1].archived_at, rows[-1].id)
            read_all = len(gone) < scan
        if matching and matching.strip():
            for hit in archive.search(self.ctx.store, matching, scan):
                gone.setdefault(hit.id, hit.chunk)
        return list(gone.values()), read_all

    def _types_of(self, ids: Sequence[str], wanted: tuple[str, ...] = ()) -> dict[str, str]:
        """The experience type of each of ``ids`` that is an experience (of the wanted types, if any)."""
        records = self.ctx.store.experience_records(ids)
        return {i: r.type for i, r in records.items() if not wanted or r.type in wanted}


def _types(types: str | Sequence[str] | None) -> tuple[str, ...]:
    """The experience types asked for, checked (``tool_use`` is read as ``tool-use``)."""
    if types is None:
        return ()
    if not isinstance(types, (str, list, tuple)):
        raise InvalidInput("types must be a string or a list of strings")
    return tuple(dict.fromkeys(check_type(t) for t in ([types] if isinstance(types, str) else types)))
