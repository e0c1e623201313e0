/**
 * What the client's methods take: camelCase options, sent as the server's snake_case fields.
 * The results are the server's own types, in ./schema.ts.
 */

import type { RequestOptions } from "./http.js";

export type Kind = "fact" | "memory";
/** A time: a Date, or ISO 8601 text such as `2026-03-10T09:00:00Z`. */
export type Time = Date | string;
/** A memory's metadata: any JSON object; `tags` is a list of strings. */
export type Metadata = Record<string, unknown>;
/** Conditions on metadata: `{status: {$in: ["open", "blocked"]}, priority: {$gte: 2}}` ($eq $ne $in $gt $gte $lt $lte $exists; a plain value means $eq). */
export type MetadataConditions = Record<string, unknown>;
export type ExperienceType = "chat" | "observation" | "task" | "decision" | "tool-use" | "error" | "insight";

/**
 * A chat message in OpenAI's or Anthropic's shape (Pi's agent messages too, once through
 * `fromPiMessages`); each may also carry `id`, `name` (the speaker) and `timestamp` (ISO 8601).
 */
export interface ChatMessage {
  role: string;
  content?: unknown;
  id?: string | number;
  name?: string;
  timestamp?: string;
  [field: string]: unknown;
}

export interface ListOptions extends RequestOptions {
  /** 1 to 100; 20 by default. */
  limit?: number;
  /** The previous page's `next_cursor`. */
  cursor?: string;
  kind?: Kind;
}

export interface AuditOptions extends RequestOptions {
  /** Records at or after. */
  since?: Time;
  /** Records before. */
  until?: Time;
  /** One operation's records, by its public name (`forget_memory`). */
  operation?: string;
  /** Only the records that touched this memory. */
  id?: string;
  /** 1 to 1,000; 100 by default. */
  limit?: number;
  /** The previous page's `next_cursor`. */
  cursor?: string;
}

export interface SearchOptions extends RequestOptions {
  /** 1 to 100; 10 for `recallMemories`, 20 for `searchMemories`. */
  limit?: number;
  kind?: Kind;
  /** Only memories with all these tags. */
  tags?: string[];
  /** Observed (or stored) at or after. */
  since?: Time;
  /** Observed (or stored) before. */
  until?: Time;
  /** Only memories from any of these sources. */
  source?: string[];
  /** Only memories from this session. */
  sessionId?: string;
  /** Archived memories compete too, marked `archived`. */
  includeArchived?: boolean;
  /** Memories often recalled with the best hits follow them (`linked_from`). */
  expand?: boolean;
  /** What was current at this time: nothing stored later, a fact's version of then; never counted as retrieved. */
  asOf?: Time;
  metadata?: MetadataConditions;
}

export interface StoreOptions extends RequestOptions {
  metadata?: Metadata;
  /** Starting strength, 0 to 1; 0.5 by default. */
  intensity?: number;
  observedAt?: Time;
  /** Provenance: agent (the default), conversation, migration, ... */
  source?: string;
  sessionId?: string;
}

export interface UpdateOptions extends RequestOptions {
  /** New text: embedded and indexed again; the old text leaves every file. */
  content?: string;
  /** Replaces the memory's metadata. */
  metadata?: Metadata;
}

export interface RememberOptions extends RequestOptions {
  /** When the user said it; resolves "yesterday". */
  observedAt?: Time;
  metadata?: Metadata;
}

export interface ForgetOptions extends RequestOptions {
  /** List what would be deleted, delete nothing. */
  preview?: boolean;
  /** 1 to 100; 10 by default. */
  limit?: number;
  /** Answer with the forget's signed receipt (`receipt`), which `verifyReceipt` checks again later. */
  receipt?: boolean;
}

export interface DeleteOptions extends RequestOptions {
  /** Answer with the delete's signed receipt (`receipt`), which `verifyReceipt` checks again later. */
  receipt?: boolean;
}

export interface SetBlockOptions extends RequestOptions {
  /** The block's cap on its length; null removes it, left out keeps the current one. */
  charLimit?: number | null;
}

export interface LimitOptions extends RequestOptions {
  limit?: number;
}

export interface ContextOptions extends RequestOptions {
  /** The budget in (estimated) tokens; 2000 by default. */
  maxTokens?: number;
}

export interface ExperienceOptions extends RequestOptions {
  /** userId, roomId, taskId (or senderId), flags such as mentionedMe, anything else. */
  context?: Record<string, unknown>;
  /** 0 to 1; left out, it is rated by type and the context's flags. */
  importance?: number;
  tags?: string[];
  source?: string;
  sessionId?: string;
  observedAt?: Time;
}

export interface ExperienceQuery extends RequestOptions {
  /** Search text: by relevance; left out, the latest first. */
  query?: string;
  /** Only these types (any of them). */
  types?: ExperienceType[];
  /** Only with all these tags. */
  tags?: string[];
  minImportance?: number;
  /** Observed at or after. */
  since?: Time;
  limit?: number;
}

export interface RelatedQuery extends RequestOptions {
  userId?: string;
  roomId?: string;
  taskId?: string;
  limit?: number;
}

export interface SessionOptions extends RequestOptions {
  sessionId: string;
}

export interface SurfaceOptions extends SessionOptions {
  /** The context block's budget in tokens; 500 by default. */
  maxTokens?: number;
}

/** Compaction's numbers, over the server's `[compaction]` settings. */
export interface CompactionConfig {
  /** The decay rate of each entry type (decision, user_intent, context, tool_result, ephemeral, unknown). */
  decayRates?: Record<string, number>;
  sparseThreshold?: number;
  compressThreshold?: number;
  retentionFloor?: Record<string, number>;
  maxSparseIndexTokens?: number;
}

export interface CompactOptions extends RequestOptions {
  /** Store what fades as memories of this session (their ids in the summary); left out, nothing is stored. */
  sessionId?: string;
  /** An earlier compaction's summary. */
  previousSummary?: string;
  config?: CompactionConfig;
}

/** What an agent tool answers: `ok: true` with its fields, or `ok: false` with hippo's error. */
export type ToolResult =
  | ({ ok: true } & Record<string, unknown>)
  | { ok: false; error: { code: string; message: string } };
