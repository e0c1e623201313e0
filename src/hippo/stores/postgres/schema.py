"""PostgreSQL schema and migrations: the tables of the SQLite store, in PostgreSQL's terms.

Differences, each for a reason:

- ``embedding`` is ``vector`` without a dimension, so one database can switch models; the HNSW
  index is a partial expression index on ``embedding::vector(N)`` for the recorded dimension
  ``N``, built in bulk the first time an agent has ``ann_threshold`` vectors (pgvector inserts
  each row of a live graph one at a time, ~30x slower than a store without it), and dropped
  when the model changes (``vector_index``).
- ``tsv`` is a stored ``tsvector`` (``hippo_english``: stemmed like SQLite's porter tokenizer,
  no stop words, accents folded by ``hippo_fold``) with a GIN index: the keyword side of search.
- Timestamps are ``timestamptz``; metadata is ``jsonb``.
- A chunk is two rows (0019, ``strength.py``): ``chunk_rows`` (text, vector, metadata) and its
  counters in ``chunk_strength``, so that a recall's retrieval write is a HOT update of a narrow
  row; ``chunks`` is a writable view of both, in the shape of the table it replaced.
- ``hippo_migrations`` records what ran; a database from a newer hippo is refused.

Migrations run under a transaction-level advisory lock, so several servers starting at once
apply each migration once.
"""

from __future__ import annotations

from typing import Any

from hippo.errors import StorageError
from hippo.stores.audit import TOUCHED_POSTGRES
from hippo.stores.postgres import merges, strength, windows
from hippo.stores.postgres.triggers import DELETE_EXPERIENCE, gone_with_chunk

__all__ = ["MIGRATIONS", "MIGRATION_LOCK", "SESSIONS_MIGRATION", "migrate", "vector_index"]

MIGRATION_LOCK = 0x6869_7070_6F00  # "hippo\0": one advisory lock id for schema changes

# Issue 32: logout ends the session on every server. Sessions made before had no record, so
# their cookies are refused from now on and their holders log in once more.
SESSIONS_MIGRATION = """
CREATE TABLE dashboard_sessions (
    id          text PRIMARY KEY,   -- SHA-256 of the session's secret id, hex
    key_id      text NOT NULL,      -- api_keys.id; deleted with the key
    created_at  timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL
);
CREATE INDEX dashboard_sessions_key ON dashboard_sessions (key_id);
"""

_BASE = """
CREATE EXTENSION IF NOT EXISTS vector;
-- Words as SQLite's FTS5 tokenizer reads them (porter unicode61 remove_diacritics): stemmed, no
-- stop words (recall drops English stop words itself; conversation search keeps them), accents
-- folded (PostgreSQL ships no unaccent here: hippo_fold translates the Latin letters with marks),
-- hyphens split words (PostgreSQL's parser would read "XR-7731" as "xr" and the number -7731).
CREATE FUNCTION hippo_fold(t text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT translate(lower(t), 'àáâãäåāăąçćčďèéêëēĕėęěìíîïīĭįıñńňòóôõöøōŏőùúûüūŭůűųýÿźżžßœæ-',
                               'aaaaaaaaacccdeeeeeeeeeiiiiiiiinnnooooooooouuuuuuuuuyyzzzsoa ') $$;
CREATE TEXT SEARCH DICTIONARY hippo_english_stem (TEMPLATE = snowball, LANGUAGE = english);
CREATE TEXT SEARCH CONFIGURATION hippo_english (COPY = english);
ALTER TEXT SEARCH CONFIGURATION hippo_english ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word,
    hword, hword_part WITH hippo_english_stem;
CREATE TABLE chunks (
    id                text PRIMARY KEY,
    agent_id          text NOT NULL,
    content           text NOT NULL,
    content_hash      text,
    embedding         vector,
    metadata          jsonb NOT NULL DEFAULT '{}'::jsonb,
    kind              text NOT NULL CHECK (kind IN ('fact', 'memory')),
    running_intensity double precision NOT NULL DEFAULT 0.5,
    encounter_count   integer NOT NULL DEFAULT 1,
    access_count      integer NOT NULL DEFAULT 0,
    last_accessed_at  timestamptz NOT NULL,
    superseded_by     text,
    created_at        timestamptz NOT NULL,
    observed_at       timestamptz,
    tsv               tsvector GENERATED ALWAYS AS (to_tsvector('hippo_english', hippo_fold(content))) STORED
);
CREATE UNIQUE INDEX chunks_memory_dedup ON chunks (agent_id, content_hash) WHERE kind = 'memory';
CREATE INDEX chunks_agent_order ON chunks (agent_id, kind, id);
CREATE INDEX chunks_agent_id ON chunks (agent_id, id);
CREATE INDEX chunks_when ON chunks (agent_id, (COALESCE(observed_at, created_at)));
CREATE INDEX chunks_superseded ON chunks (superseded_by) WHERE superseded_by IS NOT NULL;
CREATE INDEX chunks_pending ON chunks (agent_id) WHERE embedding IS NULL;
CREATE INDEX chunks_tsv ON chunks USING gin (tsv);

CREATE TABLE memory_blocks (
    agent_id    text NOT NULL,
    key         text NOT NULL,
    value       text NOT NULL,
    updated_at  timestamptz NOT NULL,
    char_limit  integer,
    PRIMARY KEY (agent_id, key)
);

CREATE TABLE embedding_model (
    id          integer PRIMARY KEY CHECK (id = 1),
    model_id    text NOT NULL,
    dimension   integer,
    recorded_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
    id           text PRIMARY KEY,
    secret_hash  text NOT NULL,
    agents       jsonb NOT NULL,
    admin        boolean NOT NULL DEFAULT false,
    label        text,
    created_at   timestamptz NOT NULL
);
"""

# Curation: the agent's signed feedback, the time of the last reinforcement (recency counts from
# it), and provenance: where a memory came from and in which session.
_CURATION = """
ALTER TABLE chunks ADD COLUMN feedback integer NOT NULL DEFAULT 0;
ALTER TABLE chunks ADD COLUMN reinforced_at timestamptz;
ALTER TABLE chunks ADD COLUMN source text;
ALTER TABLE chunks ADD COLUMN session_id text;
CREATE INDEX chunks_session ON chunks (agent_id, session_id) WHERE session_id IS NOT NULL;
"""

# The archive: what pruning for size moves out of ``chunks``, with its own full-text index. No vector:
# that is most of what archiving saves; a restored memory is embedded again.
_ARCHIVE = """
CREATE TABLE chunks_archive (
    id                text PRIMARY KEY,
    agent_id          text NOT NULL,
    content           text NOT NULL,
    content_hash      text,
    metadata          jsonb NOT NULL DEFAULT '{}'::jsonb,
    kind              text NOT NULL,
    running_intensity double precision NOT NULL,
    encounter_count   integer NOT NULL,
    access_count      integer NOT NULL,
    last_accessed_at  timestamptz NOT NULL,
    superseded_by     text,
    created_at        timestamptz NOT NULL,
    observed_at       timestamptz,
    feedback          integer NOT NULL DEFAULT 0,
    reinforced_at     timestamptz,
    source            text,
    session_id        text,
    archived_at       timestamptz NOT NULL,
    tsv               tsvector GENERATED ALWAYS AS (to_tsvector('hippo_english', hippo_fold(content))) STORED
);
CREATE INDEX chunks_archive_agent ON chunks_archive (agent_id, id);
CREATE INDEX chunks_archive_tsv ON chunks_archive USING gin (tsv);
"""

# Links between memories: memories recalled together link together, a
# newer fact links to the one it superseded. A link goes with either end (foreign keys), archiving
# included: it holds only ids.
_LINKS = """
CREATE TABLE chunk_links (
    agent_id    text NOT NULL,
    kind        text NOT NULL CHECK (kind IN ('co_recall', 'supersedes', 'relation')),
    a           text NOT NULL REFERENCES chunks (id) ON DELETE CASCADE,
    b           text NOT NULL REFERENCES chunks (id) ON DELETE CASCADE,
    strength    double precision NOT NULL DEFAULT 1.0,
    updated_at  timestamptz NOT NULL,
    PRIMARY KEY (agent_id, kind, a, b)
);
CREATE INDEX chunk_links_a ON chunk_links (a);  -- what the cascades look up: a deleted chunk's links
CREATE INDEX chunk_links_b ON chunk_links (b);
"""

# Experiences, as in SQLite (stores/sqlite/schema.py): a record beside its chunk, gone
# with it and kept while the chunk is archived (a trigger, not a foreign key: the chunk moves
# between two tables); the short-term buffer every server shares; the consolidation counters.
_EXPERIENCES = f"""
CREATE TABLE experiences (
    id              text PRIMARY KEY,
    agent_id        text NOT NULL,
    type            text NOT NULL,
    importance      double precision NOT NULL,
    context         jsonb NOT NULL,
    user_ref        text,
    room_ref        text,
    task_ref        text,
    observed_at     timestamptz NOT NULL,
    consolidated_at timestamptz NOT NULL
);
CREATE INDEX experiences_when ON experiences (agent_id, observed_at);
CREATE INDEX experiences_type ON experiences (agent_id, type, observed_at);
CREATE INDEX experiences_importance ON experiences (agent_id, importance);
CREATE INDEX experiences_user ON experiences (agent_id, user_ref, observed_at) WHERE user_ref IS NOT NULL;
CREATE INDEX experiences_room ON experiences (agent_id, room_ref, observed_at) WHERE room_ref IS NOT NULL;
CREATE INDEX experiences_task ON experiences (agent_id, task_ref, observed_at) WHERE task_ref IS NOT NULL;
{gone_with_chunk("hippo_experience_gone", DELETE_EXPERIENCE, "chunks")}
CREATE TRIGGER experiences_chunk_ad AFTER DELETE ON chunks FOR EACH ROW EXECUTE FUNCTION hippo_experience_gone();
CREATE TRIGGER experiences_archive_ad AFTER DELETE ON chunks_archive
    FOR EACH ROW EXECUTE FUNCTION hippo_experience_gone();

CREATE TABLE short_term (
    seq         bigserial PRIMARY KEY,
    id          text NOT NULL UNIQUE,
    agent_id    text NOT NULL,
    type        text NOT NULL,
    content     text NOT NULL,
    importance  double precision NOT NULL,
    context     jsonb NOT NULL,
    tags        jsonb NOT NULL,
    source      text,
    session_id  text,
    observed_at timestamptz NOT NULL,
    created_at  timestamptz NOT NULL,
    embedding   vector
);
CREATE INDEX short_term_agent ON short_term (agent_id, seq);

CREATE TABLE agent_stats (
    agent_id text NOT NULL,
    name     text NOT NULL,
    value    double precision NOT NULL,
    PRIMARY KEY (agent_id, name)
);
"""

# Capture, as in SQLite (stores/sqlite/schema.py).
_CAPTURE = """
CREATE TABLE observed_messages (
    seq         bigserial PRIMARY KEY,
    agent_id    text NOT NULL,
    session_id  text NOT NULL,
    message_id  text NOT NULL,
    role        text NOT NULL,
    name        text,
    content     text NOT NULL,
    observed_at timestamptz,
    created_at  timestamptz NOT NULL,
    UNIQUE (agent_id, session_id, message_id)
);
CREATE INDEX observed_session ON observed_messages (agent_id, session_id, seq);

CREATE TABLE capture_cursors (
    agent_id      text NOT NULL,
    session_id    text NOT NULL,
    processed_seq bigint NOT NULL,
    updated_at    timestamptz NOT NULL,
    PRIMARY KEY (agent_id, session_id)
);

CREATE TABLE surfaced (
    agent_id    text NOT NULL,
    session_id  text NOT NULL,
    chunk_id    text NOT NULL REFERENCES chunks (id) ON DELETE CASCADE,
    surfaced_at timestamptz NOT NULL,
    PRIMARY KEY (agent_id, session_id, chunk_id)
);
CREATE INDEX surfaced_chunk ON surfaced (chunk_id);
"""

# The archive listed the latest archived first, a page at a time (the dashboard's browse).
_ARCHIVE_ORDER = """
CREATE INDEX chunks_archive_when ON chunks_archive (agent_id, archived_at, id);
"""

# The dashboard's stats (issue 22), as in SQLite: each agent's counters per UTC day, and an index
# holding every column the whole-agent summary reads (an index-only scan, not the vector rows).
_DAILY = """
CREATE TABLE agent_daily (
    agent_id text NOT NULL,
    day      date NOT NULL,
    name     text NOT NULL,
    value    bigint NOT NULL,
    PRIMARY KEY (agent_id, day, name)
);
CREATE INDEX chunks_summary ON chunks (agent_id, created_at, last_accessed_at, running_intensity, access_count,
                                       superseded_by);
"""

# Recall's tag filter (``metadata -> 'tags' @> '["tag"]'``) reads the tags' own index instead of
# every row's JSON: the twin of SQLite's chunk_tags. An index on chunks, so a forgotten chunk's tags
# leave with its row (``hippo scrub``'s VACUUM FULL rewrites the indexes too).
_TAG_INDEX = """
CREATE INDEX chunks_tags ON chunks USING gin ((metadata -> 'tags') jsonb_path_ops);
"""

# As in SQLite (stores/sqlite/schema.py): an 8-bit copy of each archived memory's vector.
_ARCHIVE_VECTORS = """
ALTER TABLE chunks_archive ADD COLUMN embedding_int8 bytea;
"""

# As in SQLite: the captured messages a removed memory came from, found by message id.
_OBSERVED_BY_ID = """
CREATE INDEX observed_message ON observed_messages (agent_id, message_id);
"""

# As in SQLite: a hit's neighbours in its own session, in storage order.
_SESSION_ORDER = """
DROP INDEX chunks_session;
CREATE INDEX chunks_session ON chunks (agent_id, session_id, kind, id) WHERE session_id IS NOT NULL;
"""

# Recall's filters each through an index of their own, as in SQLite: the provenance, and the metadata
# conditions that can be asked as containment (``eq``, ``in``) or presence (``exists``). The others
# had one already: kind (``chunks_agent_order``), session, time (``chunks_when``), tags. And a vector
# kept in its row, not in the TOAST table, unless the row would not fit a page (``toast_tuple_target``
# at its largest; the vector stays uncompressed, as before): the exact scan a narrow filter falls
# back to reads the vector of every row that passes, and fetching each from TOAST more than doubled
# its time (4,000 rows at 100k: 16 against 6 ms). Rows written before keep theirs out of line until
# ``hippo scrub`` rewrites the table. Every vector side tests ``vector_dims(embedding) = N``: without
# statistics on that expression the planner took it to pass 0.5% of rows, and chose its joins for a
# few hundred rows where there were tens of thousands.
_FILTER_INDEXES = """
CREATE INDEX chunks_source ON chunk_rows (agent_id, source) WHERE source IS NOT NULL;
CREATE INDEX chunks_metadata ON chunk_rows USING gin (metadata);
ALTER TABLE chunk_rows SET (toast_tuple_target = 8160);
DO $$ BEGIN  -- statistics on an expression: PostgreSQL 14 and later
    IF current_setting('server_version_num')::int >= 140000 THEN
        EXECUTE 'CREATE STATISTICS chunks_dimension ON (vector_dims(embedding)) FROM chunk_rows';
    END IF;
END $$;
ANALYZE chunk_rows;
"""

# Weak co-recall links (one recall returned both ends) by when a recall last strengthened them: the
# ones that fade, and past the cap the oldest (core/curation/rules.py, applied by stores/retrievals.py).
# A link that grows strong leaves it.
_WEAK_LINKS = """
CREATE INDEX chunk_links_weak ON chunk_links (agent_id, updated_at) WHERE kind = 'co_recall' AND strength < 2.0;
"""

# The words of every live (not superseded) chunk in a narrow table of their own, for the keyword side
# of a recall that asks for live chunks of some kinds and nothing else (search.py): in chunk_rows
# each row that matches is a page of its own (its vector fills it), and visiting 4,000 of them was
# most of that side's time; here ~30 rows share a page. Kept by a trigger on chunk_rows; a chunk's
# row leaves with it (forget, archive), and ``hippo scrub`` rewrites this table too.
_WORDS = """
CREATE TABLE chunk_words (
    id       text PRIMARY KEY REFERENCES chunk_rows (id) ON DELETE CASCADE,
    agent_id text NOT NULL,
    kind     text NOT NULL,
    tsv      tsvector NOT NULL
);
INSERT INTO chunk_words (id, agent_id, kind, tsv)
    SELECT id, agent_id, kind, tsv FROM chunk_rows WHERE superseded_by IS NULL;
CREATE INDEX chunk_words_tsv ON chunk_words USING gin (tsv);
CREATE FUNCTION hippo_words_written() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        IF (NEW.agent_id, NEW.kind, NEW.tsv, NEW.superseded_by IS NULL)
                IS NOT DISTINCT FROM (OLD.agent_id, OLD.kind, OLD.tsv, OLD.superseded_by IS NULL) THEN
            RETURN NULL;
        END IF;
        DELETE FROM chunk_words WHERE id = OLD.id;
    END IF;
    IF NEW.superseded_by IS NULL THEN
        INSERT INTO chunk_words (id, agent_id, kind, tsv) VALUES (NEW.id, NEW.agent_id, NEW.kind, NEW.tsv);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER chunk_words_written AFTER INSERT OR UPDATE OF agent_id, kind, content, superseded_by ON chunk_rows
    FOR EACH ROW EXECUTE FUNCTION hippo_words_written();
ANALYZE chunk_words;
"""

# The keyword side finds an agent's rows by its words (GIN) and its agent (this index) at once:
# with many agents on one table, the GIN index alone led to every agent's rows with the words (at
# 100 agents of 1,000 chunks, 6,000 rows read for 55 of the agent's: 16 of a 17 ms statement).
_WORDS_AGENT = "CREATE INDEX chunk_words_agent ON chunk_words (agent_id, kind);"

# Session histories, as in SQLite (stores/sqlite/schema.py).
_SESSION_ITEMS = """
CREATE TABLE session_items (
    seq        bigserial PRIMARY KEY,
    agent_id   text NOT NULL,
    session_id text NOT NULL,
    message_id text NOT NULL,
    item       text NOT NULL,
    created_at timestamptz NOT NULL
);
CREATE INDEX session_items_session ON session_items (agent_id, session_id, seq);
CREATE INDEX session_items_message ON session_items (agent_id, message_id);
"""

# The audit trail, as in SQLite (stores/audit.py); times as the ISO text that is hashed. The
# secret: two random UUIDs' hex (244 random bits), PostgreSQL 13's gen_random_uuid needing no extension.
_AUDIT = """
CREATE TABLE audit_records (
    agent_id     text NOT NULL,
    seq          bigint NOT NULL,
    at           text NOT NULL,
    operation    text NOT NULL,
    operation_id text NOT NULL,
    who          text NOT NULL,
    surface      text NOT NULL,
    kind         text NOT NULL,
    body         text NOT NULL,
    prev_hash    text NOT NULL,
    hash         text NOT NULL,
    PRIMARY KEY (agent_id, seq)
);
CREATE TABLE audit_heads (
    agent_id text PRIMARY KEY,
    seq      bigint NOT NULL,
    hash     text NOT NULL
);
CREATE TABLE audit_secret (
    id     integer PRIMARY KEY CHECK (id = 1),
    secret text NOT NULL
);
INSERT INTO audit_secret (id, secret)
    VALUES (1, replace(gen_random_uuid()::text, '-', '') || replace(gen_random_uuid()::text, '-', ''));
"""

MIGRATIONS: list[tuple[str, str]] = [
    ("0001_chunks_blocks_model_keys", _BASE),
    ("0002_curation", _CURATION),
    ("0003_archive", _ARCHIVE),
    ("0004_links", _LINKS),
    ("0005_experiences", _EXPERIENCES),
    ("0006_capture", _CAPTURE),
    ("0007_archive_order", _ARCHIVE_ORDER),
    ("0008_daily", _DAILY),
    ("0009_tag_index", _TAG_INDEX),
    ("0010_dashboard_sessions", SESSIONS_MIGRATION),  # logout ends a session on every server (stores/sql/keys.py)
    ("0011_archive_vectors", _ARCHIVE_VECTORS),
    ("0012_observed_by_id", _OBSERVED_BY_ID),
    ("0014_fact_merges", merges.MIGRATION),  # the wordings merged into facts (merges.py)
    ("0015_session_order", _SESSION_ORDER),  # after 0014, which a database may already have (no 0013)
    ("0016_chunk_windows", windows.MIGRATION),  # a long chunk's later window vectors (windows.py)
    ("0017_merge_provenance", merges.PROVENANCE),  # a merged wording's metadata, source, session (merges.py)
    ("0018_merges_rewritten", merges.REWRITTEN),  # a fact's new text takes its merged wordings (merges.py)
    ("0019_strength_table", strength.MIGRATION),  # the retrieval counters in a narrow table (strength.py)
    ("0020_filter_indexes", _FILTER_INDEXES),
    ("0021_weak_links", _WEAK_LINKS),
    ("0022_chunk_words", _WORDS),
    ("0023_chunk_words_agent", _WORDS_AGENT),
    ("0024_session_items", _SESSION_ITEMS),
    ("0025_audit_trail", _AUDIT),  # every change's record, hash-chained per agent (stores/audit.py)
    ("0026_audit_touched", TOUCHED_POSTGRES),  # which records touched which id (stores/audit.py)
]


def migrate(conn: Any) -> None:
    """Apply the migrations this database lacks (``conn``: a psycopg connection, not in a transaction)."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        conn.execute("CREATE TABLE IF NOT EXISTS hippo_migrations (number integer PRIMARY KEY, name text NOT NULL, "
                     "applied_at timestamptz NOT NULL DEFAULT now())")
        done = conn.execute("SELECT coalesce(max(number), 0) FROM hippo_migrations").fetchone()[0]
        if done > len(MIGRATIONS):
            raise StorageError(f"this database has schema version {done}, newer than this hippo knows "
                               f"({len(MIGRATIONS)}); upgrade hippo to open it")
        for number, (name, script) in enumerate(MIGRATIONS[done:], start=done + 1):
            conn.execute(script)
            conn.execute("INSERT INTO hippo_migrations (number, name) VALUES (%s, %s)", (number, name))


def vector_index(conn: Any, dimension: int | None, *, create: bool = True) -> bool:
    """The HNSW index for vectors of ``dimension`` (inner product: hippo's vectors are unit
    length), replacing one made for another dimension; ``None`` drops it. With ``create=False``
    only an index of another dimension is dropped. True when this call built the index. The long
    memories' windows (``chunk_windows``) get their own index alongside, built and dropped with it."""
    built = False
    # The chunks' index keeps the name it had before their table became ``chunk_rows`` (strength.py).
    for table, name in (("chunk_rows", "chunks_embedding_hnsw"), ("chunk_windows", "chunk_windows_embedding_hnsw")):
        rows = conn.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s AND indexname = %s",
                            (table, name)).fetchall()
        wanted = f"vector({dimension})" if dimension else None
        if rows and (wanted is None or wanted not in rows[0][1]):
            conn.execute(f"DROP INDEX {name}")
            rows = []
        if wanted and not rows and create:
            # Partial: only vectors of that size are cast (rows of a model being replaced, which an index
            # build made in the same transaction still reads, are skipped instead of failing the cast).
            conn.execute(f"CREATE INDEX {name} ON {table} USING hnsw ((embedding::{wanted}) vector_ip_ops) "
                         f"WITH (m = 16, ef_construction = 100) WHERE vector_dims(embedding) = {dimension}")
            built = built or table == "chunk_rows"
    return built
