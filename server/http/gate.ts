import { createHash } from "node:crypto";
import { config } from "../config";
import { DomainError, ValidationFailed } from "../errors";
import { EMPTY_SHA256, GateError, governCall, type Prepared } from "../governance/governCall";
import { newId } from "../ids";
import { requestHash } from "../provenance/record";
import { operationLabel, type Operation } from "./operation";
import { problemResponse, toProblem } from "./problem";
import { rateLimitHeaders } from "./rateLimit";
import { idempotency } from "./idempotency";
import { parseOrThrow, refuseHostileInput } from "./validation";
import type { Principal } from "../identity/authenticate";

/**
 * The /v1 adapter of the governance gate: turns a Web-standard Request into a governed call
 * (server/governance/governCall.ts) and its outcome into JSON or problem+json. Parsing (415, 413,
 * 400) and idempotency happen inside the gate, after authorization, so they are recorded too.
 * No Next.js-only API is used: the same handler can be mounted on any server.
 */
export function serve(op: Operation) {
  const handler = (request: Request, context?: { params?: Promise<Record<string, string | string[]>> }) => handle(op, request, context?.params);
  // Lets the route tests check that each route file serves the operation the OpenAPI document describes.
  return Object.assign(handler, { operation: op });
}

const REQUEST_ID = /^[A-Za-z0-9._:\-]{1,128}$/;
const JSON_TYPE = /^application\/(?:[a-z0-9.\-]+\+)?json\s*(?:;|$)/i;
/** Set by svc's HTTP server from the socket; never taken from the client. */
export const CLIENT_ADDRESS_HEADER = "x-svc-client-address";

async function handle(op: Operation, request: Request, paramsPromise?: Promise<Record<string, string | string[]>>): Promise<Response> {
  const url = new URL(request.url);
  const requestId = REQUEST_ID.test(request.headers.get("x-request-id") ?? "") ? request.headers.get("x-request-id")! : newId("req");
  const label = operationLabel(op);
  let params: unknown = {};
  let query: unknown = {};
  let body: unknown;
  let firstParam: string | undefined;
  let replayBody: string | undefined;
  const idempotencyKey = op.method === "POST" ? request.headers.get("idempotency-key") : null;

  const prepare = async (principal: Principal): Promise<Prepared> => {
    const rawParams = paramsPromise ? await paramsPromise : {};
    refuseHostileInput(rawParams, "path");
    const rawQuery = Object.fromEntries(url.searchParams);
    refuseHostileInput(rawQuery, "query");
    const first = Object.values(rawParams)[0];
    if (typeof first === "string") firstParam = first;
    params = op.params ? parseOrThrow(op.params, rawParams) : {};
    query = op.query ? parseOrThrow(op.query, rawQuery) : {};
    let hash = EMPTY_SHA256;
    if (op.body) {
      const raw = await readJson(request, config().maxBodyBytes);
      if (raw !== undefined) {
        refuseHostileInput(raw, "body");
        hash = requestHash(raw);
      }
      if (raw === undefined && !op.bodyOptional) throw ValidationFailed([{ field: "body", code: "REQUIRED_FIELD_MISSING", message: "This operation needs a JSON body." }]);
      body = raw === undefined ? undefined : parseOrThrow(op.body, raw);
    }
    if (idempotencyKey === null) return { requestHash: hash };
    return idempotency(principal.delegationId || principal.actorDid, idempotencyKey, createHash("sha256").update(`${label}\n${url.pathname}\n${hash}`).digest("hex"), hash, (stored) => (replayBody = stored));
  };

  try {
    const outcome = await governCall(
      { id: op.id, label, capability: op.capability, resourceType: op.resourceType, write: op.method !== "GET", successStatus: op.successStatus },
      { authorization: request.headers.get("authorization"), clientAddress: request.headers.get(CLIENT_ADDRESS_HEADER) ?? "unknown", requestId },
      prepare,
      async (scope) => {
        if (firstParam !== undefined) scope.setResource(firstParam);
        const out = await op.handler({ ...scope, params, query, body } as Parameters<Operation["handler"]>[0]);
        return checkResponse(op, out);
      },
    );
    const headers = { "X-Request-Id": requestId, ...rateLimitHeaders(outcome.rateLimit), "Content-Type": "application/json" };
    if (outcome.value instanceof Response) {
      for (const [k, v] of Object.entries(headers)) if (!outcome.value.headers.has(k)) outcome.value.headers.set(k, v);
      return outcome.value;
    }
    if (outcome.replayed) return new Response(replayBody, { status: outcome.status, headers: { ...headers, "Idempotent-Replayed": "true" } });
    return new Response(JSON.stringify(outcome.value), { status: outcome.status, headers });
  } catch (e) {
    const gateError = e instanceof GateError ? e : new GateError(e, undefined);
    const { problem, headers } = toProblem(gateError.error, url.pathname, requestId);
    return problemResponse(problem, { "X-Request-Id": requestId, ...(gateError.rateLimit ? rateLimitHeaders(gateError.rateLimit) : {}), ...headers });
  }
}

/** In development and tests every response is checked against its schema; a mismatch is a bug. */
function checkResponse(op: Operation, out: unknown): unknown {
  if (process.env.NODE_ENV === "production" || out instanceof Response) return out;
  const parsed = op.response.safeParse(out);
  if (!parsed.success) throw new Error(`${op.id} returned a body that does not match its response schema: ${parsed.error.message}`);
  return out;
}

/** Reads a body of at most `limit` bytes (413 beyond, declared or streamed). */
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

/** Reads a JSON body: 413 over the limit, 415 unless JSON, 400 if malformed; undefined when empty. */
async function readJson(request: Request, limit: number): Promise<unknown> {
  const bytes = await readLimited(request, limit);
  if (bytes.length === 0) return undefined;
  const type = request.headers.get("content-type") ?? "";
  if (!JSON_TYPE.test(type)) {
    throw new DomainError(415, "unsupported_media_type", "Unsupported media type", `Send the body as application/json (got ${type ? JSON.stringify(type) : "no Content-Type"}).`);
  }
  const text = bytes.toString("utf8");
  try {
    return JSON.parse(text);
  } catch (e) {
    throw ValidationFailed([{ field: "body", code: "MALFORMED_JSON", message: `The body is not valid JSON: ${(e as Error).message}` }], "The body is not valid JSON.");
  }
}

const tooLarge = (limit: number) => new DomainError(413, "payload_too_large", "Payload too large", `The body exceeds the limit of ${limit} bytes.`);
