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

/** Reads a JSON body: 413 over the limit, 415 unless JSON, 400 if malformed; undefined when empty. */
export async function readJson(request: Request, limit: number): Promise<unknown> {
  const bytes = await readLimited(request, limit);
  if (bytes.length === 0) return undefined;
  const type = request.headers.get("content-type") ?? "";
  if (!JSON_TYPE.test(type)) {
    throw UnsupportedMediaType(type || null);
  }
  return parseJsonText(bytes.toString("utf8"));
}

/** JSON.parse with the contract's 400 (MALFORMED_JSON) instead of a SyntaxError. */
export function parseJsonText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw ValidationFailed([{ field: "body", code: "MALFORMED_JSON", message: `The body is not valid JSON: ${(e as Error).message}` }], "The body is not valid JSON.");
  }
}

const tooLarge = PayloadTooLarge;
