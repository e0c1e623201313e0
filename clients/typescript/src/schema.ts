// The results hippo's HTTP API answers with, generated from its OpenAPI document by
// scripts/schema.mjs (`npm run schema -- http://127.0.0.1:8000`): do not edit by hand.
// Field names are the server's (snake_case); times are ISO 8601 text.

export interface ArchiveHits {
  hits: ArchivedHit[];
}

/**
 * An archived memory found by words (`search_archive`), with its BM25 score.
 */
export interface ArchivedHit {
  chunk: Chunk;
  score: number;
}

/**
 * One page of an agent's audit records; pass `next_cursor` back for the next (None: the last).
 */
export interface AuditPage {
  items: AuditRecord[];
  next_cursor: string | null;
}

/**
 * One change to an agent's memory, as the audit trail keeps it (`Memory.audit`): when, who
 * (an API key's id, `"local"` for an embedded call) through which surface, the operation (its
 * public name, and one `operation_id` per call), the ids it touched with the digests of their
 * content (keyed per database; never the text), counts by what was done. `seq` numbers the
 * agent's records; `hash` chains each to the one before (`prev_hash`). A `checkpoint`
 * record is left by trimming the trail: `checkpoint` holds the last removed record's seq and
 * hash, signed.
 */
export interface AuditRecord {
  agent_id: string;
  seq: number;
  at: string;
  operation: string;
  operation_id: string;
  who: string;
  surface: string;
  kind: "change" | "checkpoint";
  touched: Record<string, unknown>;
  counts: Record<string, unknown>;
  prev_hash: string;
  hash: string;
  checkpoint: Record<string, unknown> | null;
}

/**
 * A named memory block (`persona`, `human`) with its optional character limit.
 */
export interface Block {
  key: string;
  value: string;
  updated_at: string;
  char_limit: number | null;
}

export interface BlockContext {
  /**
   * The blocks as a system-prompt section.
   */
  context: string;
}

export interface BlockList {
  items: Block[];
}

/**
 * What `process_pending` did: messages processed, windows looked at and let through by the
 * gate, memories written (`merged`: strengthened one already held instead), facts settled
 * through `remember_facts` recognition, and the LLM calls made.
 */
export interface Captured {
  sessions: number;
  messages: number;
  windows: number;
  gated_in: number;
  memories: number;
  merged: number;
  facts: number;
  ids: string[];
  llm_calls: LLMCall[];
}

/**
 * One stored fact or memory, as kept in the `chunks` table.
 */
export interface Chunk {
  id: string;
  agent_id: string;
  content: string;
  kind: "fact" | "memory";
  metadata: Record<string, unknown>;
  running_intensity: number;
  encounter_count: number;
  access_count: number;
  last_accessed_at: string;
  created_at: string;
  observed_at: string | null;
  superseded_by: string | null;
  content_hash: string | null;
  has_vector: boolean;
  feedback: number;
  reinforced_at: string | null;
  source: string | null;
  session_id: string | null;
}

/**
 * A compacted session: the `summary` to put in place of the messages, what became
 * of each message, and the statistics.
 */
export interface Compaction {
  summary: string;
  entries: CompactionEntry[];
  stats: CompactionStats;
}

/**
 * What compaction made of one message: its `index` in the session, `type`,
 * `importance` after the modifiers, `retention` after decay, and `action`: `kept` in full
 * (a goal or a decision in force among them), `compressed` to one line, a `pointer` in the
 * sparse index, `dropped` (a pointer the full index had no room for; `classifier="reference"` only)
 * or `omitted` (an acknowledgement or trivia, left out). `memory_ids`: where `Memory.compact`
 * stored its content (more than one when it was longer than a memory may be).
 */
export interface CompactionEntry {
  index: number;
  type: string;
  role: string;
  importance: number;
  retention: number;
  action: "kept" | "compressed" | "pointer" | "dropped" | "omitted";
  tokens: number;
  memory_ids: string[];
}

/**
 * Compaction's statistics: entries in each section, tokens before and after (the stats comment's
 * count: pointer and compressed lines, kept entries whole), their `ratio` (None for an empty
 * session), `summary_tokens`, the summary text's own count, and `omitted`: acknowledgements and
 * trivia left out of the summary (hippo's layout).
 */
export interface CompactionStats {
  entries: number;
  sparse: number;
  compressed: number;
  kept: number;
  dropped: number;
  tokens_before: number;
  tokens_after: number;
  ratio: number | null;
  summary_tokens: number;
  sparse_index_tokens: number;
  omitted: number;
}

/**
 * What one `consolidate` run did: experiences of at least the threshold's
 * importance moved to long-term memory, most important first, in one transaction; of them,
 * `merged` were already held (the same or nearly the same text) and strengthened it instead;
 * then `pruned` old unimportant entries left the buffer. `remaining` stay short-term.
 */
export interface Consolidation {
  considered: number;
  consolidated: number;
  merged: number;
  pruned: number;
  remaining: number;
  ids: string[];
}

/**
 * Consolidation's counters of one agent (`Stats.consolidation`): experiences `recorded`,
 * `evicted` from a full buffer, `consolidated` into long-term memory (`merged` of them
 * into a memory already held), `pruned` from the buffer and `archived` by the long-term
 * bounds; `runs` and when the last one ran (None before the first); the rate (consolidated
 * over recorded) and the buffer's `capacity`.
 */
export interface ConsolidationStats {
  recorded: number;
  evicted: number;
  consolidated: number;
  merged: number;
  pruned: number;
  archived: number;
  runs: number;
  last_run_at: string | null;
  consolidation_rate: number;
  capacity: number;
}

/**
 * A message found by `recall_conversation`; `fields` holds its other columns.
 */
export interface ConversationHit {
  id: number;
  content: string;
  rank: number;
  snippet: string;
  fields: Record<string, unknown>;
}

/**
 * What `delete_all` removed from one agent. `scrubbed`: whether the text has already
 * left every file (see `Forgotten`).
 */
export interface Erased {
  agent_id: string;
  memories: number;
  facts: number;
  blocks: number;
  scrubbed: boolean;
  note: string | null;
  short_term: number;
  receipt: Receipt | null;
}

export interface ErrorBody {
  error: ErrorDetail;
}

export interface ErrorDetail {
  code: string;
  message: string;
}

/**
 * Something the agent lived through: a chat, observation, task, decision, tool use,
 * error or insight, with its `importance` (0-1; the starting strength once consolidated) and
 * structured `context` (user, room, task ids and anything else).
 *
 * `tier` is `short_term` (in the buffer, not yet consolidated) or `long_term` (a memory
 * of the agent, `id` its chunk id). `durable`: whether it is on disk now; a short-term
 * experience that is not may be lost with the process (see `short_term_durable`).
 * `relevance` is set on `recall` results when a query was given.
 */
export interface Experience {
  id: string;
  agent_id: string;
  type: string;
  content: string;
  importance: number;
  context: Record<string, unknown>;
  tags: string[];
  observed_at: string;
  created_at: string;
  tier: "short_term" | "long_term";
  durable: boolean;
  source: string | null;
  session_id: string | null;
  consolidated_at: string | null;
  strength: number | null;
  relevance: number | null;
}

export interface ExperienceList {
  items: Experience[];
}

/**
 * A fact's versions, oldest first; each replaced version names its successor.
 *
 * A version was superseded at its successor's `created_at`. `current` is
 * the live version, or `None` when the newest one was forgotten. `merged`: the
 * wordings merged into any version as duplicates, oldest first (`fact_id` names which).
 * `validity`: each version's interval, in the order of `versions`.
 */
export interface FactHistory {
  versions: Chunk[];
  current: Chunk | null;
  merged: MergedWording[];
  validity: Validity[];
}

/**
 * What `remember_facts` did with one extracted fact, and why.
 *
 * `action`: `new` (nothing similar stored), `distinct` (similar facts
 * exist but both are true), `duplicate` (strengthened `id`, an existing
 * fact) or `supersedes` (inserted `id`, marking `superseded` as replaced).
 * `band` is where the best similarity fell; `decided_by` is `band`,
 * `llm`, `offline` (the offline rule) or `text` (same words).
 */
export interface FactOutcome {
  fact: string;
  intensity: number;
  action: "new" | "distinct" | "duplicate" | "supersedes";
  id: string;
  similarity: number | null;
  band: "duplicate" | "ambiguous" | "new";
  decided_by: "band" | "llm" | "offline" | "text";
  reason: string;
  matched_id: string | null;
  matched_content: string | null;
  superseded: string[];
  intensity_before: number | null;
  intensity_after: number | null;
}

/**
 * The chunks `forget_memory` deleted, or would delete when `preview` is true.
 *
 * `scrubbed`: whether their text has already left every file (see `Forgotten`).
 */
export interface ForgetResult {
  deleted: Forgotten[];
  preview: boolean;
  scrubbed: boolean;
  note: string | null;
  messages: number;
  receipt: Receipt | null;
}

/**
 * A deleted chunk. `scrubbed` is False while a reader holding an older snapshot keeps its
 * text in the database's write-ahead log: the row is gone, and hippo finishes the scrub when the
 * reader lets go (`note` says why it waits).
 */
export interface Forgotten {
  id: string;
  content: string;
  kind: "fact" | "memory";
  similarity: number | null;
  scrubbed: boolean;
  note: string | null;
  receipt: Receipt | null;
}

export interface Health {
  status: "ok";
  version: string;
  /**
   * Whether requests need an API key.
   */
  auth: boolean;
}

/**
 * A recalled chunk with the parts of its score.
 *
 * `similarity` is the cosine to the query (`None` without a vector),
 * `keyword` the BM25 score scaled to [0, 1] against the best keyword match
 * (`None` when the chunk did not match a keyword), `relevance` their fusion (and the
 * preference for a day the query names): how well the chunk itself matches. `context` is
 * what the memories stored around it in its conversation lent (see `hippo.core.recall.context`), or,
 * with `rerank="learned"`, what the reranking stage added to the relevance or took from it
 * (`hippo.core.recall.rerank`), or what a later memory on the same subject needed to rank above the
 * one it follows (`hippo.core.recall.later`); the score reads `relevance + context`, so context only reorders:
 * `min_relevance` reads `relevance` alone, and surfacing the fusion alone. `feedback` is the factor the agent's
 * feedback put on the score (see `hippo.core.curation.feedback`).
 */
export interface Hit {
  chunk: Chunk;
  score: number;
  relevance: number;
  similarity: number | null;
  keyword: number | null;
  effective_strength: number;
  recency: number;
  context: number;
  feedback: number;
  archived: boolean;
  linked_from: string | null;
}

/**
 * One request to an LLM during `remember_facts`: what for, and what it cost.
 */
export interface LLMCall {
  purpose: "extract" | "classify";
  model: string;
  input_tokens: number;
  output_tokens: number;
  attempt: number;
}

/**
 * A memory's link to another (`related`): `co_recall` (`strength` recalls returned both),
 * `supersedes` (this fact replaced `chunk`) or `superseded_by` (`chunk` replaced it).
 */
export interface Link {
  chunk: Chunk;
  kind: string;
  strength: number;
}

export interface MemoryPage {
  items: Chunk[];
  /**
   * Pass as `cursor` for the next page; null on the last.
   */
  next_cursor: string | null;
}

/**
 * A wording recognised as a duplicate of a stored fact, which was strengthened instead of
 * storing it: kept so a merge loses no words. `Memory.split_fact` makes it a fact of its own again.
 *
 * `similarity` is the two texts' cosine when it was known; `intensity` how strongly it was said.
 * `metadata`, `source`, `session_id` and `observed_at` are those of the call that said it
 * (empty for wordings merged before they were kept), which a split fact takes.
 */
export interface MergedWording {
  id: string;
  fact_id: string;
  content: string;
  merged_at: string;
  similarity: number | null;
  intensity: number;
  metadata: Record<string, unknown>;
  source: string | null;
  session_id: string | null;
  observed_at: string | null;
}

/**
 * What `observe` acknowledged: `accepted` messages are durable and wait for
 * processing; `duplicates` (a message id the session already had) and `skipped` ones (system
 * prompts, tool outputs, empty messages) were not kept.
 */
export interface Observation {
  session_id: string;
  accepted: number;
  duplicates: number;
  skipped: number;
  message_ids: string[];
}

/**
 * One place a receipt checks (the memories, the full-text index, the vectors and ANN files,
 * the archive, the capture inbox, session items, links, history, experiences, blocks, the
 * audit trail, the write-ahead log): whether it is clean, and what was found or looked at.
 */
export interface PlaceCheck {
  place: string;
  ok: boolean;
  detail: string;
}

export interface Readiness {
  status: "ready";
  /**
   * Each check and whether it passed: store, migrations, model.
   */
  checks: Record<string, unknown>;
}

/**
 * Ranked hits of `recall_memories`; iterates like a list of `Hit`.
 *
 * `mode` is `hybrid` (vectors and keywords), `keyword` (no query vector:
 * no embedder, or it failed) or `vector` (the query had no usable word).
 */
export interface Recall {
  hits: Hit[];
  mode: "hybrid" | "keyword" | "vector";
  warning: string | null;
}

/**
 * Proof of one forget, signed by the database that did it (see the module's docstring).
 *
 * `checks` were made right after the change committed; `verified` says whether they all
 * held then. `wal_checkpointed` is None where the backend has no write-ahead log of hippo's
 * (PostgreSQL: `scrubbed` says whether `hippo scrub` has rewritten the tables since).
 */
export interface Receipt {
  agent_id: string;
  database: string;
  operation: string;
  operation_id: string;
  issued_at: string;
  removed: Removed[];
  counts: Record<string, unknown>;
  checks: PlaceCheck[];
  wal_checkpointed: boolean | null;
  scrubbed: boolean;
  audit_seq: number | null;
  audit_hash: string | null;
  signature: string;
}

/**
 * A receipt checked again (`Memory.verify_receipt`): `verified` when its signature and
 * audit record hold and every place is clean; `failed` names the places that are not.
 */
export interface ReceiptCheck {
  verified: boolean;
  checks: PlaceCheck[];
  failed: string[];
}

export interface RelatedList {
  links: Link[];
}

/**
 * Per-fact outcomes, a summary sentence, and the LLM calls made.
 */
export interface RememberResult {
  facts: FactOutcome[];
  summary: string;
  llm_calls: LLMCall[];
  extractor: "llm" | "offline";
}

/**
 * One thing a forget removed: its id, its kind (`memory`, `fact`, `wording`,
 * `experience`, `block`), the keyed digest of its text (as the audit trail keeps it) and
 * `words`, keyed fingerprints of its words in order: enough to find a copy of the text, in a
 * database holding the key, and nothing to read it back. `kept`: the id lives on with another
 * text (`update_memory`), so only the old text must be gone.
 */
export interface Removed {
  id: string;
  kind: string;
  digest: string;
  words: string[];
  kept: boolean;
}

/**
 * What one agent's memory holds, and what it runs on.
 */
export interface Stats {
  agent_id: string;
  facts: number;
  superseded_facts: number;
  memories: number;
  pending_vectors: number;
  blocks: number;
  embedder: string | null;
  dimension: number | null;
  database: string | null;
  database_bytes: number | null;
  archived: number;
  experiences: number;
  short_term: number;
  consolidation: ConsolidationStats;
}

/**
 * What `store_memory` did: `inserted` a new chunk or `strengthened` its twin.
 */
export interface StoreResult {
  id: string;
  action: "inserted" | "strengthened";
  chunk: Chunk;
  vector_pending: boolean;
}

/**
 * What `surface` found worth showing now: `text`, a compact context block with
 * ids within the token budget (empty when nothing is relevant), its `tokens`, and the `hits`
 * it holds, best first. None of them was shown to this session before.
 */
export interface Surfaced {
  text: string;
  tokens: number;
  hits: Hit[];
}

export interface ToolDefinition {
  name: string;
  /**
   * What the tool does and when to use it, written for a model.
   */
  description: string;
  /**
   * The tool's arguments as JSON Schema.
   */
  parameters: Record<string, unknown>;
}

export interface ToolList {
  items: ToolDefinition[];
}

/**
 * When one version of a fact was current: from `valid_from`, when hippo stored it (its
 * `created_at`; `observed_at` is when it was said, and may be earlier), until `valid_until`,
 * when its successor was stored. `valid_until` is None while the version is `current`, and
 * also when its successor was forgotten: then it was replaced at a time hippo no longer knows.
 */
export interface Validity {
  id: string;
  valid_from: string;
  valid_until: string | null;
  current: boolean;
}
