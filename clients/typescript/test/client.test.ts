/**
 * HippoClient against a real `hippo serve`: every route of the server's OpenAPI document is called
 * through the client (the last test checks it), with results and errors as the server gives them.
 */

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import { Forbidden, HippoClient, HippoError, Unauthorized } from "hippo-memory-client";
import { type Hippo, PACKAGE, startHippo } from "./hippo-server.js";

const SEED = `
import sqlite3, sys
import hippo
db = sys.argv[1]
capped = hippo.open(db, agent_id="alice", max_db_bytes=1)  # a cap every memory is over: one archived
capped.store_memory("An old note about the heron by the pond")
assert capped.maintain().archived == 1
capped.close()
hippo.create_messages_table(db)
with sqlite3.connect(db) as connection:
    connection.execute("INSERT INTO messages (agent_id, role, content) VALUES ('alice', 'user', 'the OAuth redirect is wrong')")
`;

let server: Hippo;
let alice: HippoClient;
const called = new Set<string>(); // "METHOD /path" of every request the clients made

const recording: typeof fetch = async (input, init) => {
  called.add(`${init?.method ?? "GET"} ${new URL(String(input)).pathname}`);
  return fetch(input, init);
};

before(async () => {
  server = await startHippo(["alice", "bob"], SEED);
  alice = new HippoClient({ url: server.url, key: server.key, agentId: "alice", fetch: recording });
});
after(async () => server?.stop());

async function rejects(promise: Promise<unknown>, code: string, status: number): Promise<HippoError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof HippoError, `not a HippoError: ${String(error)}`);
    assert.equal(error.code, code, error.message);
    assert.equal(error.status, status);
    assert.ok(error.message.length > 0);
    return error;
  }
  assert.fail(`resolved; expected ${code}`);
}

test("the audit trail", async () => {
  const stored = await alice.storeMemory("Audited: the heron came back to the pond");
  const page = await alice.audit({ operation: "store_memory", id: stored.id });
  assert.equal(page.items.length, 1);
  const record = page.items[0]!;
  assert.equal(record.operation, "store_memory");
  assert.equal(record.surface, "http");
  assert.ok(!JSON.stringify(record).includes("heron")); // digests, never the text
});

test("health, readiness and stats", async () => {
  const health = await alice.health();
  assert.equal(health.status, "ok");
  assert.equal(health.auth, true);
  const ready = await alice.ready();
  assert.equal(ready.status, "ready");
  assert.deepEqual(ready.checks, { store: true, migrations: true, model: true });
  const stats = await alice.stats();
  assert.equal(stats.agent_id, "alice");
  assert.equal(stats.archived, 1);
  assert.equal(stats.database, null); // the server's paths are its own
});

test("store, get, list, update, feedback, delete", async () => {
  const stored = await alice.storeMemory("We chose SQLite for the billing service", {
    metadata: { tags: ["db"], status: "open" },
    source: "migration",
    sessionId: "s-1",
    observedAt: new Date("2026-03-10T09:00:00Z"),
  });
  assert.equal(stored.action, "inserted");
  assert.equal(stored.chunk.session_id, "s-1");
  assert.equal(stored.chunk.observed_at?.slice(0, 19), "2026-03-10T09:00:00");
  assert.equal((await alice.storeMemory("We chose SQLite for the billing service")).action, "strengthened");
  await alice.storeMemory("The billing service deploys on Fridays", { metadata: { tags: ["ops"] }, intensity: 0.9 });

  assert.equal((await alice.getMemory(stored.id)).content, "We chose SQLite for the billing service");
  const first = await alice.listMemories({ limit: 1 });
  assert.equal(first.items.length, 1);
  assert.ok(first.next_cursor);
  const second = await alice.listMemories({ limit: 1, cursor: first.next_cursor! });
  assert.notEqual(second.items[0]!.id, first.items[0]!.id);

  const updated = await alice.updateMemory(stored.id, { content: "We chose SQLite for billing", metadata: { tags: ["db"] } });
  assert.equal(updated.id, stored.id);
  assert.deepEqual(updated.metadata, { tags: ["db"] });
  const reinforced = await alice.reinforceMemory(stored.id);
  assert.ok(reinforced.feedback > 0 && reinforced.reinforced_at !== null);
  assert.ok((await alice.demoteMemory(stored.id)).feedback < reinforced.feedback);

  const gone = await alice.deleteMemory(stored.id);
  assert.equal(gone.content, "We chose SQLite for billing");
  await rejects(alice.getMemory(stored.id), "not_found", 404);
});

test("recall counts, search looks, filters apply", async () => {
  await alice.storeMemory("The staging database lives on port 5433", { metadata: { tags: ["db"], priority: 3 }, sessionId: "s-2" });
  await alice.storeMemory("Lunch is at noon on Tuesdays", { metadata: { tags: ["team"], priority: 1 } });
  const recalled = await alice.recallMemories("which port does staging use?", { limit: 3 });
  assert.equal(recalled.mode, "hybrid");
  assert.equal(recalled.hits[0]!.chunk.content, "The staging database lives on port 5433");
  assert.ok(recalled.hits[0]!.score > 0 && recalled.hits[0]!.relevance > 0);
  const looked = await alice.searchMemories("which port does staging use?", { limit: 3 });
  assert.equal(looked.hits[0]!.chunk.id, recalled.hits[0]!.chunk.id);
  const filtered = await alice.searchMemories("database port lunch", {
    tags: ["db"], metadata: { priority: { $gte: 2 } }, sessionId: "s-2", kind: "memory", since: new Date(0),
  });
  assert.deepEqual(filtered.hits.map((h) => h.chunk.content), ["The staging database lives on port 5433"]);
  const tagged = await alice.recallMemories("lunch", { tags: ["team"], source: ["agent"], includeArchived: true, expand: true });
  assert.deepEqual(tagged.hits.map((h) => h.chunk.content), ["Lunch is at noon on Tuesdays"]);
  const hit = recalled.hits[0]!;
  await alice.recallMemories("staging database port lunch", { limit: 5 });
  assert.ok(Array.isArray(await alice.related(hit.chunk.id)));
  await rejects(alice.searchMemories("x", { metadata: { priority: { $near: 2 } } }), "invalid_input", 400);
  await rejects(alice.recallMemories("x", { limit: 0 }), "invalid_request", 422);
});

test("facts: remember, supersede, history, split", async () => {
  const learned = await alice.rememberFacts("I live in Berlin.");
  assert.equal(learned.extractor, "offline");
  assert.equal(learned.facts[0]!.action, "new");
  const moved = await alice.rememberFacts([{ role: "user", content: "I moved to Lisbon." }], { observedAt: "2026-03-10T09:00:00Z" });
  assert.equal(moved.facts[0]!.action, "supersedes");
  const history = await alice.factHistory(moved.facts[0]!.id);
  assert.deepEqual(history.versions.map((v) => v.content), ["User lives in Berlin", "User moved to Lisbon"]);
  assert.equal(history.current?.content, "User moved to Lisbon");

  const tea = await alice.rememberFacts("I love green tea.");
  const again = await alice.rememberFacts("I really love green tea.");
  assert.equal(again.facts[0]!.action, "duplicate");
  const split = await alice.splitFact(tea.facts[0]!.id, "User really loves green tea");
  assert.equal(split.content, "User really loves green tea");
  assert.equal(split.kind, "fact");
  await rejects(alice.splitFact(tea.facts[0]!.id, "never said"), "invalid_input", 400);
});

test("forget previews, then deletes", async () => {
  await alice.storeMemory("The office wifi password is hunter2");
  const preview = await alice.forgetMemory("the office wifi password", { preview: true, limit: 1 });
  assert.equal(preview.preview, true);
  assert.equal(preview.deleted[0]!.content, "The office wifi password is hunter2");
  const forgotten = await alice.forgetMemory("the office wifi password", { limit: 1 });
  assert.equal(forgotten.deleted.length, 1);
  const left = await alice.searchMemories("wifi password hunter2");
  assert.ok(!left.hits.some((h) => h.chunk.content.includes("hunter2")));
});

test("the archive: search and restore", async () => {
  const [archived] = await alice.searchArchive("heron", { limit: 5 });
  assert.equal(archived!.chunk.content, "An old note about the heron by the pond");
  const restored = await alice.restoreMemory(archived!.chunk.id);
  assert.equal(restored.id, archived!.chunk.id);
  assert.deepEqual(await alice.searchArchive("heron"), []);
});

test("blocks", async () => {
  assert.equal(await alice.memoryBlock("human"), null);
  assert.equal(await alice.recallMemoryBlock("human"), null);
  const set = await alice.setMemoryBlock("persona", "A careful assistant", { charLimit: 200 });
  assert.equal(set.char_limit, 200);
  assert.equal((await alice.setMemoryBlock("persona", "A careful assistant", { charLimit: null })).char_limit, null);
  assert.equal((await alice.appendMemoryBlock("human", "Name: Krz")).value, "Name: Krz");
  assert.equal((await alice.replaceMemoryBlock("human", "Krz", "Kris")).value, "Name: Kris");
  assert.equal(await alice.recallMemoryBlock("human"), "Name: Kris");
  assert.deepEqual((await alice.memoryBlocks()).map((b) => b.key), ["human", "persona"]);
  const context = await alice.context({ maxTokens: 500 });
  assert.ok(context.includes("Name: Kris") && context.includes("A careful assistant"));
  await rejects(alice.replaceMemoryBlock("human", "Krz", "Kris"), "text_not_found", 409);
  await rejects(alice.setMemoryBlock("persona", "x".repeat(20), { charLimit: 10 }), "limit_exceeded", 409);
});

test("conversation search and tools", async () => {
  const [hit] = await alice.recallConversation("OAuth redirect", { limit: 5 });
  assert.equal(hit!.content, "the OAuth redirect is wrong");
  const tools = await alice.tools();
  assert.ok(tools.some((t) => t.name === "recall_conversation")); // the messages table exists
  const stored = await alice.callTool("store_memory", { content: "Tools over HTTP", tags: ["http"] });
  assert.equal(stored.ok, true);
  const failed = await alice.callTool("replace_memory_block", { key: "nickname", old_text: "a", new_text: "b" });
  assert.deepEqual(failed.ok ? null : failed.error.code, "block_not_found");
  await rejects(alice.callTool("recall_everything"), "unknown_tool", 404);
});

test("experiences", async () => {
  const kafka = await alice.recordExperience("error", "Kafka broker 3 ran out of disk", {
    context: { userId: "u-1", taskId: "t-9" }, tags: ["kafka"], sessionId: "s-3", observedAt: new Date(),
  });
  assert.equal(kafka.type, "error");
  assert.equal(kafka.tier, "long_term"); // an error is important: consolidated at once
  const quiet = await alice.recordExperience("observation", "The ops channel is quiet", { context: { userId: "u-1" }, importance: 0.2 });
  assert.equal(quiet.tier, "short_term");
  assert.deepEqual((await alice.shortTerm()).map((e) => e.content), ["The ops channel is quiet"]);
  const found = await alice.recall({ query: "Kafka disk", types: ["error"], tags: ["kafka"], minImportance: 0.5, limit: 5 });
  assert.equal(found[0]!.content, "Kafka broker 3 ran out of disk");
  const looked = await alice.searchExperiences({ types: ["observation"], since: new Date(0) });
  assert.deepEqual(looked.map((e) => e.content), ["The ops channel is quiet"]);
  const related = await alice.recallRelated({ userId: "u-1", limit: 10 });
  assert.equal(related.length, 2);
  const consolidated = await alice.consolidate();
  assert.equal(consolidated.remaining + consolidated.consolidated + consolidated.pruned, consolidated.considered);
  await rejects(alice.recallRelated({}), "invalid_input", 400);
});

test("capture, surfacing, compaction", async () => {
  const session = [
    { role: "user", content: "Remember that the release train leaves on Thursdays.", id: "m1" },
    { role: "assistant", content: "Noted: the release train leaves on Thursdays.", id: "m2" },
  ];
  const observed = await alice.observe(session, { sessionId: "chat-1" });
  assert.equal(observed.accepted, 2);
  assert.equal((await alice.observe(session, { sessionId: "chat-1" })).duplicates, 2);
  const captured = await alice.processPending();
  assert.equal(captured.messages, 2);
  const surfaced = await alice.surface([{ role: "user", content: "When does the release train leave?" }], { sessionId: "chat-2", maxTokens: 300 });
  assert.ok(surfaced.text.includes("Thursdays"), surfaced.text);
  assert.ok(surfaced.tokens <= 300);

  const long = Array.from({ length: 12 }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: `Step ${i}: we decided to cache the ${i}th report.` }));
  const summary = await alice.compact(long, { config: { sparseThreshold: 0.3 } });
  assert.equal(summary.stats.entries, 12);
  assert.equal(summary.entries.length, 12);
  const stored = await alice.compact(long, { sessionId: "chat-3", previousSummary: "Earlier: set up the reports." });
  assert.ok(stored.summary.length > 0);
  await rejects(alice.compact(long, { config: { logFile: "/tmp/x" } as never }), "invalid_input", 400);
});

test("errors: keys, agents, network, foreign answers, abort", async () => {
  const bob = alice.forAgent("bob");
  assert.equal((await bob.stats()).agent_id, "bob");
  const forbidden = await rejects(alice.forAgent("carol").stats(), "forbidden", 403);
  assert.ok(forbidden instanceof Forbidden && !(forbidden instanceof Unauthorized), forbidden.name);
  assert.equal(forbidden.name, "Forbidden");
  const anonymous = await rejects(new HippoClient({ url: server.url, agentId: "alice", fetch: recording }).stats(), "unauthorized", 401);
  assert.ok(anonymous instanceof Unauthorized && !(anonymous instanceof Forbidden), anonymous.name);
  assert.equal(anonymous.name, "Unauthorized");
  const unknown = await rejects(new HippoClient({ url: server.url, key: "hippo_nope", agentId: "alice" }).stats(), "unauthorized", 401);
  assert.ok(unknown instanceof Unauthorized);
  const other = await rejects(alice.recallRelated({}), "invalid_input", 400);
  assert.ok(!(other instanceof Unauthorized) && !(other instanceof Forbidden) && other.name === "HippoError");
  await rejects(new HippoClient({ url: "http://127.0.0.1:9", agentId: "alice" }).stats(), "network_error", 0);

  const foreign = createServer((_, response) => response.writeHead(502, { "content-type": "text/html" }).end("<h1>Bad Gateway</h1>"));
  await new Promise<void>((done) => foreign.listen(0, "127.0.0.1", done));
  const port = (foreign.address() as AddressInfo).port;
  try {
    await rejects(new HippoClient({ url: `http://127.0.0.1:${port}`, agentId: "alice" }).stats(), "invalid_response", 502);
  } finally {
    foreign.close();
  }

  const aborted = AbortSignal.abort();
  await assert.rejects(alice.stats({ signal: aborted }), (error: unknown) => !(error instanceof HippoError));
});

test("every memory of one agent, and only of it, goes", async () => {
  const bob = alice.forAgent("bob");
  await bob.storeMemory("Bob's only memory");
  await bob.appendMemoryBlock("human", "Name: Bob");
  const erased = await bob.deleteAll({ receipt: true });
  assert.deepEqual([erased.agent_id, erased.memories, erased.blocks], ["bob", 1, 1]);
  assert.equal(erased.receipt!.operation, "delete_all");
  assert.equal((await bob.verifyReceipt(erased.receipt!)).verified, true);
  assert.ok((await alice.stats()).memories > 0);
});

test("forget receipts: each delete's receipt verifies, and names a place that holds the text again", async () => {
  const stored = await alice.storeMemory("My locker code at the climbing gym is 4711");
  const gone = await alice.deleteMemory(stored.id, { receipt: true });
  const receipt = gone.receipt!;
  assert.deepEqual(receipt.removed.map((r) => r.id), [stored.id]);
  assert.ok(!JSON.stringify(receipt).includes("4711")); // ids, digests and fingerprints: never the text
  assert.equal((await alice.deleteMemory((await alice.storeMemory("A note kept for nothing")).id)).receipt, null);
  const checked = await alice.verifyReceipt(receipt);
  assert.equal(checked.verified, true);
  assert.deepEqual(checked.failed, []);
  assert.ok(checked.checks.some((c) => c.place === "memories" && c.ok));

  await alice.storeMemory("The bike lock code is 9182");
  const forgotten = await alice.forgetMemory("bike lock code", { receipt: true });
  assert.equal(forgotten.receipt!.operation, "forget_memory");
  assert.equal((await alice.verifyReceipt(forgotten.receipt!)).verified, true);

  await alice.storeMemory("Copied: my locker code at the climbing gym is 4711"); // the text is back
  const failing = await alice.verifyReceipt(receipt);
  assert.equal(failing.verified, false);
  assert.deepEqual(failing.failed, ["memories"]);
  await rejects(alice.forAgent("bob").verifyReceipt(receipt), "invalid_input", 400); // alice's, not bob's
  await rejects(alice.verifyReceipt({ ...receipt, issued_at: "last March" }), "invalid_input", 400);
});

test("the operations route, where the server has it", async (t) => {
  const document = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Record<string, unknown> };
  if (!Object.keys(document.paths).some((path) => path.includes("/operations/"))) {
    t.skip("this server has no operations route");
    return;
  }
  const stored = await alice.operation<{ id: string; action: string }>("store_memory", { content: "Through the operations route" });
  assert.equal(stored.action, "inserted");
  await rejects(alice.operation("no_such_operation"), "not_found", 404);
});

test("the result types are the server's own (src/schema.ts)", async () => {
  const check = promisify(execFile)(process.execPath, ["scripts/schema.mjs", server.url, "--check"], { cwd: PACKAGE });
  await assert.doesNotReject(check);
});

test("every route of the server was called through the client", async () => {
  const document = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
  const routes = Object.entries(document.paths).flatMap(([path, operations]) => Object.keys(operations).map((m) => `${m.toUpperCase()} ${path}`));
  assert.ok(routes.length >= 37, String(routes.length));
  const pattern = (route: string) => new RegExp(`^${route.replace(/\{[^}]+\}/g, "[^/]+")}$`);
  const missed = routes.filter((route) => ![...called].some((request) => pattern(route).test(request)));
  assert.deepEqual(missed, []);
});
