"""What a server reports about the database it serves, read through the ports: how large it is,
how many chunks of each kind it holds, what waits in the capture inbox, and whether its schema is
the one this hippo knows. Database-wide (every agent at once) and read-only; no text of any
memory or message, only counts, sizes and times.

:func:`database_vitals` counts from indexes (a scrape every few seconds can afford it);
:func:`schema_version` is one trivial query, cheap enough for a readiness probe.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hippo.core.memory import Memory
    from hippo.core.ports import SchemaVersion

__all__ = ["DatabaseVitals", "backend_name", "database_vitals", "schema_version"]


@dataclass(frozen=True, slots=True)
class DatabaseVitals:
    """The database at one moment: its size on disk, its chunks by kind, and its capture inbox
    (messages waiting to be processed, and when the oldest of them was observed)."""

    backend: str
    size_bytes: int
    chunks: dict[str, int]
    pending_messages: int
    oldest_pending: datetime | None

    def oldest_pending_seconds(self, now: datetime) -> float:
        """How long the oldest waiting message has waited (0 when none waits)."""
        return 0.0 if self.oldest_pending is None else max(0.0, (now - self.oldest_pending).total_seconds())


def backend_name(memory: "Memory") -> str:
    """``postgres`` for a server database, ``sqlite`` for a file."""
    return "postgres" if memory.database.startswith(("postgresql://", "postgres://")) else "sqlite"


def database_vitals(memory: "Memory") -> DatabaseVitals:
    """The vitals of ``memory``'s whole database (every agent's rows, not only its own)."""
    store = memory.store
    inbox = store.inbox()
    return DatabaseVitals(backend=backend_name(memory), size_bytes=store.size_bytes(), chunks=store.kind_counts(),
                          pending_messages=inbox.pending, oldest_pending=inbox.oldest)


def schema_version(memory: "Memory") -> "SchemaVersion":
    """The migrations ``memory``'s database has applied and those this hippo knows, asked now."""
    return memory.store.schema_version()
