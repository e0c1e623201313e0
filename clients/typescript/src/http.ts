/**
 * One request to hippo: the URL with its query, the bearer key, the JSON body, and the answer
 * read back or turned into a {@link HippoError}. Nothing here knows a route.
 */

import { HippoError, errorOf } from "./errors.js";

/** How to reach a hippo server. */
export interface ConnectionOptions {
  /** The server's base URL, such as `http://127.0.0.1:8000` (a path prefix is kept). */
  url: string;
  /** An API key from `hippo keys create`; a keyless loopback server needs none. */
  key?: string;
  /** A `fetch` to use instead of the platform's (a proxy, a test double, an older runtime). */
  fetch?: typeof fetch;
  /** Headers sent with every request, besides the key. */
  headers?: Record<string, string>;
}

/** What every call takes besides its own options. */
export interface RequestOptions {
  /** Aborts the request; the promise then rejects with the signal's reason, not a HippoError. */
  signal?: AbortSignal;
}

export type QueryValue = string | number | boolean | Date | null | undefined | readonly (string | number)[];

export interface Request {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  path: string;
  query?: Record<string, QueryValue>;
  body?: unknown;
  signal?: AbortSignal | undefined;
}

/** The answer of a request that succeeded: its status and parsed JSON body. */
export interface Answer<T> {
  status: number;
  body: T;
}

export class Transport {
  readonly url: string;
  private readonly key: string | undefined;
  private readonly fetcher: typeof fetch;
  private readonly headers: Record<string, string>;

  constructor(options: ConnectionOptions) {
    if (!options.url) throw new HippoError("invalid_input", "url is required, such as http://127.0.0.1:8000", 0);
    this.url = options.url.replace(/\/+$/, "");
    this.key = options.key;
    this.fetcher = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.headers = { ...options.headers };
  }

  /** Sends `request`; resolves with the answer when it is 2xx, rejects with a HippoError otherwise. */
  async send<T>(request: Request): Promise<Answer<T>> {
    const headers: Record<string, string> = { accept: "application/json", ...this.headers };
    if (this.key) headers.authorization = `Bearer ${this.key}`;
    const init: RequestInit = { method: request.method, headers, signal: request.signal ?? null };
    if (request.body !== undefined) {
      headers["content-type"] = "application/json";
      init.body = JSON.stringify(request.body);
    }
    let response: Response;
    try {
      response = await this.fetcher(this.url + request.path + queryString(request.query), init);
    } catch (error) {
      if (request.signal?.aborted) throw error; // the caller's abort is no failure of hippo's
      const reason = error instanceof Error ? error.message : String(error);
      throw new HippoError("network_error", `could not reach hippo at ${this.url}: ${reason}`, 0, { cause: error });
    }
    const text = await response.text();
    let body: unknown = undefined;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      // not JSON: an error below, or invalid_response for a 2xx
    }
    if (!response.ok) throw errorOf(response.status, body, text);
    if (body === undefined) {
      throw new HippoError("invalid_response", `hippo answered ${response.status} with a body that is not JSON`, response.status);
    }
    return { status: response.status, body: body as T };
  }
}

/** `?a=1&tag=x&tag=y`: arrays repeat their name, dates go as ISO 8601, null and undefined are left out. */
export function queryString(query: Record<string, QueryValue> | undefined): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value === undefined || value === null) continue;
    for (const item of Array.isArray(value) ? value : [value]) {
      params.append(name, item instanceof Date ? item.toISOString() : String(item));
    }
  }
  const text = params.toString();
  return text ? `?${text}` : "";
}

/** A path segment, escaped. */
export const segment = (value: string): string => encodeURIComponent(value);

/** A time as the server reads it: ISO 8601 text, a Date converted. */
export const isoTime = (value: Date | string | undefined | null): string | undefined =>
  value instanceof Date ? value.toISOString() : (value ?? undefined);
