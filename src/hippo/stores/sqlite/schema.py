"""Schema migrations keyed on ``PRAGMA user_version``.

Each migration is a name and a script; ``user_version`` is the count applied,
and ``hippo_migrations`` records when each ran. A database from a newer hippo
(a higher ``user_version`` than this code knows) is refused, not downgraded.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime, timezone

from hippo.errors import StorageError
from hippo.stores.audit import TOUCHED_SQLITE
from hippo.stores.sqlite import merges, windows
from hippo.stores.sqlite.narrowing import changes, driving

__all__ = ["MIGRATIONS", "SESSIONS_MIGRATION", "migrate"]

# Issue 32: logout ends the session on every server. Existing sessions had no record, so after
# this migration their cookies are refused and their holders log in once more.
SESSIONS_MIGRATION = """
CREATE TABLE dashboard_sessions (
    id          TEXT PRIMARY KEY,   -- SHA-256 of the session's secret id, hex
    key_id      TEXT NOT NULL,      -- api_keys.id; deleted with the key
    created_at  TEXT NOT NULL,
    expires_at  TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX idx_dashboard_sessions_key ON dashboard_sessions(key_id);
"""

_CHUNKS = """
CREATE TABLE chunks (
    id                TEXT PRIMARY KEY,
    agent_id          TEXT NOT NULL,
    content           TEXT NOT NULL,
    content_hash      TEXT,
    embedding         BLOB,               -- little-endian float32; NULL while the vector is pending
    metadata          TEXT,
    kind              TEXT NOT NULL CHECK (kind IN ('fact', 'memory')),
    running_intensity REAL NOT NULL DEFAULT 0.5,
    encounter_count   INTEGER NOT NULL DEFAULT 1,
    access_count      INTEGER NOT NULL DEFAULT 0,
    last_accessed_at  TEXT NOT NULL,
    superseded_by     TEXT,
    created_at        TEXT NOT NULL,
    observed_at       TEXT
);
CREATE UNIQUE INDEX idx_chunks_memory_dedup ON chunks(agent_id, content_hash) WHERE kind = 'memory';
CREATE INDEX idx_chunks_agent_kind ON chunks(agent_id, kind);
CREATE INDEX idx_chunks_last_accessed ON chunks(agent_id, last_accessed_at);
CREATE INDEX idx_chunks_superseded ON chunks(superseded_by) WHERE superseded_by IS NOT NULL;
CREATE INDEX idx_chunks_pending ON chunks(agent_id) WHERE embedding IS NULL;

CREATE TABLE memory_blocks (
    agent_id    TEXT NOT NULL,
    key         TEXT NOT NULL,
    value       TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    char_limit  INTEGER,
    PRIMARY KEY (agent_id, key)
);

CREATE TABLE embedding_model (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    model_id    TEXT NOT NULL,
    dimension   INTEGER,
    recorded_at TEXT NOT NULL
);

-- Bumped by triggers whenever an agent's searchable vectors change, so an
-- in-memory vector matrix knows when another connection changed them.
CREATE TABLE agent_versions (
    agent_id TEXT PRIMARY KEY,
    version  INTEGER NOT NULL
);
CREATE TRIGGER chunks_version_ai AFTER INSERT ON chunks BEGIN
    INSERT INTO agent_versions(agent_id, version) VALUES (new.agent_id, 1)
    ON CONFLICT(agent_id) DO UPDATE SET version = version + 1;
END;
CREATE TRIGGER chunks_version_ad AFTER DELETE ON chunks BEGIN
    INSERT INTO agent_versions(agent_id, version) VALUES (old.agent_id, 1)
    ON CONFLICT(agent_id) DO UPDATE SET version = version + 1;
END;
CREATE TRIGGER chunks_version_au AFTER UPDATE OF embedding, superseded_by ON chunks BEGIN
    INSERT INTO agent_versions(agent_id, version) VALUES (new.agent_id, 1)
    ON CONFLICT(agent_id) DO UPDATE SET version = version + 1;
END;
"""

_CHUNKS_FTS = """
CREATE VIRTUAL TABLE chunks_fts USING fts5(
    content,
    content='chunks',
    content_rowid='rowid',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER chunks_fts_ai AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts(rowid, content) VALUES (new.rowid, new.content);
END;
CREATE TRIGGER chunks_fts_ad AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
END;
CREATE TRIGGER chunks_fts_au AFTER UPDATE OF content ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
    INSERT INTO chunks_fts(rowid, content) VALUES (new.rowid, new.content);
END;
"""

_API_KEYS = """
CREATE TABLE api_keys (
    id           TEXT PRIMARY KEY,   -- the public part of the key
    secret_hash  TEXT NOT NULL,      -- SHA-256 of the secret part, hex
    agents       TEXT NOT NULL,      -- JSON list of the agent ids the key may reach
    admin        INTEGER NOT NULL DEFAULT 0,
    label        TEXT,
    created_at   TEXT NOT NULL
);
"""

# Recall's time filters (``since``/``until``, and the period a query names) select by when a
# chunk was observed, or else created; without this index each such recall read every row of
# the agent (75 ms at 100k rows).
_CHUNKS_WHEN = """
CREATE INDEX idx_chunks_when ON chunks(agent_id, COALESCE(observed_at, created_at), superseded_by);
"""

# Recall's conversational context reads the memories stored just before and after a hit
# (ULID order within one agent); this index serves that and everything the (agent_id, kind)
# index it replaces served.
_CHUNKS_ORDER = """
CREATE INDEX idx_chunks_agent_order ON chunks(agent_id, kind, id);
DROP INDEX idx_chunks_agent_kind;
"""

# Curation: the agent's signed feedback, the time of the last reinforcement (recency counts from
# it), and provenance: where a memory came from and in which session.
_CURATION = """
ALTER TABLE chunks ADD COLUMN feedback INTEGER NOT NULL DEFAULT 0;
ALTER TABLE chunks ADD COLUMN reinforced_at TEXT;
ALTER TABLE chunks ADD COLUMN source TEXT;
ALTER TABLE chunks ADD COLUMN session_id TEXT;
CREATE INDEX idx_chunks_session ON chunks(agent_id, session_id) WHERE session_id IS NOT NULL;
"""

# The archive: what pruning for size moves out of ``chunks``, with its own full-text index. No vector:
# that is most of what archiving saves; a restored memory is embedded again.
_ARCHIVE = """
CREATE TABLE chunks_archive (
    id                TEXT PRIMARY KEY,
    agent_id          TEXT NOT NULL,
    content           TEXT NOT NULL,
    content_hash      TEXT,
    metadata          TEXT,
    kind              TEXT NOT NULL,
    running_intensity REAL NOT NULL,
    encounter_count   INTEGER NOT NULL,
    access_count      INTEGER NOT NULL,
    last_accessed_at  TEXT NOT NULL,
    superseded_by     TEXT,
    created_at        TEXT NOT NULL,
    observed_at       TEXT,
    feedback          INTEGER NOT NULL DEFAULT 0,
    reinforced_at     TEXT,
    source            TEXT,
    session_id        TEXT,
    archived_at       TEXT NOT NULL
);
CREATE INDEX idx_archive_agent ON chunks_archive(agent_id, id);
CREATE VIRTUAL TABLE chunks_archive_fts USING fts5(
    content,
    content='chunks_archive',
    content_rowid='rowid',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER chunks_archive_fts_ai AFTER INSERT ON chunks_archive BEGIN
    INSERT INTO chunks_archive_fts(rowid, content) VALUES (new.rowid, new.content);
END;
CREATE TRIGGER chunks_archive_fts_ad AFTER DELETE ON chunks_archive BEGIN
    INSERT INTO chunks_archive_fts(chunks_archive_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
END;
"""

# Links between memories: memories recalled together link together, a
# newer fact links to the one it superseded. A link goes with either end (triggers), archiving
# included: it holds only ids.
_LINKS = """
CREATE TABLE chunk_links (
    agent_id    TEXT NOT NULL,
    kind        TEXT NOT NULL CHECK (kind IN ('co_recall', 'supersedes', 'relation')),
    a           TEXT NOT NULL,
    b           TEXT NOT NULL,
    strength    REAL NOT NULL DEFAULT 1.0,
    updated_at  TEXT NOT NULL,
    PRIMARY KEY (agent_id, kind, a, b)
) WITHOUT ROWID;
CREATE INDEX idx_links_a ON chunk_links(agent_id, a);
CREATE INDEX idx_links_b ON chunk_links(agent_id, b);
CREATE TRIGGER chunk_links_ad AFTER DELETE ON chunks BEGIN
    DELETE FROM chunk_links WHERE agent_id = old.agent_id AND a = old.id;
    DELETE FROM chunk_links WHERE agent_id = old.agent_id AND b = old.id;
END;
"""

# Weak co-recall links (one recall returned both ends) by when a recall last strengthened them: the
# ones that fade, and past the cap the oldest (core/curation/rules.py, applied by stores/retrievals.py).
# A link that grows strong leaves it.
_WEAK_LINKS = """
CREATE INDEX idx_links_weak ON chunk_links(agent_id, updated_at) WHERE kind = 'co_recall' AND strength < 2.0;
"""

# Experiences. What long-term memory keeps of one beside its chunk (same id): gone with
# the chunk, kept while the chunk is archived (archiving inserts into the archive before it deletes,
# restoring the other way round). The context's user, room and task ids are indexed for
# recall_related. The short-term buffer lives here only when it must be durable or shared.
_EXPERIENCES = """
CREATE TABLE experiences (
    id              TEXT PRIMARY KEY,
    agent_id        TEXT NOT NULL,
    type            TEXT NOT NULL,
    importance      REAL NOT NULL,
    context         TEXT NOT NULL,
    user_ref        TEXT,
    room_ref        TEXT,
    task_ref        TEXT,
    observed_at     TEXT NOT NULL,
    consolidated_at TEXT NOT NULL
);
CREATE INDEX idx_experiences_when ON experiences(agent_id, observed_at);
CREATE INDEX idx_experiences_type ON experiences(agent_id, type, observed_at);
CREATE INDEX idx_experiences_importance ON experiences(agent_id, importance);
CREATE INDEX idx_experiences_user ON experiences(agent_id, user_ref, observed_at) WHERE user_ref IS NOT NULL;
CREATE INDEX idx_experiences_room ON experiences(agent_id, room_ref, observed_at) WHERE room_ref IS NOT NULL;
CREATE INDEX idx_experiences_task ON experiences(agent_id, task_ref, observed_at) WHERE task_ref IS NOT NULL;
CREATE TRIGGER experiences_chunk_ad AFTER DELETE ON chunks BEGIN
    DELETE FROM experiences WHERE id = old.id AND NOT EXISTS (SELECT 1 FROM chunks_archive WHERE id = old.id);
END;
CREATE TRIGGER experiences_archive_ad AFTER DELETE ON chunks_archive BEGIN
    DELETE FROM experiences WHERE id = old.id AND NOT EXISTS (SELECT 1 FROM chunks WHERE id = old.id);
END;

CREATE TABLE short_term (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    id          TEXT NOT NULL UNIQUE,
    agent_id    TEXT NOT NULL,
    type        TEXT NOT NULL,
    content     TEXT NOT NULL,
    importance  REAL NOT NULL,
    context     TEXT NOT NULL,
    tags        TEXT NOT NULL,
    source      TEXT,
    session_id  TEXT,
    observed_at TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    embedding   BLOB
);
CREATE INDEX idx_short_term_agent ON short_term(agent_id, seq);

CREATE TABLE agent_stats (
    agent_id TEXT NOT NULL,
    name     TEXT NOT NULL,
    value    REAL NOT NULL,
    PRIMARY KEY (agent_id, name)
) WITHOUT ROWID;
"""

# Capture: the inbox of observed messages (a processed message keeps its id, so a
# message sent again is not processed twice, and loses its text once no window needs it), each
# session's cursor, and what surfacing showed each session (gone with the memory).
_CAPTURE = """
CREATE TABLE observed_messages (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    agent_id    TEXT NOT NULL,
    session_id  TEXT NOT NULL,
    message_id  TEXT NOT NULL,
    role        TEXT NOT NULL,
    name        TEXT,
    content     TEXT NOT NULL,
    observed_at TEXT,
    created_at  TEXT NOT NULL,
    UNIQUE (agent_id, session_id, message_id)
);
CREATE INDEX idx_observed_session ON observed_messages(agent_id, session_id, seq);

CREATE TABLE capture_cursors (
    agent_id      TEXT NOT NULL,
    session_id    TEXT NOT NULL,
    processed_seq INTEGER NOT NULL,
    updated_at    TEXT NOT NULL,
    PRIMARY KEY (agent_id, session_id)
) WITHOUT ROWID;

CREATE TABLE surfaced (
    agent_id    TEXT NOT NULL,
    session_id  TEXT NOT NULL,
    chunk_id    TEXT NOT NULL,
    surfaced_at TEXT NOT NULL,
    PRIMARY KEY (agent_id, session_id, chunk_id)
) WITHOUT ROWID;
CREATE INDEX idx_surfaced_chunk ON surfaced(chunk_id);
CREATE TRIGGER surfaced_chunk_ad AFTER DELETE ON chunks BEGIN
    DELETE FROM surfaced WHERE chunk_id = old.id;
END;
"""

# The archive listed the latest archived first, a page at a time (the dashboard's browse).
_ARCHIVE_ORDER = """
CREATE INDEX idx_archive_when ON chunks_archive(agent_id, archived_at, id);
"""

# The dashboard's stats (issue 22): each agent's counters per UTC day (retrievals, recalls,
# consolidation, pruning; hippo keeps no event log), and an index that holds every column the
# whole-agent summary reads, so it scans the index instead of rows carrying text and vectors.
_DAILY = """
CREATE TABLE agent_daily (
    agent_id TEXT NOT NULL,
    day      TEXT NOT NULL,   -- YYYY-MM-DD, UTC
    name     TEXT NOT NULL,
    value    INTEGER NOT NULL,
    PRIMARY KEY (agent_id, day, name)
) WITHOUT ROWID;
CREATE INDEX idx_chunks_summary ON chunks(agent_id, created_at, last_accessed_at, running_intensity, access_count,
                                          superseded_by);
"""

# Browse (summary.py) orders every chunk of an agent by strength, last access or feedback, ties by
# creation then id: the summary index holding kind, feedback and id too answers it without the rows
# (at 100k, a strength order: 107 ms through the rows, 37 through the index).
_BROWSE_ORDER = """
DROP INDEX idx_chunks_summary;
CREATE INDEX idx_chunks_summary ON chunks(agent_id, created_at, last_accessed_at, running_intensity, access_count,
                                          superseded_by, kind, feedback, id);
"""

# An 8-bit copy of each archived memory's vector (core/ports/vectors.py: a scale, then the codes; a quarter
# of the float32 size), so a forget reaches the archive by meaning as it reaches live memories.
# Memories archived before it have none: a forget embeds them once (core/curation/archive.py).
_ARCHIVE_VECTORS = """
ALTER TABLE chunks_archive ADD COLUMN embedding_int8 BLOB;
"""

# A removed memory takes the text of the captured messages it came from (its source ids) with it:
# found by message id, which the inbox's unique key (agent, session, message) cannot seek alone.
_OBSERVED_BY_ID = """
CREATE INDEX idx_observed_message ON observed_messages(agent_id, message_id);
"""

# Recall's conversational context reads the memories of a hit's own session stored just before and
# after it (core/recall/context.py): the session index, with kind and id after the session, seeks them;
# its first two columns still serve the session filter (narrowing/driving.py names it).
_SESSION_ORDER = """
DROP INDEX idx_chunks_session;
CREATE INDEX idx_chunks_session ON chunks(agent_id, session_id, kind, id) WHERE session_id IS NOT NULL;
"""

# Session histories (stores/sql/sessions.py): the items an agent framework keeps between the turns
# of a conversation, as their JSON text, in order; found by a memory captured from one through the
# id capture observed it under (a forget takes the item with the memory).
_SESSION_ITEMS = """
CREATE TABLE session_items (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    agent_id   TEXT NOT NULL,
    session_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    item       TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX idx_session_items ON session_items(agent_id, session_id, seq);
CREATE INDEX idx_session_items_message ON session_items(agent_id, message_id);
"""

# The audit trail (stores/audit.py). The secret keys the trail's digests and signs its checkpoints:
# random per database, made here, kept outside the trail's own table.
_AUDIT = """
CREATE TABLE audit_records (
    agent_id     TEXT NOT NULL,
    seq          INTEGER NOT NULL,
    at           TEXT NOT NULL,
    operation    TEXT NOT NULL,
    operation_id TEXT NOT NULL,
    who          TEXT NOT NULL,
    surface      TEXT NOT NULL,
    kind         TEXT NOT NULL,
    body         TEXT NOT NULL,
    prev_hash    TEXT NOT NULL,
    hash         TEXT NOT NULL,
    PRIMARY KEY (agent_id, seq)
) WITHOUT ROWID;
CREATE TABLE audit_heads (
    agent_id TEXT PRIMARY KEY,
    seq      INTEGER NOT NULL,
    hash     TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE audit_secret (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    secret TEXT NOT NULL
);
INSERT INTO audit_secret (id, secret) VALUES (1, lower(hex(randomblob(32))));
"""

MIGRATIONS: list[tuple[str, str]] = [
    ("0001_chunks_blocks_embedding_model", _CHUNKS),
    ("0002_chunks_fts", _CHUNKS_FTS),
    ("0003_api_keys", _API_KEYS),
    ("0004_chunks_when", _CHUNKS_WHEN),
    ("0005_chunks_order", _CHUNKS_ORDER),
    ("0006_curation", _CURATION),
    ("0007_archive", _ARCHIVE),
    ("0008_links", _LINKS),
    ("0009_experiences", _EXPERIENCES),
    ("0010_capture", _CAPTURE),
    ("0011_archive_order", _ARCHIVE_ORDER),
    ("0012_daily", _DAILY),
    ("0013_filter_indexes", driving.MIGRATION),  # chunk_tags, experiences' chunk rowids (narrowing/driving.py)
    ("0014_browse_order", _BROWSE_ORDER),
    ("0015_chunk_changes", changes.MIGRATION),  # rowids written, for what stores keep in memory (changes.py)
    ("0016_dashboard_sessions", SESSIONS_MIGRATION),  # logout ends a session on every server (stores/sql/keys.py)
    ("0017_archive_vectors", _ARCHIVE_VECTORS),
    ("0018_observed_by_id", _OBSERVED_BY_ID),
    ("0020_fact_merges", merges.MIGRATION),  # the wordings merged into facts (merges.py)
    ("0021_session_order", _SESSION_ORDER),  # after 0020, which a database may already have (no 0019)
    ("0022_chunk_windows", windows.MIGRATION),  # a long chunk's later window vectors (windows.py)
    ("0023_merge_provenance", merges.PROVENANCE),  # a merged wording's metadata, source, session (merges.py)
    ("0024_merges_rewritten", merges.REWRITTEN),  # a fact's new text takes its merged wordings (merges.py)
    ("0025_weak_links", _WEAK_LINKS),
    ("0026_filter_keys", driving.KEYS_MIGRATION),  # metadata values' and sources' keys (narrowing/driving.py)
    ("0027_session_items", _SESSION_ITEMS),
    ("0028_audit_trail", _AUDIT),  # every change's record, hash-chained per agent (stores/audit.py)
    ("0029_audit_touched", TOUCHED_SQLITE),  # which records touched which id (stores/audit.py)
]


def migrate(conn: sqlite3.Connection) -> int:
    """Apply the migrations this database lacks, each in its own transaction (on ``conn``, which
    then knows the functions the schema's triggers call)."""
    driving.register(conn)
    current = conn.execute("PRAGMA user_version").fetchone()[0]
    if current > len(MIGRATIONS):
        raise StorageError(
            f"this database has schema version {current}, newer than this hippo knows "
            f"({len(MIGRATIONS)}); upgrade hippo to open it"
        )
    for number, (name, script) in enumerate(MIGRATIONS[current:], start=current + 1):
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Another process may have migrated while we waited for the lock.
            if conn.execute("PRAGMA user_version").fetchone()[0] >= number:
                conn.execute("COMMIT")
                continue
            for statement in _statements(script):
                conn.execute(statement)
            conn.execute(
                "CREATE TABLE IF NOT EXISTS hippo_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
            )
            conn.execute(
                "INSERT INTO hippo_migrations(name, applied_at) VALUES (?, ?)",
                (name, datetime.now(timezone.utc).isoformat()),
            )
            conn.execute(f"PRAGMA user_version = {number}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return len(MIGRATIONS)


def _statements(script: str) -> list[str]:
    """Split a script into complete statements (triggers contain semicolons)."""
    statements, buffer = [], ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        statements.append(buffer.strip())
    return statements
