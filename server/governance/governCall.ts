import { config } from "../config";
import { database, type Database, type Db } from "../db/client";
import { commitGrouped } from "../db/groupCommit";
import { DomainError, Forbidden, RateLimited, toDomainError } from "../errors";
import { operationLabel, type Operation } from "../http/operation";
import { takeToken, type RateLimitState } from "../http/rateLimit";
import { assertChainLive, authenticate } from "../identity/authenticate";
import type { Principal } from "./principal";
import { recordAnonymousRefusal } from "./anonymousRefusals";
import { coveredBy } from "../identity/capabilities";
import { keyRing } from "../keys/signingKeys";
import {
  appendInTransaction,
  appendProvenance,
  awaitIntegrated,
  type PendingRecord,
} from "../provenance/appendProvenance";
import { requestHash, type ProvenanceEntry } from "../provenance/record";
import { rootOrgDidOf } from "../setup/rootOrg";
import { processWide } from "../processWide";
import { loggedCall, logger } from "../telemetry/log";
import { observeCall } from "../telemetry/metrics";
import { inSpan, tracedCall, type CallTrace } from "../telemetry/tracing";

/**
 * The governance gate, independent of transport: authenticate → rate limit → authorize
 * (capability) → prepare (parse, idempotency) → run → exactly one provenance record per call,
 * refusals included. A write runs in one transaction with its record, so both commit or neither.
 * The /v1 adapter (server/http/gate.ts), the tRPC middleware (server/trpc/init.ts) and `callAs`
 * (server/governance/callAs.ts, a call made in process as a delegation) call it.
 */
interface CallFields {
  /** Rate-limit bucket and stable name, e.g. `getPassport` or `trpc:identity.passports.list`. */
  id: string;
  /** The record's `operation`: `GET /v1/passports/{did}`, `TRPC identity.passports.list`. */
  label: string;
  capability: string | null;
  resourceType: string | null;
  write: boolean;
  successStatus: number;
  /**
   * Set only on the console's own procedures: the console roles allowed. A caller without a
   * console role (any bearer token) is refused, since these procedures can do what no /v1
   * operation offers a token (create API keys, invite people).
   */
  roles?: readonly string[];
}

// Only the builders below make a CallSpec, so what the gate checks is read from one declaration
// (an operation, a procedure's meta) and never restated by hand at a call site.
declare const built: unique symbol;
export type CallSpec = CallFields & { readonly [built]: true };

/** What the gate needs of an operation to govern a call of it. */
export type GovernedOperation = Pick<
  Operation,
  "id" | "method" | "path" | "capability" | "resourceType" | "successStatus"
>;

/** The gate's spec of a call of a /v1 operation, by whatever transport it comes. */
export function operationSpec(op: GovernedOperation): CallSpec {
  return {
    id: op.id,
    label: operationLabel(op),
    capability: op.capability,
    resourceType: op.resourceType,
    write: op.method !== "GET",
    successStatus: op.successStatus,
  } as CallSpec;
}

/** The gate's spec of a call of a console tRPC procedure (its capability and roles are in its meta). */
export function procedureSpec(
  path: string,
  write: boolean,
  meta: { capability: string | null; resourceType: string | null; roles?: readonly string[] } | undefined,
): CallSpec {
  return {
    id: `trpc:${path}`,
    label: `TRPC ${path}`,
    capability: meta?.capability ?? null,
    resourceType: meta?.resourceType ?? null,
    write,
    successStatus: 200,
    roles: meta?.roles,
  } as CallSpec;
}

export interface CallMeta {
  /** The Authorization header value (bearer token), when the caller sent one. */
  authorization: string | null;
  /** The client's network address, for rate limiting calls without a valid credential. */
  clientAddress: string;
  requestId: string;
  /** A caller already authenticated by its transport (a console session); replaces the bearer token. */
  authenticate?: () => Promise<Principal>;
  /** The caller's W3C trace context headers: the call's span continues its trace (server/telemetry/tracing.ts). */
  traceparent?: string | null;
  tracestate?: string | null;
}

export interface CallScope {
  db: Db;
  database: Database;
  principal: Principal;
  requestId: string;
  secret: Buffer;
  setResource(id: string | null, type?: string): void;
  setStatus(status: number): void;
  /**
   * Write calls only: runs in the call's transaction right after its provenance record is
   * appended, with that record (its id and leaf index are only known then), e.g. to point rows
   * the call wrote at the record that covers them.
   */
  onRecord(fn: (tx: Db, record: PendingRecord) => Promise<void>): void;
  /**
   * Work the call's answer waits for once its transaction has committed, outside it (nothing is
   * locked meanwhile; on SQLite every other write would wait otherwise). It may still change the
   * answer (its body, `setStatus`); its record and an idempotent replay keep what was known at commit.
   * The call has committed: a `DomainError` it throws becomes the answer (a problem), anything else
   * is logged.
   */
  afterCommit(fn: () => Promise<void>): void;
}

export interface Prepared {
  /** SHA-256 of the canonical request body, for the record. */
  requestHash?: string;
  /** A stored response to replay instead of running (an idempotent repeat). */
  replay?: { status: number };
  /** Runs inside the write transaction just before the record (stores an idempotent response). */
  beforeCommit?: (tx: Db, value: unknown, status: number) => Promise<void>;
}

/** A refusal or failure, carrying the rate-limit state the caller should still be shown. */
export class GateError extends Error {
  constructor(
    readonly error: unknown,
    readonly rateLimit: RateLimitState | undefined,
    /** Raised by work after the call's commit: its writes (an idempotent response among them) stand. */
    readonly afterCommit = false,
  ) {
    super(error instanceof Error ? error.message : String(error));
  }
}

/**
 * A record's decision is "denied" when the gate refused the call: no valid credential, not
 * covered, rate limited, or input it would not accept. Calls it let through are "allowed",
 * whatever their outcome (the HTTP status is recorded beside it).
 */
const REFUSALS = new Set([400, 401, 403, 413, 415, 422, 429]);
export const EMPTY_SHA256 = requestHash(undefined);

/** The HTTP status an error will be answered with (see server/http/problem.ts). */
export function statusOf(error: unknown): number {
  return toDomainError(error).status;
}

export const tooManyRequests = (rl: RateLimitState) => {
  const retryAfter = Math.max(1, rl.reset - Math.floor(Date.now() / 1000));
  return RateLimited(`The rate limit of ${rl.limit} requests per minute for this route has been reached.`, retryAfter);
};

type Governed<T> = {
  value: T | undefined;
  status: number;
  rateLimit: RateLimitState;
  replayed: boolean;
  /** Work after commit ran and may have changed the answer from what was committed (an idempotent response among it). */
  changedAfterCommit?: boolean;
};

export function governCall<T>(
  spec: CallSpec,
  meta: CallMeta,
  prepare: (principal: Principal) => Promise<Prepared>,
  run: (scope: CallScope) => Promise<T>,
): Promise<Governed<T>> {
  // The span outermost: the call's log lines carry its trace id.
  return tracedCall(spec.label, meta, (span) =>
    loggedCall(
      { request_id: meta.requestId, operation: spec.label },
      (caller) => governedCall(span, spec, meta, prepare, run, caller),
      (e) => statusOf(e instanceof GateError ? e.error : e),
    ),
  );
}

async function governedCall<T>(
  span: CallTrace,
  spec: CallSpec,
  meta: CallMeta,
  prepare: (principal: Principal) => Promise<Prepared>,
  run: (scope: CallScope) => Promise<T>,
  caller: (orgDid: string) => void,
): Promise<Governed<T>> {
  const startedAt = performance.now();
  const cfg = config();
  const db = await database();
  let principal: Principal | undefined;
  let rl: RateLimitState | undefined;
  let authorized = false;
  let recorded = false;
  let waitingForPosition = false;
  let reqHash = EMPTY_SHA256;
  let resource: { type: string | null; id: string | null } = { type: spec.resourceType, id: null };

  const fields = (status: number): ProvenanceEntry => ({
    org_did: principal?.orgDid ?? rootOrg.did ?? "unknown",
    actor_did: principal?.actorDid ?? null,
    delegation_id: principal?.delegationId || null,
    grantor_did: principal?.grantorDid ?? null,
    capability: spec.capability,
    operation: spec.label,
    resource_type: resource.type,
    resource_id: resource.id,
    decision: authorized && !REFUSALS.has(status) ? "allowed" : "denied",
    status,
    request_hash: reqHash,
    request_id: meta.requestId,
  });
  // The record carries the call's trace id, and the call's span the record's outcome.
  const entry = (status: number): ProvenanceEntry => span.record(fields(status));

  try {
    try {
      principal = meta.authenticate ? await meta.authenticate() : await authenticate(db, meta.authorization);
    } catch (e) {
      await loadRootOrgDid(db);
      // Refused credentials still count against the caller's address, so guessing is rate limited too.
      rl = await takeToken(`addr:${meta.clientAddress}:${spec.id}`, cfg.rateLimitAnonymousPerMinute);
      throw rl.allowed ? e : tooManyRequests(rl);
    }
    caller(principal.orgDid);
    // One bucket per root grant: sessions derived from a key share its limit.
    rl = await takeToken(`dlg:${principal.chain[0] ?? principal.actorDid}:${spec.id}`, cfg.rateLimitPerMinute);
    if (!rl.allowed) throw tooManyRequests(rl);
    if (spec.capability && !coveredBy(principal.capabilities, spec.capability)) {
      throw Forbidden(`This operation needs the capability ${spec.capability}, which your delegation does not hold.`, {
        missing_capability: spec.capability,
      });
    }
    if (spec.roles && principal.role === undefined) {
      throw Forbidden(
        "This is one of the console's own procedures: it takes a signed-in person's session, not a bearer token.",
        { required_roles: spec.roles },
      );
    }
    if (spec.roles && !spec.roles.includes(principal.role!)) {
      throw Forbidden(`This needs the ${spec.roles.join(" or ")} role; you are ${principal.role}.`, {
        required_roles: spec.roles,
      });
    }
    authorized = true;

    const prepared = await prepare(principal);
    if (prepared.requestHash) reqHash = prepared.requestHash;
    if (prepared.replay) {
      const record = await appendProvenance(db, entry(prepared.replay.status));
      recorded = true;
      await awaitIntegrated(db, [record.id]);
      observeCall(spec.id, prepared.replay.status, startedAt);
      return { value: undefined, status: prepared.replay.status, rateLimit: rl, replayed: true };
    }

    const secret = (await keyRing()).secret;
    let status = spec.successStatus;
    const afterRecord: Array<(tx: Db, record: PendingRecord) => Promise<void>> = [];
    const afterCommitted: Array<() => Promise<void>> = [];
    const scope = (dbh: Db): CallScope => ({
      db: dbh,
      database: db,
      principal: principal!,
      requestId: meta.requestId,
      secret,
      setResource: (id, type) => {
        resource = { type: type ?? resource.type, id };
      },
      setStatus: (s) => {
        status = s;
      },
      onRecord: (fn) => {
        if (!spec.write) throw new Error(`${spec.id} reads: it has no transaction to run onRecord in`);
        afterRecord.push(fn);
      },
      afterCommit: (fn) => void afterCommitted.push(fn),
    });

    let value: T;
    let recordId: string;
    if (!spec.write) {
      value = await run(scope(db.read));
      recordId = (await appendProvenance(db, entry(status))).id;
    } else {
      // Calls arriving together share one transaction, each in its own savepoint (db/groupCommit.ts).
      let appended = "";
      value = await inSpan("svc.transaction", { "svc.operation": spec.label }, () =>
        commitGrouped(db, async (tx) => {
          // A revocation that commits while this call runs must not let its writes through.
          await assertChainLive(tx, db.engine, principal!.chain);
          const out = await run(scope(tx));
          await prepared.beforeCommit?.(tx, out, status);
          const record = await appendInTransaction(tx, db.engine, entry(status));
          for (const fn of afterRecord) await fn(tx, record);
          appended = record.id;
          return out;
        }),
      );
      recordId = appended;
    }
    recorded = true;
    // The answer leaves once the call's record has its position in the ledger, as when positions
    // were taken at commit: a wait for the integrator's next round (ledger/integrate.ts), shared
    // with the calls that committed meanwhile, not a lock the transaction held. Past
    // SVC_LEDGER_WAIT_MS it is a 503 for a call that is committed and recorded, and not the call's
    // answer: an idempotent retry replays the answer stored at commit.
    waitingForPosition = true;
    await awaitIntegrated(db, [recordId]);
    waitingForPosition = false;
    // A refusal work after commit reaches (every model of a reasoning call failed) is the answer;
    // anything else it throws is logged. The record keeps what was known at commit.
    let lateRefusal: DomainError | undefined;
    for (const fn of afterCommitted) {
      await fn().catch((e: unknown) => {
        if (e instanceof DomainError) lateRefusal ??= e;
        else logger().error({ err: e }, `${spec.id}: work after commit failed`);
      });
    }
    if (lateRefusal) throw lateRefusal;
    observeCall(spec.id, status, startedAt);
    return { value, status, rateLimit: rl, replayed: false, changedAfterCommit: afterCommitted.length > 0 };
  } catch (error) {
    const { status, code } = toDomainError(error);
    // A refusal is what the record calls denied (see REFUSALS): its problem code is the reason.
    observeCall(spec.id, status, startedAt, !authorized || REFUSALS.has(status) ? code : undefined);
    if (!recorded) {
      try {
        // Nobody authenticated: counted per window rather than a record each (anonymousRefusals.ts).
        if (principal === undefined) await recordAnonymousRefusal(db, entry(statusOf(error)));
        else {
          const record = await appendProvenance(db, entry(statusOf(error)));
          // Like an answer, a refusal leaves once its record has its position; if that takes too
          // long the refusal is still the answer (its record is committed).
          await awaitIntegrated(db, [record.id]).catch(() => undefined);
        }
      } catch (e) {
        // Without its record the call must not look successful, nor go unrecorded silently.
        throw new GateError(e, rl);
      }
    }
    throw new GateError(error, rl, recorded && !waitingForPosition);
  }
}

/**
 * Records a request refused before it reached any operation (an unknown /v1 path, a method the
 * path does not serve, a public document over its rate limit): denied, for the root organization,
 * like every refusal before authentication.
 */
export function recordRefusal(
  label: string,
  requestId: string,
  status: number,
  carrier: { traceparent?: string | null; tracestate?: string | null } = {},
  routeClass = label,
): Promise<void> {
  // In a span of its own, continuing the caller's trace: the record keeps its trace id like any call's.
  return tracedCall(label, carrier, async (span) => {
    const db = await database();
    await loadRootOrgDid(db);
    await recordAnonymousRefusal(
      db,
      span.record({
        org_did: rootOrg.did ?? "unknown",
        actor_did: null,
        delegation_id: null,
        grantor_did: null,
        capability: null,
        operation: label,
        resource_type: null,
        resource_id: null,
        decision: "denied" as const,
        status,
        request_hash: EMPTY_SHA256,
        request_id: requestId,
      }),
      routeClass,
    );
  });
}

// Calls refused before authentication belong to the root organization: its administrators see them.
const rootOrg = processWide("governance.rootOrgDid", () => ({ did: undefined as string | undefined }));
async function loadRootOrgDid(db: Database): Promise<void> {
  rootOrg.did ??= await rootOrgDidOf(db);
}
