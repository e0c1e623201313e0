/**
 * A real `hippo serve` for the tests: a temporary database, a free loopback port, API keys made by
 * `hippo keys create`, and hippo's offline defaults (the local embedding model, no LLM, no config
 * file, no HIPPO_* variable of the caller's). The python is `$HIPPO_PYTHON`, else the project's
 * `.venv/bin/python`; `PYTHONPATH` passes through, so a checkout's code is the one served.
 */

import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

/** The package's folder (this file runs from .test-build/test/). */
export const PACKAGE = fileURLToPath(new URL("../../", import.meta.url));
export const PYTHON = process.env.HIPPO_PYTHON ?? resolve(PACKAGE, "../../.venv/bin/python");
const CLI = "import sys; from hippo.interfaces.command import main; sys.argv[0] = 'hippo'; sys.exit(main())";
const run = promisify(execFile);

export interface Hippo {
  url: string;
  /** A key for the agents the server was started for, and only those. */
  key: string;
  db: string;
  dir: string;
  /** Runs a Python script (with the served database's environment); resolves with what it printed. */
  python(script: string, ...args: string[]): Promise<string>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as AddressInfo;
  await new Promise((done) => server.close(done));
  return port;
}

function environment(db: string, dir: string): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("HIPPO_")));
  return { ...env, HIPPO_DB: db, HIPPO_CONFIG: join(dir, "none.toml"), HF_HUB_OFFLINE: "1" };
}

async function ready(url: string, child: ChildProcess, said: () => string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`hippo serve exited (${child.exitCode}): ${said()}`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((done) => setTimeout(done, 100));
  }
  throw new Error(`hippo serve did not answer at ${url}: ${said()}`);
}

/** Starts a server for `agents`; `seed` (Python, given the database path as sys.argv[1]) runs first. */
export async function startHippo(agents: string[], seed?: string): Promise<Hippo> {
  const dir = await mkdtemp(join(tmpdir(), "hippo-ts-"));
  try {
    return await serve(dir, agents, seed);
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

async function serve(dir: string, agents: string[], seed: string | undefined): Promise<Hippo> {
  const db = join(dir, "memory.db");
  const env = environment(db, dir);
  const python = async (script: string, ...args: string[]) =>
    (await run(PYTHON, ["-c", script, ...args], { env, cwd: dir, maxBuffer: 16 << 20 })).stdout;
  const made = await python(CLI, "keys", "create", ...agents.flatMap((a) => ["--agent", a]), "--json");
  const key = (JSON.parse(made) as { key: string }).key;
  if (seed) await python(seed, db);
  const port = await freePort();
  const child = spawn(PYTHON, ["-c", CLI, "serve", "--port", String(port)], { env, cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  child.on("error", (error) => (stderr += String(error)));
  const kill = () => child.kill("SIGKILL");
  process.once("exit", kill); // never outlive a test run that ends early
  const url = `http://127.0.0.1:${port}`;
  try {
    await ready(url, child, () => stderr);
  } catch (error) {
    kill();
    throw error;
  }
  async function stop(): Promise<void> {
    process.off("exit", kill);
    if (child.exitCode === null) {
      const exited = new Promise((done) => child.once("exit", done));
      child.kill("SIGINT");
      const timer = setTimeout(kill, 10_000);
      await exited;
      clearTimeout(timer);
    }
    await rm(dir, { recursive: true, force: true });
    if (/Traceback/.test(stderr)) throw new Error(`hippo serve logged a traceback:\n${stderr}`);
  }
  return { url, key, db, dir, python, stop };
}
