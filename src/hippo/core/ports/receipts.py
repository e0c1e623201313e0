"""What a receipt asks of a store (``hippo.core.receipts``): the places a removed memory could
still be, read as ids and texts, and the state of what the store keeps beside its rows.

The core holds the removed texts' keyed fingerprints and judges every text itself; a store only
reads. Its places, by the names a receipt shows:

- ``memories``, ``archive``, ``history`` (merged wordings), ``experiences`` (the short-term
  buffer and the experiences lived), ``capture inbox``, ``session items``, ``blocks`` and the
  ``audit trail``: their texts (``stored_texts``), each of one agent;
- ``memories``, ``archive``, ``history``, ``experiences``, ``links`` (links and what was
  surfaced) and, on PostgreSQL, the ``full-text index``: the removed ids still named there
  (``remaining_ids``);
- the ``full-text index``, the ``vectors`` and, on SQLite, the ``ANN files``: whether they hold
  nothing of a row that is gone (``index_states``);
- the ``write-ahead log`` (SQLite) or the ``dead rows`` a delete leaves until ``hippo scrub``
  (PostgreSQL): whether what was removed has left it (``log_state``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Iterator, Protocol, Sequence

from hippo.trust import PlaceCheck

__all__ = ["RemnantStore", "StoredText"]


@dataclass(frozen=True, slots=True)
class StoredText:
    """One text an agent's rows hold: its place, the row (``table id``) and the text."""

    place: str
    row: str
    text: str


class RemnantStore(Protocol):
    def remnant_places(self) -> tuple[str, ...]:
        """Every place this backend's receipts check, in the order they are shown."""
        ...

    def remaining_ids(self, agent_id: str, ids: Sequence[str]) -> dict[str, list[str]]:
        """The places that still name any of ``ids`` for the agent, each with the rows (``table id``)."""
        ...

    def stored_texts(self, agent_id: str) -> Iterator[StoredText]:
        """Every text of the agent's rows, place by place (JSON values as their strings)."""
        ...

    def index_states(self, agent_id: str) -> list[PlaceCheck]:
        """Whether the indexes kept beside the rows hold anything of a row that is gone."""
        ...

    def log_state(self, since: datetime | None) -> PlaceCheck:
        """Whether what was deleted (at ``since``, None: just now) has left the log the backend
        keeps beside its tables."""
        ...
