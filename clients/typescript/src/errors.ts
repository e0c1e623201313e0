/**
 * hippo's errors: one typed class, `HippoError`, and its two subclasses for a refused key,
 * `Unauthorized` and `Forbidden` (as `hippo.Unauthorized` and `hippo.Forbidden` in Python).
 *
 * The server answers every error with one envelope, `{"error": {"code", "message"}}`, and a status
 * (400 invalid input, 401 no or wrong key, 403 a key for another agent, 404 not found, 409 conflict,
 * 413 too large, 422 a malformed request, 503 a provider or the storage down, 500 a bug). A tool's structured
 * failure (`{"ok": false, "error": {...}}`) comes with status 200. The client adds two codes of its
 * own, with status 0: `network_error` (no answer at all) and `invalid_response` (an answer that is
 * not hippo's, such as a proxy's HTML page).
 */

/** Codes the server sends; any other string may come from a newer server or a tool. */
export type HippoErrorCode =
  // hippo's errors (hippo.errors in Python)
  | "invalid_input"
  | "not_found"
  | "block_not_found"
  | "conflict"
  | "text_not_found"
  | "limit_exceeded"
  | "provider_error"
  | "storage_error"
  | "config_error"
  | "embedder_mismatch"
  | "missing_dependency"
  // the HTTP surface's own
  | "invalid_request"
  | "unauthorized"
  | "forbidden"
  | "unknown_tool"
  | "too_large"
  | "misdirected_request"
  | "method_not_allowed"
  | "internal"
  // a tool's structured failure
  | "nothing_matched"
  // this client's
  | "network_error"
  | "invalid_response"
  | (string & {});

export class HippoError extends Error {
  override readonly name: string = "HippoError";
  /** hippo's stable error code: match on it, never on the message. */
  readonly code: HippoErrorCode;
  /** The HTTP status the error came with; 0 when there was no answer from hippo. */
  readonly status: number;

  constructor(code: HippoErrorCode, message: string, status: number, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.status = status;
  }
}

/** No API key, or one the server does not know: code `unauthorized`, status 401. */
export class Unauthorized extends HippoError {
  override readonly name: string = "Unauthorized";
  declare readonly code: "unauthorized";

  constructor(message: string, status = 401, options?: { cause?: unknown }) {
    super("unauthorized", message, status, options);
  }
}

/** A valid API key that may not reach this agent: code `forbidden`, status 403. */
export class Forbidden extends HippoError {
  override readonly name: string = "Forbidden";
  declare readonly code: "forbidden";

  constructor(message: string, status = 403, options?: { cause?: unknown }) {
    super("forbidden", message, status, options);
  }
}

/** The error hippo's `code` stands for: `Unauthorized`, `Forbidden`, else a `HippoError`. */
export function errorFor(code: HippoErrorCode, message: string, status: number): HippoError {
  if (code === "unauthorized") return new Unauthorized(message, status);
  if (code === "forbidden") return new Forbidden(message, status);
  return new HippoError(code, message, status);
}

/** The error of a failed answer: hippo's envelope when the body holds one, else `invalid_response`. */
export function errorOf(status: number, body: unknown, text: string): HippoError {
  const error = (body as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  if (error && typeof error.code === "string" && typeof error.message === "string") {
    return errorFor(error.code, error.message, status);
  }
  const shown = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  return new HippoError("invalid_response", `hippo answered ${status} without its error envelope: ${shown}`, status);
}
