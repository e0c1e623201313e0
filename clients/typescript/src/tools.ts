/**
 * hippo's agent tools over HTTP: the definitions the server lists (`GET tools`: names,
 * descriptions and JSON-Schema parameters exactly as the Python tools), run by the server
 * (`POST tools/{name}`), in the `AgentTool` shape of Pi's agent (`@mariozechner/pi-agent-core`)
 * and as OpenAI and Anthropic tool definitions, with a dispatcher for those providers' tool calls.
 */

import { HippoClient, type ClientOptions } from "./client.js";
import { HippoError, errorFor } from "./errors.js";
import type { RequestOptions } from "./http.js";
import type { ToolResult } from "./options.js";
import type { ToolDefinition } from "./schema.js";

/** A JSON Schema object, as the tools' `parameters`. */
export type JsonSchema = Record<string, unknown>;

/** What a Pi tool returns: text for the model, and the structured result for the UI and logs. */
export interface AgentToolResult<T> {
  content: { type: "text"; text: string }[];
  details: T;
}

/** One tool in the shape of Pi's `AgentTool`: pass the list as an agent's tools (or `extraTools`). */
export interface HippoAgentTool {
  name: string;
  /** A human-readable label for a UI, from the name: "Recall memories". */
  label: string;
  description: string;
  parameters: JsonSchema;
  /**
   * Runs the tool on the server. Resolves with the result as compact JSON text (what the Python tools
   * give a model) and as `details`; a problem the model can act on (`ok: false`) rejects with a
   * {@link HippoError} carrying its code, as Pi's agent expects of a failed tool (it shows the model
   * the message and marks the result as an error).
   */
  execute(toolCallId: string, params: any, signal?: AbortSignal): Promise<AgentToolResult<ToolResult & { ok: true }>>;
}

/** OpenAI Chat Completions' `tools=` entry. */
export interface OpenAIChatTool {
  type: "function";
  function: { name: string; description: string; parameters: JsonSchema };
}

/** OpenAI Responses' `tools=` entry (not strict: optional arguments stay optional). */
export interface OpenAIResponsesTool {
  type: "function";
  name: string;
  description: string;
  parameters: JsonSchema;
  strict: false;
}

/** Anthropic Messages' `tools=` entry. */
export interface AnthropicTool {
  name: string;
  description: string;
  input_schema: JsonSchema;
}

/** A tool call as a provider returns it, in any of the three shapes. */
export type ToolCall =
  | { id?: string; type?: "function"; function: { name: string; arguments: string } }
  | { type: "function_call"; call_id: string; name: string; arguments: string }
  | { type: "tool_use"; id: string; name: string; input: unknown };

/** The answer to a tool call, in the call's own shape. */
export type ToolCallResult =
  | { role: "tool"; tool_call_id: string | undefined; content: string }
  | { type: "function_call_output"; call_id: string; output: string }
  | { type: "tool_result"; tool_use_id: string; content: string; is_error: boolean };

/** The tools of one agent: an array of Pi `AgentTool`s, with the other formats and a dispatcher. */
export interface HippoTools extends ReadonlyArray<HippoAgentTool> {
  /** The tool names, in the server's order. */
  readonly names: string[];
  /** Run one tool by name: `{ok: true, ...}` or `{ok: false, error}`; an unknown name is `unknown_tool`. */
  call(name: string, args?: Record<string, unknown> | string, options?: RequestOptions): Promise<ToolResult>;
  /** Tool definitions for OpenAI Chat Completions. */
  openai(): OpenAIChatTool[];
  /** Tool definitions for the OpenAI Responses API. */
  openaiResponses(): OpenAIResponsesTool[];
  /** Tool definitions for the Anthropic Messages API. */
  anthropic(): AnthropicTool[];
  /** Run a provider's tool call; resolves with the message that answers it, in the same format. */
  dispatch(toolCall: ToolCall, options?: RequestOptions): Promise<ToolCallResult>;
}

export interface HippoToolsOptions extends ClientOptions {
  /** Leave out these tools (say, `forget_memory` for an agent that must not delete). */
  exclude?: string[];
}

/** "recall_memories" -> "Recall memories". */
export const labelOf = (name: string): string => {
  const words = name.replace(/_/g, " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
};

const text = (result: unknown): string => JSON.stringify(result);

/** Reads the agent's tool definitions from the server and returns its tools in every format. */
export async function createHippoTools(options: HippoToolsOptions, request: RequestOptions = {}): Promise<HippoTools> {
  const client = new HippoClient(options);
  const excluded = new Set(options.exclude ?? []);
  const definitions = (await client.tools(request)).filter((t) => !excluded.has(t.name));
  return toolsOf(client, definitions);
}

/** The tools of `definitions` (as `GET tools` lists them), run through `client`. */
export function toolsOf(client: HippoClient, definitions: ToolDefinition[]): HippoTools {
  const known = new Set(definitions.map((t) => t.name));

  async function call(name: string, args: Record<string, unknown> | string = {}, options: RequestOptions = {}): Promise<ToolResult> {
    if (!known.has(name)) {
      const message = `no tool '${name}'; tools: ${[...known].join(", ")}`; // as the Python tools say it
      return { ok: false, error: { code: "unknown_tool", message } };
    }
    let parsed: unknown = args;
    if (typeof args === "string") {
      try {
        parsed = args.trim() ? JSON.parse(args) : {};
      } catch {
        return { ok: false, error: { code: "invalid_input", message: "arguments: not valid JSON" } };
      }
    }
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
      return { ok: false, error: { code: "invalid_input", message: "arguments must be a JSON object" } };
    }
    return client.callTool(name, parsed as Record<string, unknown>, options);
  }

  const agentTools: HippoAgentTool[] = definitions.map((definition) => ({
    name: definition.name,
    label: labelOf(definition.name),
    description: definition.description,
    parameters: definition.parameters,
    async execute(_toolCallId: string, params: Record<string, unknown>, signal?: AbortSignal) {
      const result = await call(definition.name, params ?? {}, { signal });
      if (!result.ok) throw errorFor(result.error.code, result.error.message, 200);
      return { content: [{ type: "text" as const, text: text(result) }], details: result };
    },
  }));

  const extras = {
    names: definitions.map((t) => t.name),
    call,
    openai: (): OpenAIChatTool[] =>
      definitions.map((t) => ({ type: "function", function: { name: t.name, description: t.description, parameters: t.parameters } })),
    openaiResponses: (): OpenAIResponsesTool[] =>
      definitions.map((t) => ({ type: "function", name: t.name, description: t.description, parameters: t.parameters, strict: false })),
    anthropic: (): AnthropicTool[] =>
      definitions.map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters })),
    dispatch: (toolCall: ToolCall, options: RequestOptions = {}) => dispatch(call, toolCall, options),
  };
  return Object.assign(agentTools, extras);
}

type Call = (name: string, args: Record<string, unknown> | string, options: RequestOptions) => Promise<ToolResult>;

async function dispatch(call: Call, toolCall: ToolCall, options: RequestOptions): Promise<ToolCallResult> {
  if ("type" in toolCall && toolCall.type === "tool_use") {
    const result = await call(toolCall.name, (toolCall.input ?? {}) as Record<string, unknown>, options);
    return { type: "tool_result", tool_use_id: toolCall.id, content: text(result), is_error: !result.ok };
  }
  if ("type" in toolCall && toolCall.type === "function_call") {
    const result = await call(toolCall.name, toolCall.arguments, options);
    return { type: "function_call_output", call_id: toolCall.call_id, output: text(result) };
  }
  if ("function" in toolCall && toolCall.function) {
    const result = await call(toolCall.function.name, toolCall.function.arguments, options);
    return { role: "tool", tool_call_id: toolCall.id, content: text(result) };
  }
  throw new HippoError(
    "invalid_input",
    "not a tool call: expected OpenAI {function: {...}}, OpenAI Responses {type: 'function_call'} or Anthropic {type: 'tool_use'}",
    0,
  );
}
