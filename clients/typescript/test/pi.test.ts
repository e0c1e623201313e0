/**
 * Pi's messages read by hippo, and examples/pi-compaction.ts run as Pi runs an extension (its
 * factory given the extension API, its handlers called with Pi's events) against a real server.
 */

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { HippoClient, fromPiMessages } from "hippo-memory-client";
import type {
  AgentMessage,
  ExtensionAPI,
  ExtensionContext,
  SessionBeforeCompactEvent,
  SessionBeforeCompactResult,
  ToolDefinition,
} from "@mariozechner/pi-coding-agent";
import hippoCompaction from "../examples/pi-compaction.js";
import { type Hippo, startHippo } from "./hippo-server.js";

const AGENT = "pi";
const T0 = Date.UTC(2026, 2, 10, 9, 0, 0);

let server: Hippo;
before(async () => {
  server = await startHippo([AGENT]);
});
after(async () => server?.stop());

/** A coding session as Pi keeps it: asks, tool calls, long tool results, a `!` command. */
function session(turns: number): AgentMessage[] {
  const messages: AgentMessage[] = [];
  for (let i = 0; i < turns; i++) {
    const at = T0 + i * 60_000;
    messages.push({ role: "user", content: `Step ${i}: fix the flaky test in module ${i}, and keep the public API stable.`, timestamp: at });
    messages.push({
      role: "assistant",
      content: [
        { type: "thinking", thinking: "Look at the file first." },
        { type: "text", text: `I will read module_${i}.py and decided to pin the clock in its tests.` },
        { type: "toolCall", id: `call-${i}`, name: "read", arguments: { path: `src/module_${i}.py` } },
      ],
      timestamp: at + 1_000,
      api: "anthropic-messages",
      usage: { input: 1000, output: 100 },
    });
    messages.push({
      role: "toolResult", toolCallId: `call-${i}`, toolName: "read", isError: false, timestamp: at + 2_000,
      content: [{ type: "text", text: `def module_${i}():\n${"    return compute()\n".repeat(40)}` }],
    });
  }
  messages.push({ role: "bashExecution", command: "pytest -q", output: "3 passed", exitCode: 0, cancelled: false, truncated: false, timestamp: T0 + turns * 60_000 });
  return messages;
}

interface Loaded {
  handlers: Map<string, (event: unknown, ctx: ExtensionContext) => unknown>;
  tools: ToolDefinition[];
  notes: [string, string | undefined][];
  ctx: ExtensionContext;
}

/** The extension loaded as Pi loads one, with `env` as its environment. */
async function load(env: Record<string, string>): Promise<Loaded> {
  const saved = { ...process.env };
  Object.assign(process.env, env);
  const loaded: Loaded = {
    handlers: new Map(), tools: [], notes: [],
    ctx: {
      ui: { notify: (message, type) => void loaded.notes.push([message, type]) },
      hasUI: false, cwd: process.cwd(), sessionManager: { getSessionId: () => "pi-session-1" },
    },
  };
  const pi = {
    on: (event: string, handler: (event: unknown, ctx: ExtensionContext) => unknown) => void loaded.handlers.set(event, handler),
    registerTool: (tool: ToolDefinition) => void loaded.tools.push(tool),
  } as ExtensionAPI;
  try {
    await hippoCompaction(pi);
  } finally {
    process.env = saved;
  }
  await loaded.handlers.get("session_start")?.({ type: "session_start", reason: "startup" }, loaded.ctx);
  return loaded;
}

function compactEvent(messages: AgentMessage[]): SessionBeforeCompactEvent {
  return {
    type: "session_before_compact", branchEntries: [], signal: new AbortController().signal,
    preparation: {
      firstKeptEntryId: "entry-42", messagesToSummarize: messages.slice(0, -4), turnPrefixMessages: messages.slice(-4),
      isSplitTurn: true, tokensBefore: 48_000, previousSummary: "Earlier: set up the repository.", fileOps: {},
      settings: { enabled: true, reserveTokens: 16_384, keepRecentTokens: 20_000 },
    },
  };
}

test("Pi's messages as hippo reads them", () => {
  const messages: AgentMessage[] = [
    ...session(1),
    { role: "bashExecution", command: "cat .env", output: "SECRET=1", exitCode: 0, cancelled: false, truncated: false, timestamp: T0, excludeFromContext: true },
    { role: "custom", customType: "note", content: "Remember the deadline", display: true, timestamp: T0 },
    { role: "branchSummary", summary: "Tried a rewrite", fromId: "e1", timestamp: T0 },
    { role: "somethingNew", timestamp: T0 } as never,
  ];
  const read = fromPiMessages(messages);
  assert.deepEqual(read.map((m) => m.role), ["user", "assistant", "toolResult", "toolResult", "user", "user"]);
  assert.equal(read[0]!.timestamp, "2026-03-10T09:00:00.000Z");
  assert.ok(!("usage" in read[1]!) && !("api" in read[1]!)); // what hippo does not read stays home
  assert.equal(read[3]!.toolName, "bash");
  assert.deepEqual(read[4]!.content, [{ type: "text", text: "Remember the deadline" }]);
  assert.ok(!JSON.stringify(read).includes("SECRET")); // a !! command stays out, as it does of Pi's context
});

test("the extension compacts a Pi session with hippo and stores what fades", async () => {
  const loaded = await load({ HIPPO_URL: server.url, HIPPO_KEY: server.key, HIPPO_AGENT_ID: AGENT });
  const compact = loaded.handlers.get("session_before_compact")!;
  const result = (await compact(compactEvent(session(30)), loaded.ctx)) as SessionBeforeCompactResult;
  const compaction = result.compaction!;
  assert.equal(compaction.firstKeptEntryId, "entry-42");
  assert.equal(compaction.tokensBefore, 48_000);
  const stats = (compaction.details as { hippo: { entries: number; sparse: number; compressed: number } }).hippo;
  assert.equal(stats.entries, 91); // 30 turns of three messages and the ! command
  assert.ok(stats.sparse + stats.compressed > 0, JSON.stringify(stats));
  assert.match(compaction.summary, /\[id:[0-9A-Z]{26}\]/); // what faded is stored, and the summary points at it
  assert.match(loaded.notes.at(-1)![0], /^hippo compacted 91 messages/);

  const hippo = new HippoClient({ url: server.url, key: server.key, agentId: AGENT });
  const found = await hippo.searchMemories("module 3 flaky test", { sessionId: "pi-session-1" });
  assert.ok(found.hits.length > 0 && found.hits.every((h) => h.chunk.session_id === "pi-session-1"));
});

test("the extension gives Pi hippo's tools, which run", async () => {
  const loaded = await load({ HIPPO_URL: server.url, HIPPO_KEY: server.key, HIPPO_AGENT_ID: AGENT });
  const hippo = new HippoClient({ url: server.url, key: server.key, agentId: AGENT });
  assert.deepEqual(loaded.tools.map((t) => t.name), (await hippo.tools()).map((t) => t.name));
  const recall = loaded.tools.find((t) => t.name === "recall_memories")!;
  const answer = await recall.execute("call-1", { query: "flaky test module" }, undefined, undefined, loaded.ctx);
  assert.ok((answer.details as { memories: unknown[] }).memories.length > 0);
});

test("without hippo, Pi's own compaction runs", async () => {
  const loaded = await load({ HIPPO_URL: "http://127.0.0.1:9", HIPPO_AGENT_ID: AGENT });
  assert.deepEqual(loaded.tools, []);
  assert.match(loaded.notes[0]![0], /^hippo: no memory tools/);
  const result = await loaded.handlers.get("session_before_compact")!(compactEvent(session(2)), loaded.ctx);
  assert.equal(result, undefined);
  assert.deepEqual(loaded.notes[1], [loaded.notes[1]![0], "warning"]);
  assert.match(loaded.notes[1]![0], /Pi's own compaction runs/);
});
