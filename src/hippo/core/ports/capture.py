"""Capture's parts of a store: the inbox of observed messages, a session's history as an agent
framework keeps it, and the application's own conversation log."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, Sequence

from hippo.core.ports.database import Database
from hippo.types import ConversationHit

__all__ = ["CaptureStore", "ConversationStore", "Inbox", "Observed", "SessionItem", "SessionStore"]


@dataclass(frozen=True, slots=True)
class Observed:
    """A message ``observe`` acknowledged (capture's conversation tap): its place in the agent's
    inbox (``seq``, increasing), the caller's id (or one made up), speaker and time."""

    seq: int
    message_id: str
    role: str
    name: str | None
    content: str
    observed_at: datetime | None


@dataclass(frozen=True, slots=True)
class SessionItem:
    """One item of a session's history as the agent framework handed it: ``item`` is its JSON
    text, kept as written; ``message_id`` the id capture observed it under (its source id in the
    memories captured from it)."""

    message_id: str
    item: str


@dataclass(frozen=True, slots=True)
class Inbox:
    """The whole database's inbox: messages waiting past their session's cursor, and when the
    oldest of them was observed (None: nothing waits)."""

    pending: int
    oldest: datetime | None


class CaptureStore(Database, Protocol):
    """Capture: the inbox of observed messages per session, how far each session is
    processed (a cursor moved by compare-and-set inside the transaction that writes what was
    captured: nothing processed twice), and what surfacing showed each session."""

    def observe_messages(self, agent_id: str, session_id: str, rows: Sequence[Observed]) -> list[tuple[int, str]]:
        """Append messages (their ``seq`` is assigned here) in one transaction; a message id the
        session already has is skipped. ``(seq, message_id)`` of those kept, in order."""
        ...

    def pending_sessions(self, agent_id: str | None) -> list[tuple[str, str]]:
        """``(agent_id, session_id)`` of sessions with messages past their cursor (all agents if None)."""
        ...

    def pending_messages(self, agent_id: str | None) -> int:
        """How many observed messages wait past their session's cursor (all agents if None)."""
        ...

    def inbox(self) -> Inbox:
        """The inbox of every agent at once: what waits and since when (a server's metrics)."""
        ...

    def capture_cursor(self, agent_id: str, session_id: str) -> int:
        """The last processed seq of the session (0: none)."""
        ...

    def observed(self, agent_id: str, session_id: str, *, after: int, limit: int) -> list[Observed]:
        """The session's messages past ``after``, oldest first."""
        ...

    def observed_tail(self, agent_id: str, session_id: str, *, upto: int, limit: int) -> list[Observed]:
        """The session's last ``limit`` messages up to ``upto`` that still have their text, oldest first."""
        ...

    def advance_cursor(self, agent_id: str, session_id: str, expected: int, new: int, keep_from: int) -> bool:
        """Move the cursor from ``expected`` to ``new`` (False, changing nothing, when it is not at
        ``expected``: another process got there first); the text of processed messages before
        ``keep_from`` leaves the files (their ids stay, so a message sent again is not processed twice)."""
        ...

    def observed_matching(self, agent_id: str, terms: Sequence[str], limit: int) -> list[Observed]:
        """Messages of any session that still have their text and hold every one of ``terms``."""
        ...

    def clear_observed(self, agent_id: str, seqs: Sequence[int]) -> int:
        """Remove these messages' text (a forget), and the session items they were observed from;
        their ids stay. How many messages lost their text."""
        ...

    def surfaced_ids(self, agent_id: str, session_id: str) -> set[str]: ...

    def mark_surfaced(self, agent_id: str, session_id: str, ids: Sequence[str], now: datetime) -> None: ...


class SessionStore(Database, Protocol):
    """A session's history (the conversation items an agent framework keeps between turns), in
    order. An item leaves it by ``pop_session_item`` or ``clear_session_items``, with the agent's
    ``delete_agent``, with a memory captured from it when that memory is deleted or its text
    replaced (``delete_chunks``, ``update_content``, the archive's delete), and with the message
    capture observed from it when a forget clears that (``clear_observed``): its text leaves the
    files as a forgotten chunk's does."""

    def add_session_items(self, agent_id: str, session_id: str, items: Sequence[SessionItem]) -> None:
        """Append the items, in order, at the session's end (inside the caller's transaction, if any)."""
        ...

    def session_items(self, agent_id: str, session_id: str, limit: int | None) -> list[SessionItem]:
        """The session's last ``limit`` items (all: None), oldest first."""
        ...

    def pop_session_item(self, agent_id: str, session_id: str) -> SessionItem | None:
        """Remove the session's last item and return it (None: the session has none)."""
        ...

    def clear_session_items(self, agent_id: str, session_id: str) -> int:
        """Remove every item of the session; how many went."""
        ...


class ConversationStore(Database, Protocol):
    """The application's conversation log, read through the application's own database."""

    def has_messages_table(self, table: str) -> bool:
        """Whether the application's messages table and its FTS table exist."""
        ...

    def search_messages(
        self, agent_id: str, table: str, terms: Sequence[str], limit: int
    ) -> list[ConversationHit]:
        """Full-text search of the application's messages of this agent: any of ``terms``."""
        ...
