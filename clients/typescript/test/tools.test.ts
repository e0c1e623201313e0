/**
 * createHippoTools against a real `hippo serve`: the definitions are the Python tools' own, and the
 * tools store, recall, forget and edit blocks end to end, as Pi's agent calls them and as OpenAI
 * and Anthropic tool calls.
 */

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { Forbidden, HippoError, type HippoTools, Unauthorized, createHippoTools } from "hippo-memory-client";
import { type Hippo, startHippo } from "./hippo-server.js";

const AGENT = "marrow-main";
const SEED = "import sys, hippo; hippo.create_messages_table(sys.argv[1])";
// The Python tools of a database with a messages table, in each provider's format.
const PYTHON_FORMATS = `
import json, sys
import hippo
hippo.create_messages_table(sys.argv[1])
tools = hippo.open(sys.argv[1], agent_id="someone", embedder="none").tools()
print(json.dumps({"openai": tools.openai(), "responses": tools.openai_responses(), "anthropic": tools.anthropic()}))
`;

let server: Hippo;
let tools: HippoTools;

before(async () => {
  server = await startHippo([AGENT], SEED);
  tools = await createHippoTools({ url: server.url, key: server.key, agentId: AGENT });
});
after(async () => server?.stop());

function tool(name: string) {
  const found = tools.find((t) => t.name === name);
  assert.ok(found, `no tool ${name}`);
  return found;
}

async function fails(promise: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(promise, (error: unknown) => error instanceof HippoError && error.code === code && error.message.length > 0);
}

test("the definitions are the Python tools', in every format", async () => {
  const python = JSON.parse(await server.python(PYTHON_FORMATS, `${server.dir}/formats.db`));
  assert.deepEqual(tools.openai(), python.openai);
  assert.deepEqual(tools.openaiResponses(), python.responses);
  assert.deepEqual(tools.anthropic(), python.anthropic);
  assert.deepEqual(tools.names, python.anthropic.map((t: { name: string }) => t.name));
  for (const t of ["remember_facts", "store_memory", "replace_memory_block", "append_memory_block", "forget_memory",
    "recall_memories", "recall_memory_block", "recall_conversation"]) {
    assert.ok(tools.names.includes(t), t);
  }
});

test("Pi's AgentTool shape: name, label, description, parameters, execute", () => {
  for (const t of tools) {
    assert.equal(typeof t.execute, "function");
    assert.equal(t.parameters.type, "object");
    assert.ok(t.description.length > 40 && t.label.length > 0);
  }
  assert.equal(tool("recall_memories").label, "Recall memories");
});

test("store, recall, forget, end to end", async () => {
  const stored = await tool("store_memory").execute("call-1", { content: "The team decided to use SQLite instead of PostgreSQL", tags: ["decision"] });
  assert.equal(stored.details.action, "inserted");
  assert.deepEqual(JSON.parse(stored.content[0]!.text), stored.details); // the model reads the result as JSON
  const learned = await tool("remember_facts").execute("call-2", { text: "I NEVER want to use Redux again." });
  assert.match(String(learned.details.summary), /Learned 1 fact/);

  const recalled = await tool("recall_memories").execute("call-3", { query: "which database did we pick?", limit: 3 });
  const memories = recalled.details.memories as { id: string; content: string }[];
  assert.equal(memories[0]!.content, "The team decided to use SQLite instead of PostgreSQL");

  const forgotten = await tool("forget_memory").execute("call-4", { description: "the decision to use SQLite" });
  assert.equal(forgotten.details.count, 1);
  const after = await tool("recall_memories").execute("call-5", { query: "which database did we pick?" });
  assert.ok(!(after.details.memories as { id: string }[]).some((m) => m.id === memories[0]!.id));
  // a problem the model can act on rejects, as Pi's agent expects of a failed tool
  await fails(tool("forget_memory").execute("call-6", { description: "the decision to use SQLite" }), "nothing_matched");
});

test("blocks: append, replace, read, and a missing text", async () => {
  const created = await tool("append_memory_block").execute("b1", { key: "human", text: "Name: Krz" });
  assert.deepEqual([created.details.value, created.details.created], ["Name: Krz", true]);
  const replaced = await tool("replace_memory_block").execute("b2", { key: "human", old_text: "Krz", new_text: "Kris" });
  assert.deepEqual([replaced.details.value, replaced.details.replaced], ["Name: Kris", 1]);
  const read = await tool("recall_memory_block").execute("b3", { key: "human" });
  assert.equal(read.details.value, "Name: Kris");
  assert.equal((await tool("recall_memory_block").execute("b4", { key: "persona" })).details.value, null);
  await fails(tool("replace_memory_block").execute("b5", { key: "human", old_text: "Krz", new_text: "x" }), "text_not_found");
  await fails(tool("replace_memory_block").execute("b6", { key: "nickname", old_text: "a", new_text: "b" }), "block_not_found");
});

test("feedback, correction, experiences and conversation tools", async () => {
  const { details } = await tool("store_memory").execute("f1", { content: "Deploys happen on Fridays" });
  const id = String(details.id);
  assert.ok(Number((await tool("reinforce_memory").execute("f2", { id })).details.feedback) > 0);
  await tool("demote_memory").execute("f3", { id });
  const fixed = await tool("update_memory").execute("f4", { id, content: "Deploys happen on Thursdays", tags: ["ops"] });
  assert.deepEqual([fixed.details.content, fixed.details.tags], ["Deploys happen on Thursdays", ["ops"]]);
  const lived = await tool("record_experience").execute("f5", { type: "decision", content: "Chose blue-green deploys to cut downtime" });
  assert.equal(lived.details.type, "decision");
  const said = await tool("recall_conversation").execute("f6", { query: "anything" });
  assert.deepEqual(said.details.messages, []);
  await fails(tool("update_memory").execute("f7", { id }), "invalid_input"); // nothing to update
  await fails(tool("store_memory").execute("f8", { content: "x", colour: "red" }), "invalid_input"); // unknown argument
});

test("OpenAI and Anthropic tool calls are answered in their own format", async () => {
  const chat = await tools.dispatch({ id: "call_1", type: "function", function: { name: "store_memory", arguments: '{"content": "Dispatched over OpenAI chat"}' } });
  assert.ok("role" in chat && chat.role === "tool" && chat.tool_call_id === "call_1");
  assert.equal(JSON.parse(chat.content).action, "inserted");

  const responses = await tools.dispatch({ type: "function_call", call_id: "fc_1", name: "recall_memories", arguments: '{"query": "dispatched"}' });
  assert.ok("output" in responses && responses.call_id === "fc_1");
  assert.equal(JSON.parse(responses.output).memories[0].content, "Dispatched over OpenAI chat");

  const anthropic = await tools.dispatch({ type: "tool_use", id: "toolu_1", name: "replace_memory_block", input: { key: "nope", old_text: "a", new_text: "b" } });
  assert.ok("tool_use_id" in anthropic && anthropic.tool_use_id === "toolu_1" && anthropic.is_error);
  assert.equal(JSON.parse(anthropic.content).error.code, "block_not_found");

  assert.deepEqual(await tools.call("recall_everything"), {
    ok: false, error: { code: "unknown_tool", message: `no tool 'recall_everything'; tools: ${tools.names.join(", ")}` },
  });
  const broken = await tools.call("store_memory", "{not json");
  assert.ok(!broken.ok && broken.error.code === "invalid_input");
  await assert.rejects(tools.dispatch({ nonsense: true } as never), (error: unknown) => error instanceof HippoError && error.code === "invalid_input");
});

test("a tool list without some tools, and an aborted call", async () => {
  const careful = await createHippoTools({ url: server.url, key: server.key, agentId: AGENT, exclude: ["forget_memory"] });
  assert.ok(!careful.names.includes("forget_memory") && careful.length === tools.length - 1);
  await assert.rejects(tool("store_memory").execute("x", { content: "never stored" }, AbortSignal.abort()), (error: unknown) => !(error instanceof HippoError));
  await fails(createHippoTools({ url: server.url, key: server.key, agentId: "someone-else" }), "forbidden");
  await assert.rejects(createHippoTools({ url: server.url, key: server.key, agentId: "someone-else" }), Forbidden);
  await assert.rejects(createHippoTools({ url: server.url, key: "hippo_nope", agentId: AGENT }), Unauthorized);
});
