// The slice of @mariozechner/pi-coding-agent's extension API (0.73) that examples/pi-compaction.ts
// uses, copied from its declarations, so that the tests compile the example without installing Pi
// (some 190 packages). The names and shapes are Pi's: a change there is a change here.

interface TextContent { type: "text"; text: string }
interface ImageContent { type: "image"; data: string; mimeType: string }
interface ToolCall { type: "toolCall"; id: string; name: string; arguments: Record<string, any> }

export type AgentMessage =
  | { role: "user"; content: string | (TextContent | ImageContent)[]; timestamp: number }
  | { role: "assistant"; content: (TextContent | { type: "thinking"; thinking: string } | ToolCall)[]; timestamp: number; [field: string]: unknown }
  | { role: "toolResult"; toolCallId: string; toolName: string; content: (TextContent | ImageContent)[]; isError: boolean; timestamp: number }
  | { role: "bashExecution"; command: string; output: string; exitCode: number | undefined; cancelled: boolean; truncated: boolean; timestamp: number; excludeFromContext?: boolean }
  | { role: "custom"; customType: string; content: string | (TextContent | ImageContent)[]; display: boolean; timestamp: number }
  | { role: "branchSummary"; summary: string; fromId: string; timestamp: number }
  | { role: "compactionSummary"; summary: string; tokensBefore: number; timestamp: number };

export interface CompactionResult<T = unknown> {
  summary: string;
  firstKeptEntryId: string;
  tokensBefore: number;
  details?: T;
}

export interface CompactionPreparation {
  firstKeptEntryId: string;
  messagesToSummarize: AgentMessage[];
  turnPrefixMessages: AgentMessage[];
  isSplitTurn: boolean;
  tokensBefore: number;
  previousSummary?: string;
  fileOps: unknown;
  settings: { enabled: boolean; reserveTokens: number; keepRecentTokens: number };
}

export interface SessionStartEvent {
  type: "session_start";
  reason: "startup" | "reload" | "new" | "resume" | "fork";
  previousSessionFile?: string;
}

export interface SessionBeforeCompactEvent {
  type: "session_before_compact";
  preparation: CompactionPreparation;
  branchEntries: unknown[];
  customInstructions?: string;
  signal: AbortSignal;
}

export interface SessionBeforeCompactResult {
  cancel?: boolean;
  compaction?: CompactionResult;
}

export interface ExtensionContext {
  ui: { notify(message: string, type?: "info" | "warning" | "error"): void };
  hasUI: boolean;
  cwd: string;
  sessionManager: { getSessionId(): string };
}

export type ExtensionHandler<E, R = undefined> = (event: E, ctx: ExtensionContext) => Promise<R | void> | R | void;

export interface AgentToolResult<T> {
  content: (TextContent | ImageContent)[];
  details: T;
}

export interface ToolDefinition {
  name: string;
  label: string;
  description: string;
  parameters: unknown;
  execute(toolCallId: string, params: any, signal: AbortSignal | undefined, onUpdate: unknown, ctx: ExtensionContext): Promise<AgentToolResult<unknown>>;
}

export interface ExtensionAPI {
  on(event: "session_start", handler: ExtensionHandler<SessionStartEvent>): void;
  on(event: "session_before_compact", handler: ExtensionHandler<SessionBeforeCompactEvent, SessionBeforeCompactResult>): void;
  registerTool(tool: ToolDefinition): void;
}

export type ExtensionFactory = (pi: ExtensionAPI) => void | Promise<void>;
