/**
 * Every TypeScript block of the package's README and of hippo's guide page compiles against the
 * package as built, so that the documentation cannot drift from the API unnoticed.
 */

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";
import { PACKAGE } from "./hippo-server.js";

const PAGES = [join(PACKAGE, "README.md"), join(PACKAGE, "../../docs/guide/typescript.md")];

test("every TypeScript block of the documentation compiles", async () => {
  const dir = join(PACKAGE, ".test-build", "snippets");
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  let blocks = 0;
  for (const page of PAGES) {
    for (const [, block] of (await readFile(page, "utf8")).matchAll(/```ts\n([\s\S]*?)```/g)) {
      await writeFile(join(dir, `block${blocks++}.ts`), block!);
    }
  }
  assert.ok(blocks >= 4, `only ${blocks} blocks`);
  const config = { extends: "../../tsconfig.json", compilerOptions: { noEmit: true, rootDir: ".", types: ["node"], skipLibCheck: true }, include: ["*.ts"] };
  await writeFile(join(dir, "tsconfig.json"), JSON.stringify(config));
  const tsc = join(PACKAGE, "node_modules", "typescript", "bin", "tsc");
  await promisify(execFile)(process.execPath, [tsc, "-p", dir]).catch((error: { stdout?: string }) => {
    assert.fail(`the documentation's TypeScript does not compile:\n${error.stdout ?? String(error)}`);
  });
});
