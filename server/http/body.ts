import { DomainError, PayloadTooLarge, UnsupportedMediaType, ValidationFailed } from "../errors";

/**
 * The one way a request body is read anywhere in svc: bounded, so no caller (authenticated or
 * not) can make the process buffer more than the route's limit. A declared Content-Length over
 * the limit is refused before a byte is read; a streamed body is cut off as soon as it passes it.
 */
export async function readLimited(request: Request, limit: number): Promise<Buffer> {
  const declared = Number(request.headers.get("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
  if (!request.body) return Buffer.alloc(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(limit);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/**
 * Bodies of the routes that answer before anyone is signed in (passkey ceremonies, next-auth's
 * callbacks). A WebAuthn attestation with its certificate chain is a few KiB; 64 KiB leaves room
 * for any authenticator while keeping an anonymous caller's cost to the server small.
 */
export const PRE_AUTH_BODY_LIMIT = 64 * 1024;

const JSON_TYPE = /^application\/(?:[a-z0-9.\-]+\+)?json\s*(?:;|$)/i;

const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)"?/i;

/**
 * Reads a JSON body: 413 over the limit; 415 unless JSON, or when it declares a charset other
 * than UTF-8 (JSON is UTF-8, RFC 8259); 400 if it is not valid UTF-8 (decoding it would turn
 * bytes into U+FFFD silently) or not valid JSON; undefined when empty.
 */
export async function readJson(request: Request, limit: number): Promise<unknown> {
  const bytes = await readLimited(request, limit);
  if (bytes.length === 0) return undefined;
  const type = request.headers.get("content-type") ?? "";
  if (!JSON_TYPE.test(type)) {
    throw UnsupportedMediaType(type || null);
  }
  const charset = CHARSET.exec(type)?.[1]?.toLowerCase();
  if (charset !== undefined && charset !== "utf-8" && charset !== "utf8") {
    throw UnsupportedMediaType(
      type,
      `A JSON body is UTF-8; charset=${charset} is not accepted. Send it as UTF-8 (or leave the charset out).`,
    );
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw ValidationFailed(
      [
        {
          field: "body",
          code: "MALFORMED_JSON",
          message: "The body is not valid UTF-8: JSON text must be UTF-8 (RFC 8259).",
        },
      ],
      "The body is not valid UTF-8.",
    );
  }
  return parseJsonText(text);
}

/**
 * For operations that take no body (cancel, rotate-secret, deactivate, …): nothing, or `{}` (what
 * many HTTP clients send when given no body), whatever its content type. Anything else is refused
 * (400) instead of silently ignored: each field by name (`UNKNOWN_FIELD`), like on every route
 * with a strict body.
 */
export async function refuseBody(request: Request): Promise<void> {
  const bytes = await readLimited(request, NO_BODY_LIMIT).catch(() => undefined);
  if (bytes?.length === 0) return;
  let sent: unknown;
  try {
    sent = bytes === undefined ? undefined : JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    sent = undefined;
  }
  if (sent !== null && typeof sent === "object" && !Array.isArray(sent)) {
    const fields = Object.keys(sent);
    if (fields.length === 0) return;
    throw ValidationFailed(
      fields.slice(0, 20).map((field) => ({
        field,
        code: "UNKNOWN_FIELD",
        message: `This operation takes no body: ${JSON.stringify(field)} is not a field it accepts (send nothing, or {}).`,
      })),
      "This operation takes no body.",
    );
  }
  throw ValidationFailed(
    [
      {
        field: "body",
        code: "UNKNOWN_FIELD",
        message: "This operation takes no body: send the request without one (or {}).",
      },
    ],
    "This operation takes no body.",
  );
}

/** What an operation without a body reads at most of one before refusing it. */
const NO_BODY_LIMIT = 64 * 1024;

/** JSON.parse with the contract's 400 (MALFORMED_JSON) instead of a SyntaxError. */
export function parseJsonText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw ValidationFailed(
      [{ field: "body", code: "MALFORMED_JSON", message: `The body is not valid JSON: ${(e as Error).message}` }],
      "The body is not valid JSON.",
    );
  }
}

const tooLarge = PayloadTooLarge;
