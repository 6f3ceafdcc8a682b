import type { z } from "zod";
import type { Database, Db } from "../db/client";
import type { AreaErrorCode, ErrorCode } from "../errorCatalogue";
import type { Principal } from "../governance/principal";
import type { PendingRecord } from "../provenance/appendProvenance";

export type HttpMethod = "GET" | "POST" | "PATCH" | "DELETE";

/** What a handler gets: parsed input, the caller, and a database handle (a transaction for writes). */
export interface HandlerContext<P, Q, B> {
  db: Db;
  database: Database;
  principal: Principal;
  params: P;
  query: Q;
  body: B;
  requestId: string;
  /** Secret for the service's own HMACs (pagination cursors). */
  secret: Buffer;
  /** The id of the resource this call acted on, for its provenance record. */
  setResource(id: string | null, type?: string): void;
  /** Overrides the operation's success status (e.g. 201 instead of 202). */
  setStatus(status: number): void;
  /** Write calls: runs in the call's transaction with its provenance record once appended (see CallScope.onRecord). */
  onRecord(fn: (tx: Db, record: PendingRecord) => Promise<void>): void;
  /** Work the answer waits for after the call's transaction commits (see CallScope.afterCommit). */
  afterCommit(fn: () => Promise<void>): void;
}

/**
 * One public operation, declared once: its path, the capability it checks, its zod schemas and
 * its handler. The /v1 route file serves it, the OpenAPI document describes it, the tests call it.
 */
export interface Operation<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
  R extends z.ZodType = z.ZodType,
> {
  id: string;
  method: HttpMethod;
  /** OpenAPI path template, e.g. `/v1/passports/{did}`. */
  path: string;
  summary: string;
  description?: string;
  tag: string;
  /** The capability checked; null: any valid token (the session exchange narrows what it holds). */
  capability: string | null;
  resourceType: string | null;
  params?: P;
  query?: Q;
  body?: B;
  /** Whether an empty body is accepted (its schema then sees `undefined`). */
  bodyOptional?: boolean;
  response: R;
  /** A non-JSON success body (the handler then returns a Response carrying it). */
  responseType?: "text/plain" | "application/x-ndjson";
  successStatus: number;
  /** Other success statuses a handler may answer with `setStatus`, same body (e.g. a deploy's 201 with `wait: true`), for the OpenAPI document. */
  otherSuccessStatuses?: readonly number[];
  /**
   * Top-level fields of the answer that are secret (a bearer token, a `whsec_` secret). Where svc
   * keeps an answer (a workflow `svc` node's output) they are sealed at rest and shown redacted
   * (server/signing/sealedFields.ts); the caller of the operation itself still gets them.
   */
  secretFields?: readonly string[];
  /** Problem codes beyond the ones every operation of its kind can answer (e.g. a GET's 409), for the OpenAPI document. */
  problems?: readonly (ErrorCode | AreaErrorCode)[];
  /**
   * A caller identified by the request itself rather than a bearer token: the OAuth callback,
   * which a provider's redirect brings with no Authorization header, is the installer its
   * single-use `state` was issued to. Such an operation is unauthenticated in the OpenAPI document.
   */
  authenticateRequest?: (request: Request) => Promise<Principal>;
  handler(ctx: HandlerContext<z.output<P>, z.output<Q>, z.output<B>>): Promise<z.input<R> | Response>;
}

export function defineOperation<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType, R extends z.ZodType>(
  op: Operation<P, Q, B, R>,
): Operation<P, Q, B, R> {
  return op;
}

/** The operation's record label: method and route template. */
export const operationLabel = (op: Pick<Operation, "method" | "path">) => `${op.method} ${op.path}`;
