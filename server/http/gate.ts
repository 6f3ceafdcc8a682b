import { createHash } from "node:crypto";
import { config } from "../config";
import { database, type Database, type Db } from "../db/client";
import { DomainError, Forbidden, ValidationFailed } from "../errors";
import { authenticate, type Principal } from "../identity/authenticate";
import { coveredBy } from "../identity/capabilities";
import { newId } from "../ids";
import { keyRing } from "../keys/signingKeys";
import { appendInTransaction, appendProvenance } from "../provenance/appendProvenance";
import { requestHash, type ProvenanceEntry } from "../provenance/record";
import { operationLabel, type Operation } from "./operation";
import { problemResponse, toProblem } from "./problem";
import { rateLimitHeaders, takeToken, type RateLimitState } from "./rateLimit";
import { parseOrThrow } from "./validation";

/**
 * The governance gate for /v1: authenticate → rate limit → authorize (capability) → parse →
 * idempotency → run → exactly one provenance record, denied calls included, written in the same
 * transaction as the call's own writes. Web-standard Request/Response only, so the same handler
 * runs under Next.js and under any other server.
 */
export function serve(op: Operation) {
  return (request: Request, context?: { params?: Promise<Record<string, string | string[]>> }) => handle(op, request, context?.params);
}

/**
 * A record's decision is "denied" when the gate refused the call: no valid credential, not
 * covered, rate limited, or input it would not accept. Calls it let through are "allowed",
 * whatever their outcome (its HTTP status is recorded beside it).
 */
const REFUSALS = new Set([400, 401, 403, 413, 415, 422, 429]);
const EMPTY_SHA256 = createHash("sha256").digest("hex");
const REQUEST_ID = /^[A-Za-z0-9._:\-]{1,128}$/;
const JSON_TYPE = /^application\/(?:[a-z0-9.\-]+\+)?json\s*(?:;|$)/i;
/** Set by svc's HTTP server from the socket; never taken from the client. */
export const CLIENT_ADDRESS_HEADER = "x-svc-client-address";

const tooManyRequests = (rl: RateLimitState) => {
  const retryAfter = Math.max(1, rl.reset - Math.floor(Date.now() / 1000));
  return new DomainError(429, "rate_limited", "Too many requests", `The rate limit of ${rl.limit} requests per minute for this route has been reached.`, {
    remediation: [{ step: 1, description: `Wait ${retryAfter} seconds (Retry-After) before retrying, and spread requests over time.` }],
    headers: { "Retry-After": String(retryAfter) },
  });
};

async function handle(op: Operation, request: Request, paramsPromise?: Promise<Record<string, string | string[]>>): Promise<Response> {
  const cfg = config();
  const db = await database();
  const url = new URL(request.url);
  const requestId = REQUEST_ID.test(request.headers.get("x-request-id") ?? "") ? request.headers.get("x-request-id")! : newId("req");
  const label = operationLabel(op);
  let principal: Principal | undefined;
  let rl: RateLimitState | undefined;
  let authorized = false;
  let recorded = false;
  let reqHash = EMPTY_SHA256;
  let resource: { type: string | null; id: string | null } = { type: op.resourceType, id: null };

  const entry = (status: number): ProvenanceEntry => ({
    org_did: principal?.orgDid ?? rootOrgDidCache ?? "unknown",
    actor_did: principal?.actorDid ?? null,
    delegation_id: principal?.delegationId ?? null,
    grantor_did: principal?.grantorDid ?? null,
    capability: op.capability,
    operation: label,
    resource_type: resource.type,
    resource_id: resource.id,
    decision: authorized && !REFUSALS.has(status) ? "allowed" : "denied",
    status,
    request_hash: reqHash,
    request_id: requestId,
  });
  const baseHeaders = (): Record<string, string> => ({ "X-Request-Id": requestId, ...(rl ? rateLimitHeaders(rl) : {}) });

  try {
    const clientKey = request.headers.get(CLIENT_ADDRESS_HEADER) ?? "unknown";
    try {
      principal = await authenticate(db, request.headers.get("authorization"));
    } catch (e) {
      await loadRootOrgDid(db);
      // Refused credentials still count against the caller's address, so guessing is rate limited too.
      rl = takeToken(`addr:${clientKey}:${op.id}`, cfg.rateLimitAnonymousPerMinute);
      if (!rl.allowed) throw tooManyRequests(rl);
      throw e;
    }
    rl = takeToken(`dlg:${principal.delegationId}:${op.id}`, cfg.rateLimitPerMinute);
    if (!rl.allowed) throw tooManyRequests(rl);
    if (op.capability && !coveredBy(principal.capabilities, op.capability)) {
      throw Forbidden(`This operation needs the capability ${op.capability}, which your delegation does not hold.`, { missing_capability: op.capability });
    }
    authorized = true;

    const rawParams = paramsPromise ? await paramsPromise : {};
    refuseNul(rawParams, "path");
    refuseNul(Object.fromEntries(url.searchParams), "query");
    const params = op.params ? parseOrThrow(op.params, rawParams) : {};
    const firstParam = Object.values(rawParams)[0];
    if (typeof firstParam === "string") resource.id = firstParam;
    const query = op.query ? parseOrThrow(op.query, Object.fromEntries(url.searchParams)) : {};
    let body: unknown = undefined;
    if (op.body) {
      const raw = await readJson(request, cfg.maxBodyBytes);
      if (raw !== undefined) reqHash = requestHash(raw);
      refuseNul(raw, "body");
      if (raw === undefined && !op.bodyOptional) throw ValidationFailed([{ field: "body", code: "REQUIRED_FIELD_MISSING", message: "This operation needs a JSON body." }]);
      body = raw === undefined ? undefined : parseOrThrow(op.body, raw);
    }

    const idempotencyKey = op.method === "POST" ? request.headers.get("idempotency-key") : null;
    const scope = `${principal.orgDid}`;
    const fingerprint = createHash("sha256").update(`${label}\n${url.pathname}\n${reqHash}`).digest("hex");
    if (idempotencyKey !== null) {
      if (!/^[\x21-\x7e]{1,255}$/.test(idempotencyKey)) {
        throw ValidationFailed([{ field: "Idempotency-Key", code: "INVALID_FORMAT", message: "Idempotency-Key must be 1 to 255 visible ASCII characters." }]);
      }
      const previous = await db.read.idempotencyKey.findUnique({ where: { scope_key: { scope, key: idempotencyKey } } });
      if (previous) {
        if (previous.requestHash !== fingerprint) {
          throw new DomainError(422, "idempotency_key_reused", "Idempotency key reused", "This Idempotency-Key was already used with a different request. Use a new key for a new request.");
        }
        await appendProvenance(db, entry(previous.status));
        recorded = true;
        return new Response(previous.body, { status: previous.status, headers: { ...baseHeaders(), "Content-Type": "application/json", "Idempotent-Replayed": "true" } });
      }
    }

    const secret = (await keyRing()).secret;
    let status = op.successStatus;
    const run = (dbh: Db) =>
      op.handler({
        db: dbh,
        database: db,
        principal: principal!,
        params,
        query,
        body,
        requestId,
        secret,
        setResource: (id, type) => {
          resource = { type: type ?? resource.type, id };
        },
        setStatus: (s) => {
          status = s;
        },
      });

    let result: unknown;
    if (op.method === "GET") {
      result = checkResponse(op, await run(db.read));
      await appendProvenance(db, entry(status));
    } else {
      result = await db.writeTx(async (tx) => {
        const out = checkResponse(op, await run(tx));
        if (idempotencyKey !== null) {
          await tx.idempotencyKey.create({ data: { scope, key: idempotencyKey, requestHash: fingerprint, status, body: JSON.stringify(out) } });
        }
        await appendInTransaction(tx, db.engine, entry(status));
        return out;
      });
    }
    recorded = true;
    return new Response(JSON.stringify(result), { status, headers: { ...baseHeaders(), "Content-Type": "application/json" } });
  } catch (error) {
    const { problem, headers } = toProblem(error, url.pathname, requestId);
    if (!recorded) {
      try {
        await appendProvenance(db, entry(problem.status));
      } catch (e) {
        // Without its record the call must not look successful or be silently unrecorded.
        const failure = toProblem(e, url.pathname, requestId);
        return problemResponse(failure.problem, { ...baseHeaders(), ...failure.headers });
      }
    }
    return problemResponse(problem, { ...baseHeaders(), ...headers });
  }
}

/** In development and tests every response is checked against its schema; a mismatch is a bug. */
function checkResponse(op: Operation, out: unknown): unknown {
  if (process.env.NODE_ENV === "production") return out;
  const parsed = op.response.safeParse(out);
  if (!parsed.success) throw new Error(`${op.id} returned a body that does not match its response schema: ${parsed.error.message}`);
  return out;
}

/** Reads a JSON body: 415 unless JSON, 413 over the limit, 400 if malformed; undefined when empty. */
async function readJson(request: Request, limit: number): Promise<unknown> {
  const declared = Number(request.headers.get("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
  if (!request.body) return undefined;
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
  if (size === 0) return undefined;
  const type = request.headers.get("content-type") ?? "";
  if (!JSON_TYPE.test(type)) {
    throw new DomainError(415, "unsupported_media_type", "Unsupported media type", `Send the body as application/json (got ${type ? JSON.stringify(type) : "no Content-Type"}).`);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  try {
    return JSON.parse(text);
  } catch (e) {
    throw ValidationFailed([{ field: "body", code: "MALFORMED_JSON", message: `The body is not valid JSON: ${(e as Error).message}` }], "The body is not valid JSON.");
  }
}

/** NUL characters cannot be stored (PostgreSQL text refuses them) and have no legitimate use here. */
function refuseNul(value: unknown, where: string, path = ""): void {
  if (typeof value === "string") {
    if (value.includes("\u0000")) throw ValidationFailed([{ field: path || where, code: "INVALID_FORMAT", message: "NUL characters are not allowed." }]);
  } else if (Array.isArray(value)) value.forEach((v, i) => refuseNul(v, where, path ? `${path}.${i}` : String(i)));
  else if (value && typeof value === "object") for (const [k, v] of Object.entries(value)) {
    refuseNul(k, where, path);
    refuseNul(v, where, path ? `${path}.${k}` : k);
  }
}

const tooLarge = (limit: number) => new DomainError(413, "payload_too_large", "Payload too large", `The body exceeds the limit of ${limit} bytes.`);

// Calls refused before authentication belong to the root organization: its administrators see them.
let rootOrgDidCache: string | undefined;
async function loadRootOrgDid(db: Database): Promise<void> {
  if (rootOrgDidCache) return;
  const [row] = await db.raw.query<{ value: string }>(`SELECT "value" FROM "service_state" WHERE "key" = 'root_org_did'`);
  rootOrgDidCache = row?.value;
}
