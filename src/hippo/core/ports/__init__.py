"""The ports: what the core needs from a database, owned by the core and split by capability.

A backend (``hippo.stores``) implements :class:`Store`, every part below from one database; the
core imports these protocols and records, never a backend. Each module holds one capability's
part: :mod:`~hippo.core.ports.memories` (chunks, blocks, summaries), :mod:`~hippo.core.ports.search`
(filters, searches, candidates), :mod:`~hippo.core.ports.curation` (archive, links, merged
wordings), :mod:`~hippo.core.ports.experiences`, :mod:`~hippo.core.ports.capture` (inbox,
sessions, conversation log), :mod:`~hippo.core.ports.retrievals` (recalls' retrieval events and
their queue) and :mod:`~hippo.core.ports.database` (what every part shares, and API keys).
:mod:`~hippo.core.ports.scoped` binds a store to one agent.
"""

from __future__ import annotations

from typing import Protocol

from hippo.core.ports.audit import AuditQuery, AuditStore
from hippo.core.ports.capture import CaptureStore, ConversationStore, Inbox, Observed, SessionItem, SessionStore
from hippo.core.ports.curation import ArchiveStore, LinkStore, MergeStore, PruneCandidate
from hippo.core.ports.database import Database, KeyStore, SchemaVersion, StoreCapabilities
from hippo.core.ports.experiences import ExperienceRecord, ExperienceStore
from hippo.core.ports.memories import (
    BROWSE_ORDERS,
    BlockStore,
    BrowseOrder,
    ChunkStore,
    ChunkSummary,
    StrengthUpdate,
    SummaryStore,
)
from hippo.core.ports.receipts import RemnantStore, StoredText
from hippo.core.ports.retrievals import RetrievalBatch, RetrievalEvent, RetrievalQueue
from hippo.core.ports.search import (
    Candidates,
    ChunkFilter,
    ExperienceFilter,
    MetaCondition,
    MetaOp,
    SearchQuery,
    Standing,
)

__all__ = ["BROWSE_ORDERS", "ArchiveStore", "AuditQuery", "AuditStore",
           "BlockStore", "BrowseOrder", "Candidates", "CaptureStore",
           "ChunkFilter", "ChunkStore", "ChunkSummary", "ConversationStore", "Database", "ExperienceFilter",
           "ExperienceRecord", "ExperienceStore", "Inbox", "KeyStore", "LinkStore", "MergeStore", "MetaCondition",
           "MetaOp", "Observed", "PruneCandidate", "RemnantStore", "RetrievalBatch", "RetrievalEvent", "RetrievalQueue",
           "SchemaVersion", "SearchQuery", "SessionItem", "SessionStore", "Standing", "Store", "StoreCapabilities",
           "StoredText", "StrengthUpdate", "SummaryStore"]


class Store(ChunkStore, BlockStore, KeyStore, ConversationStore, ArchiveStore, LinkStore, ExperienceStore,
            CaptureStore, SessionStore, SummaryStore, MergeStore, AuditStore, RemnantStore, Protocol):
    """What the core needs from a database: every part, from one backend (``stores/registry.py``)."""
