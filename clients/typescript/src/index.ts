/**
 * hippo-memory-client: a client for hippo's HTTP API (`hippo serve`) and hippo's agent tools.
 *
 * ```ts
 * import { HippoClient, createHippoTools } from "hippo-memory-client";
 *
 * const hippo = new HippoClient({ url: "http://127.0.0.1:8000", key: process.env.HIPPO_KEY, agentId: "marrow-main" });
 * await hippo.storeMemory("We chose SQLite");
 * const tools = await createHippoTools({ url: "http://127.0.0.1:8000", key: process.env.HIPPO_KEY, agentId: "marrow-main" });
 * ```
 */

export { HippoClient, type ClientOptions } from "./client.js";
export { Forbidden, HippoError, type HippoErrorCode, Unauthorized } from "./errors.js";
export type { ConnectionOptions, RequestOptions } from "./http.js";
export type * from "./options.js";
export { fromPiMessages, type PiMessage } from "./pi.js";
export type * from "./schema.js";
export {
  createHippoTools,
  labelOf,
  toolsOf,
  type AgentToolResult,
  type AnthropicTool,
  type HippoAgentTool,
  type HippoTools,
  type HippoToolsOptions,
  type JsonSchema,
  type OpenAIChatTool,
  type OpenAIResponsesTool,
  type ToolCall,
  type ToolCallResult,
} from "./tools.js";
