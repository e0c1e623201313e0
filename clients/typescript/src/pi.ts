/**
 * Pi's agent messages (`@mariozechner/pi-agent-core`'s `AgentMessage`, with the coding agent's own
 * kinds) as the chat messages hippo reads, for `compact`, `observe` and `surface`.
 *
 * hippo reads Pi's `user`, `assistant` (text, thinking, `toolCall` blocks) and `toolResult` turns
 * as they are; this turns their millisecond timestamps into ISO 8601, drops what hippo does not
 * read (usage, provider, model), and maps the coding agent's kinds: a `!command` run
 * (`bashExecution`) becomes the result of a `bash` tool (`!!` runs, kept out of the model's context,
 * are left out), an extension's `custom` message a user turn (as Pi shows it to the model), a branch
 * summary a user turn carrying it. Typed structurally: this package does not depend on Pi.
 */

import type { ChatMessage } from "./options.js";

/** The part of a Pi message every kind has; any Pi `AgentMessage` fits. */
export interface PiMessage {
  role: string;
  timestamp?: number;
}

type Fields = PiMessage & Record<string, unknown>;

type Text = { type: "text"; text: string };

const iso = (timestamp: unknown): string | undefined =>
  typeof timestamp === "number" && Number.isFinite(timestamp) ? new Date(timestamp).toISOString() : undefined;

const textPart = (text: string): Text[] => [{ type: "text", text }];

/** What a `!command` run shows the model, as Pi's coding agent writes it. */
function bashText(m: Fields): string {
  let text = `Ran \`${String(m.command)}\`\n`;
  text += m.output ? `\`\`\`\n${String(m.output)}\n\`\`\`` : "(no output)";
  if (m.cancelled) text += "\n\n(command cancelled)";
  else if (typeof m.exitCode === "number" && m.exitCode !== 0) text += `\n\nCommand exited with code ${m.exitCode}`;
  return text;
}

function one(message: PiMessage): ChatMessage | undefined {
  const m = message as Fields;
  const timestamp = iso(m.timestamp);
  const at = timestamp ? { timestamp } : {};
  switch (m.role) {
    case "user":
    case "assistant":
      return { role: m.role, content: m.content, ...at };
    case "toolResult":
      return { role: "toolResult", toolCallId: m.toolCallId, toolName: m.toolName, content: m.content, ...at };
    case "bashExecution":
      return m.excludeFromContext ? undefined : { role: "toolResult", toolName: "bash", content: textPart(bashText(m)), ...at };
    case "custom":
      return { role: "user", content: typeof m.content === "string" ? textPart(m.content) : m.content, ...at };
    case "branchSummary":
      return { role: "user", content: textPart(`Summary of a branch this conversation came back from:\n${String(m.summary)}`), ...at };
    case "compactionSummary":
      return { role: "user", content: textPart(`Summary of the conversation before this point:\n${String(m.summary)}`), ...at };
    default:
      return undefined; // a kind hippo cannot read: left out rather than refused
  }
}

/** Pi's agent messages as chat messages hippo reads (see the module's comment for the mapping). */
export function fromPiMessages(messages: readonly PiMessage[]): ChatMessage[] {
  return messages.map(one).filter((m): m is ChatMessage => m !== undefined);
}
