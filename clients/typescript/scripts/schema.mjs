#!/usr/bin/env node
// Writes src/schema.ts, the result types, from a hippo server's OpenAPI document, so that they are
// the server's own and cannot drift from it unnoticed (the tests run this with --check).
//
//   node scripts/schema.mjs http://127.0.0.1:8000      fetch /openapi.json and write src/schema.ts
//   node scripts/schema.mjs openapi.json               read a saved document
//   node scripts/schema.mjs URL_OR_FILE --check        exit 1 if src/schema.ts differs from it
//
// Only the schemas the routes answer with are written (request bodies are the client's own
// camelCase options). The operations route carries any operation's arguments and result, typed by
// hand in the client, so its schemas are left out.

import { readFile, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";

const TARGET = fileURLToPath(new URL("../src/schema.ts", import.meta.url));
const SKIPPED_PATHS = /\/operations\//;

async function load(source) {
  if (/^https?:\/\//.test(source)) {
    const response = await fetch(new URL("/openapi.json", source));
    if (!response.ok) throw new Error(`GET /openapi.json answered ${response.status}`);
    return response.json();
  }
  return JSON.parse(await readFile(source, "utf8"));
}

const refName = (ref) => ref.split("/").pop();

function refsIn(node, found = new Set()) {
  if (Array.isArray(node)) node.forEach((item) => refsIn(item, found));
  else if (node && typeof node === "object") {
    for (const [key, value] of Object.entries(node)) {
      if (key === "$ref" && typeof value === "string") found.add(refName(value));
      else refsIn(value, found);
    }
  }
  return found;
}

/** The schemas a 2xx answer of a route uses, with every schema they use in turn, and the error envelope. */
function answered(document) {
  const schemas = document.components?.schemas ?? {};
  const wanted = new Set(["ErrorBody"]);
  for (const [path, operations] of Object.entries(document.paths ?? {})) {
    if (SKIPPED_PATHS.test(path)) continue;
    for (const operation of Object.values(operations)) {
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        if (status.startsWith("2")) refsIn(response, wanted);
      }
    }
  }
  const queue = [...wanted];
  while (queue.length) {
    for (const name of refsIn(schemas[queue.pop()] ?? {})) {
      if (!wanted.has(name)) queue.push(name), wanted.add(name);
    }
  }
  return [...wanted].filter((name) => name in schemas).sort();
}

function tsType(schema) {
  if (schema.$ref) return refName(schema.$ref);
  if (schema.anyOf) return [...new Set(schema.anyOf.map(tsType))].join(" | ");
  if ("const" in schema) return JSON.stringify(schema.const);
  if (schema.enum) return schema.enum.map((value) => JSON.stringify(value)).join(" | ");
  switch (schema.type) {
    case "string":
      return "string";
    case "integer":
    case "number":
      return "number";
    case "boolean":
      return "boolean";
    case "null":
      return "null";
    case "array": {
      const item = tsType(schema.items ?? {});
      return /[ |]/.test(item) ? `(${item})[]` : `${item}[]`;
    }
    case "object":
      if (schema.properties) return `{ ${Object.entries(schema.properties).map(([k, v]) => `${k}: ${tsType(v)}`).join("; ")} }`;
      return "Record<string, unknown>";
    default:
      return "unknown";
  }
}

/** A docstring as JSDoc: reStructuredText's ``code`` and :class:`~a.B` roles as Markdown code. */
function jsdoc(text, indent) {
  if (!text) return "";
  const plain = text
    .replace(/:[a-z]+:`~?(?:[\w.]+\.)?([\w]+)`/g, "`$1`")
    .replace(/``([^`]+)``/g, "`$1`")
    .replace(/\*\//g, "*\\/")
    .trim();
  const lines = plain.split("\n").map((line) => line.trimEnd());
  return `${indent}/**\n${lines.map((line) => `${indent} *${line ? ` ${line.trim()}` : ""}`).join("\n")}\n${indent} */\n`;
}

export function generate(document) {
  const schemas = document.components.schemas;
  const parts = [
    "// The results hippo's HTTP API answers with, generated from its OpenAPI document by",
    "// scripts/schema.mjs (`npm run schema -- http://127.0.0.1:8000`): do not edit by hand.",
    "// Field names are the server's (snake_case); times are ISO 8601 text.",
    "",
  ];
  for (const name of answered(document)) {
    const schema = schemas[name];
    const fields = Object.entries(schema.properties ?? {}).map(
      ([field, property]) => `${jsdoc(property.description, "  ")}  ${field}: ${tsType(property)};`,
    );
    parts.push(`${jsdoc(schema.description, "")}export interface ${name} {\n${fields.join("\n")}\n}\n`);
  }
  return parts.join("\n");
}

async function main([source, flag]) {
  if (!source) {
    console.error("usage: node scripts/schema.mjs URL_OR_FILE [--check]");
    return 2;
  }
  const written = generate(await load(source));
  if (flag === "--check") {
    const current = await readFile(TARGET, "utf8").catch(() => "");
    if (current === written) return 0;
    console.error(`src/schema.ts differs from ${source}'s OpenAPI document: run npm run schema -- ${source}`);
    return 1;
  }
  await writeFile(TARGET, written);
  console.error(`wrote ${TARGET}`);
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = await main(process.argv.slice(2));
}
