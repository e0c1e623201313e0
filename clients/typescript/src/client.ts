/**
 * `HippoClient`: one method per route of hippo's HTTP API, for one agent.
 *
 * Methods are named as the Python `Memory`'s operations, in camelCase (`recallMemories`,
 * `appendMemoryBlock`); options are camelCase too and travel as the server's snake_case fields.
 * Results are the server's JSON as it is (./schema.ts). Every failure rejects with a
 * {@link HippoError}: hippo's code, its message and the HTTP status.
 */

import { HippoError } from "./errors.js";
import { type ConnectionOptions, type QueryValue, type Request, type RequestOptions, Transport, isoTime, segment } from "./http.js";
import type {
  AuditOptions,
  ChatMessage,
  CompactOptions,
  ContextOptions,
  DeleteOptions,
  ExperienceOptions,
  ExperienceQuery,
  ExperienceType,
  ForgetOptions,
  LimitOptions,
  ListOptions,
  RelatedQuery,
  RememberOptions,
  SearchOptions,
  SessionOptions,
  SetBlockOptions,
  StoreOptions,
  SurfaceOptions,
  ToolResult,
  UpdateOptions,
} from "./options.js";
import type * as S from "./schema.js";

export interface ClientOptions extends ConnectionOptions {
  /** The agent whose memory this client reads and writes. */
  agentId: string;
}

export class HippoClient {
  readonly agentId: string;
  private readonly options: ClientOptions;
  private readonly transport: Transport;

  constructor(options: ClientOptions) {
    if (!options.agentId) throw new HippoError("invalid_input", "agentId is required", 0);
    this.options = options;
    this.agentId = options.agentId;
    this.transport = new Transport(options);
  }

  /** The same server and key for another agent (the key must reach it: 403 otherwise). */
  forAgent(agentId: string): HippoClient {
    return new HippoClient({ ...this.options, agentId });
  }

  private async send<T>(method: Request["method"], path: string, extra: Omit<Request, "method" | "path"> = {}): Promise<T> {
    const full = `/v1/agents/${segment(this.agentId)}${path}`;
    return (await this.transport.send<T>({ method, path: full, ...extra })).body;
  }

  // -- service ------------------------------------------------------------------------------------

  /** `GET /healthz`: the server's version and whether it needs a key. */
  async health(options: RequestOptions = {}): Promise<S.Health> {
    return (await this.transport.send<S.Health>({ method: "GET", path: "/healthz", signal: options.signal })).body;
  }

  /** `GET /readyz`: whether the server can answer now (its store, schema and model); a server that
   * is not ready answers 503, thrown as a `HippoError` with code `not_ready`. */
  async ready(options: RequestOptions = {}): Promise<S.Readiness> {
    return (await this.transport.send<S.Readiness>({ method: "GET", path: "/readyz", signal: options.signal })).body;
  }

  /** Counts of facts, memories, blocks, experiences and pending vectors for this agent. */
  stats(options: RequestOptions = {}): Promise<S.Stats> {
    return this.send("GET", "/stats", { signal: options.signal });
  }

  // -- memories and facts ---------------------------------------------------------------------------

  /** Store raw content as it is; the same text again strengthens the memory (`action: "strengthened"`). */
  storeMemory(content: string, options: StoreOptions = {}): Promise<S.StoreResult> {
    const { metadata, intensity, observedAt, source, sessionId, signal } = options;
    return this.send("POST", "/memories", {
      body: { content, metadata, intensity, observed_at: isoTime(observedAt), source, session_id: sessionId },
      signal,
    });
  }

  /** Recall as an agent does: ranked by meaning, keywords, strength and recency; the hits count as retrieved. */
  recallMemories(query: string, options: SearchOptions = {}): Promise<S.Recall> {
    const { limit, kind, tags, since, until, source, sessionId, includeArchived, expand, asOf, metadata, signal } = options;
    return this.send("POST", "/memories/recall", {
      body: {
        query, limit, kind, tags, since: isoTime(since), until: isoTime(until), source, session_id: sessionId,
        include_archived: includeArchived, expand, metadata, as_of: isoTime(asOf),
      },
      signal,
    });
  }

  /** The same search as `recallMemories`, as a look: nothing counts as retrieved. */
  searchMemories(query: string, options: SearchOptions = {}): Promise<S.Recall> {
    const { limit, kind, tags, since, until, source, sessionId, includeArchived, expand, asOf, metadata, signal } = options;
    const conditions = metadata === undefined ? undefined : JSON.stringify(metadata);
    return this.send("GET", "/memories", {
      query: {
        q: query, limit, kind, tag: tags, since, until, source, session_id: sessionId,
        include_archived: includeArchived, expand, metadata: conditions, as_of: isoTime(asOf),
      },
      signal,
    });
  }

  /** The agent's audit trail, newest first, a page at a time: each change to its memory, when, by
   * whom, the ids it touched with digests of their content (never the text). */
  audit(options: AuditOptions = {}): Promise<S.AuditPage> {
    const { since, until, operation, id, limit, cursor, signal } = options;
    return this.send("GET", "/audit", {
      query: { since: isoTime(since), until: isoTime(until), operation, id, limit, cursor },
      signal,
    });
  }

  /** Every memory and fact, newest first, a page at a time (pass `next_cursor` back as `cursor`). */
  listMemories(options: ListOptions = {}): Promise<S.MemoryPage> {
    const { limit, cursor, kind, signal } = options;
    return this.send("GET", "/memories", { query: { limit, cursor, kind }, signal });
  }

  /** One memory or fact by id (`not_found` when there is none). */
  getMemory(id: string, options: RequestOptions = {}): Promise<S.Chunk> {
    return this.send("GET", `/memories/${segment(id)}`, { signal: options.signal });
  }

  /** Change a memory's text and/or replace its metadata, in place: same id and strength. */
  updateMemory(id: string, options: UpdateOptions): Promise<S.Chunk> {
    const { content, metadata, signal } = options;
    return this.send("PATCH", `/memories/${segment(id)}`, { body: { content, metadata }, signal });
  }

  /** Delete one memory for good, leaving no trace of its text; `receipt: true` adds the signed receipt. */
  deleteMemory(id: string, options: DeleteOptions = {}): Promise<S.Forgotten> {
    const { receipt, signal } = options;
    return this.send("DELETE", `/memories/${segment(id)}`, { query: { receipt }, signal });
  }

  /** Delete every memory, fact and block of this agent for good (other agents are untouched);
   * `receipt: true` adds the signed receipt. */
  deleteAll(options: DeleteOptions = {}): Promise<S.Erased> {
    const { receipt, signal } = options;
    return this.send("DELETE", "/memories", { query: { confirm: this.agentId, receipt }, signal });
  }

  /** Check a forget's receipt again (as `forgetMemory`, `deleteMemory` or `deleteAll` gave it with
   * `receipt: true`): `verified`, and the places that `failed`, with what each check found. */
  verifyReceipt(receipt: S.Receipt, options: RequestOptions = {}): Promise<S.ReceiptCheck> {
    return this.send("POST", "/receipts/verify", { body: receipt, signal: options.signal });
  }

  /** The memory helped: its feedback rises and its recency clock restarts. */
  reinforceMemory(id: string, options: RequestOptions = {}): Promise<S.Chunk> {
    return this.send("POST", `/memories/${segment(id)}/reinforce`, { signal: options.signal });
  }

  /** The memory is stale, wrong or irrelevant: its feedback falls; nothing is deleted. */
  demoteMemory(id: string, options: RequestOptions = {}): Promise<S.Chunk> {
    return this.send("POST", `/memories/${segment(id)}/demote`, { signal: options.signal });
  }

  /** A memory's links: memories recalled with it (strongest first) and its supersession history. */
  async related(id: string, options: RequestOptions = {}): Promise<S.Link[]> {
    return (await this.send<S.RelatedList>("GET", `/memories/${segment(id)}/related`, { signal: options.signal })).links;
  }

  /** Archived memories (moved out of recall when the database outgrew its cap) that match the words. */
  async searchArchive(query: string, options: LimitOptions = {}): Promise<S.ArchivedHit[]> {
    const { limit, signal } = options;
    return (await this.send<S.ArchiveHits>("GET", "/archive", { query: { q: query, limit }, signal })).hits;
  }

  /** Bring an archived memory back into recall: same id, embedded again. */
  restoreMemory(id: string, options: RequestOptions = {}): Promise<S.Chunk> {
    return this.send("POST", `/archive/${segment(id)}/restore`, { signal: options.signal });
  }

  /** Learn facts from what the user said (a text, or chat messages whose user turns are read). */
  rememberFacts(said: string | ChatMessage[], options: RememberOptions = {}): Promise<S.RememberResult> {
    const { observedAt, metadata, signal } = options;
    const source = typeof said === "string" ? { text: said } : { messages: said };
    return this.send("POST", "/facts", { body: { ...source, observed_at: isoTime(observedAt), metadata }, signal });
  }

  /** A fact's versions, oldest first, and the wordings merged into them as duplicates. */
  factHistory(id: string, options: RequestOptions = {}): Promise<S.FactHistory> {
    return this.send("GET", `/facts/${segment(id)}/history`, { signal: options.signal });
  }

  /** Undo a wrong merge: a wording merged into the fact becomes a fact of its own again (returned). */
  splitFact(id: string, wording: string, options: RequestOptions = {}): Promise<S.Chunk> {
    return this.send("POST", `/facts/${segment(id)}/split`, { body: { wording }, signal: options.signal });
  }

  /** Delete every memory matching a description (`preview: true` deletes nothing; `receipt: true`
   * adds the signed receipt). */
  forgetMemory(description: string, options: ForgetOptions = {}): Promise<S.ForgetResult> {
    const { preview, limit, receipt, signal } = options;
    return this.send("POST", "/forget", { body: { description, preview, limit, receipt }, signal });
  }

  // -- blocks -----------------------------------------------------------------------------------------

  /** Every memory block of this agent. */
  async memoryBlocks(options: RequestOptions = {}): Promise<S.Block[]> {
    return (await this.send<S.BlockList>("GET", "/blocks", { signal: options.signal })).items;
  }

  /** One block, or null when it does not exist. */
  async memoryBlock(key: string, options: RequestOptions = {}): Promise<S.Block | null> {
    try {
      return await this.send<S.Block>("GET", `/blocks/${segment(key)}`, { signal: options.signal });
    } catch (error) {
      if (error instanceof HippoError && error.code === "block_not_found") return null;
      throw error;
    }
  }

  /** A block's text, or null when it does not exist. */
  async recallMemoryBlock(key: string, options: RequestOptions = {}): Promise<string | null> {
    return (await this.memoryBlock(key, options))?.value ?? null;
  }

  /** Set a block's whole text, creating it when missing. */
  setMemoryBlock(key: string, value: string, options: SetBlockOptions = {}): Promise<S.Block> {
    const { charLimit, signal } = options;
    return this.send("PUT", `/blocks/${segment(key)}`, { body: { value, char_limit: charLimit }, signal });
  }

  /** Append a line, creating the block when missing. */
  appendMemoryBlock(key: string, text: string, options: RequestOptions = {}): Promise<S.Block> {
    return this.send("POST", `/blocks/${segment(key)}`, { body: { text }, signal: options.signal });
  }

  /** Replace every occurrence of `old` with `replacement` (`text_not_found` when `old` is not there). */
  replaceMemoryBlock(key: string, old: string, replacement: string, options: RequestOptions = {}): Promise<S.Block> {
    return this.send("PATCH", `/blocks/${segment(key)}`, { body: { old, new: replacement }, signal: options.signal });
  }

  /** Every block as one system-prompt section, in a stable order, within a token budget. */
  async context(options: ContextOptions = {}): Promise<string> {
    const { maxTokens, signal } = options;
    return (await this.send<S.BlockContext>("GET", "/context", { query: { max_tokens: maxTokens }, signal })).context;
  }

  // -- conversation and tools ---------------------------------------------------------------------------

  /** Full-text search over the application's messages table. */
  recallConversation(query: string, options: LimitOptions = {}): Promise<S.ConversationHit[]> {
    const { limit, signal } = options;
    return this.send("GET", "/conversation", { query: { q: query, limit }, signal });
  }

  /** The agent tools' definitions: name, description and JSON-Schema parameters. */
  async tools(options: RequestOptions = {}): Promise<S.ToolDefinition[]> {
    return (await this.send<S.ToolList>("GET", "/tools", { signal: options.signal })).items;
  }

  /** Run one agent tool. A problem the model can act on resolves as `ok: false`; an unknown tool rejects. */
  callTool(name: string, args: Record<string, unknown> = {}, options: RequestOptions = {}): Promise<ToolResult> {
    return this.send("POST", `/tools/${segment(name)}`, { body: args, signal: options.signal });
  }

  /**
   * Any public operation of the Python `Memory` by its name, with its keyword arguments as named in
   * Python (`POST operations/{name}`, on servers that have that route); resolves with its result as JSON.
   */
  async operation<T = unknown>(name: string, args: Record<string, unknown> = {}, options: RequestOptions = {}): Promise<T> {
    const answer = await this.send<{ result: T }>("POST", `/operations/${segment(name)}`, {
      body: { arguments: args },
      signal: options.signal,
    });
    return answer.result;
  }

  // -- experiences ----------------------------------------------------------------------------------------

  /** Record something the agent lived through; it enters short-term memory, searchable at once. */
  recordExperience(type: ExperienceType, content: string, options: ExperienceOptions = {}): Promise<S.Experience> {
    const { context, importance, tags, source, sessionId, observedAt, signal } = options;
    return this.send("POST", "/experiences", {
      body: { type, content, context, importance, tags, source, session_id: sessionId, observed_at: isoTime(observedAt) },
      signal,
    });
  }

  /** Experiences from both tiers; the long-term results count as retrieved. */
  async recall(options: ExperienceQuery = {}): Promise<S.Experience[]> {
    const { query, types, tags, minImportance, since, limit, signal } = options;
    const body = { query, types, tags, min_importance: minImportance, since: isoTime(since), limit };
    return (await this.send<S.ExperienceList>("POST", "/experiences/recall", { body, signal })).items;
  }

  /** The same as `recall`, as a look: nothing counts as retrieved. */
  async searchExperiences(options: ExperienceQuery = {}): Promise<S.Experience[]> {
    const { query, types, tags, minImportance, since, limit, signal } = options;
    const params: Record<string, QueryValue> = { q: query, type: types, tag: tags, min_importance: minImportance, since, limit };
    return (await this.send<S.ExperienceList>("GET", "/experiences", { query: params, signal })).items;
  }

  /** The short-term buffer, newest first. */
  async shortTerm(options: RequestOptions = {}): Promise<S.Experience[]> {
    return (await this.send<S.ExperienceList>("GET", "/experiences/short-term", { signal: options.signal })).items;
  }

  /** Experiences whose context names this user, room or task (all of those given; at least one), latest first. */
  async recallRelated(options: RelatedQuery): Promise<S.Experience[]> {
    const { userId, roomId, taskId, limit, signal } = options;
    const query = { user_id: userId, room_id: roomId, task_id: taskId, limit };
    return (await this.send<S.ExperienceList>("GET", "/experiences/related", { query, signal })).items;
  }

  /** Move the short-term buffer's important experiences to long-term memory now, then prune it. */
  consolidate(options: RequestOptions = {}): Promise<S.Consolidation> {
    return this.send("POST", "/consolidate", { signal: options.signal });
  }

  // -- capture, surfacing, compaction -----------------------------------------------------------------------

  /** Take a session's messages in; they become memories when processed. Message ids already held are skipped. */
  observe(messages: ChatMessage[], options: SessionOptions): Promise<S.Observation> {
    const { sessionId, signal } = options;
    return this.send("POST", `/sessions/${segment(sessionId)}/messages`, { body: { messages }, signal });
  }

  /** Turn what this agent observed into memories now. */
  processPending(options: RequestOptions = {}): Promise<S.Captured> {
    return this.send("POST", "/process", { signal: options.signal });
  }

  /** Memories relevant to the last messages that this session was not shown yet, as a context block. */
  surface(messages: ChatMessage[], options: SurfaceOptions): Promise<S.Surfaced> {
    const { sessionId, maxTokens, signal } = options;
    return this.send("POST", `/sessions/${segment(sessionId)}/surface`, { body: { messages, max_tokens: maxTokens }, signal });
  }

  /** Compact a session into a summary; with `sessionId` what fades is stored as memories of that session. */
  compact(messages: ChatMessage[], options: CompactOptions = {}): Promise<S.Compaction> {
    const { sessionId, previousSummary, config, signal } = options;
    return this.send("POST", "/compact", {
      body: { messages, session_id: sessionId, previous_summary: previousSummary, config },
      signal,
    });
  }
}
