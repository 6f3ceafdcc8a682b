import { z } from "zod";
import { database, type Db } from "../db/client";
import { toDomainError } from "../errors";
import { callAs } from "../governance/callAs";
import { GateError } from "../governance/governCall";
import { parseOrThrow } from "../http/validation";
import type { Operation } from "../http/operation";
import { newId } from "../ids";
import type { PendingRecord } from "../provenance/appendProvenance";

/** What a governed call from a node came to. */
export type CallOutcome =
  | { ok: true; value: unknown; recordId: string | null }
  | { ok: false; error: { code: string; status: number; message: string; errors?: unknown }; recordId: string | null };

const pick = (input: Record<string, unknown>, schema: z.ZodType | undefined) =>
  schema instanceof z.ZodObject
    ? Object.fromEntries(
        Object.keys(schema.shape)
          .filter((k) => k in input)
          .map((k) => [k, input[k]]),
      )
    : {};

/**
 * One governed call of a platform operation on a workflow's behalf: through the governance gate
 * (authenticate as the workflow's delegation → capability → parse → run → provenance record), as
 * the operation's /v1 route would, so it is authorized, refused and recorded exactly like a
 * client's call. `input` is the operation's path, query and body fields as one object (as the
 * console's tRPC procedures take them).
 *
 * For a write, `onCommitted` runs inside the call's own transaction with its record, so the
 * node's outcome commits with the call or not at all (a restart never runs it twice). A read has
 * no transaction: `onCommitted` then gets a new one after it. A refusal or a failure the caller
 * caused is an outcome (`ok: false`, with the refusal's record); a rate limit or a failure of the
 * service itself throws, so the node's job is tried again later.
 */
export async function callOperation(
  op: Operation,
  actingAs: { orgDid: string; delegationId: string },
  input: Record<string, unknown>,
  onCommitted: (tx: Db, outcome: CallOutcome) => Promise<void>,
): Promise<void> {
  const db = await database();
  const { delegationId } = actingAs;
  const requestId = newId("req");
  const write = op.method !== "GET";
  const raw = { params: pick(input, op.params), query: pick(input, op.query), body: bodyOf(op, input) };
  let value: unknown;
  try {
    await callAs(op, { delegationId }, input, {
      via: "workflow",
      requestId,
      hashed: raw.body,
      async run(scope) {
        const params = op.params ? parseOrThrow(op.params, raw.params) : {};
        const query = op.query ? parseOrThrow(op.query, raw.query) : {};
        const body = op.body && raw.body !== undefined ? parseOrThrow(op.body, raw.body) : undefined;
        const first = Object.values(params as Record<string, unknown>)[0];
        if (typeof first === "string") scope.setResource(first);
        if (write)
          scope.onRecord((tx: Db, record: PendingRecord) => onCommitted(tx, { ok: true, value, recordId: record.id }));
        value = await op.handler({ ...scope, params, query, body } as Parameters<Operation["handler"]>[0]);
        if (value instanceof Response) throw new Error(`${op.id} answers ${op.responseType}: a node cannot call it`);
        return value;
      },
    });
  } catch (e) {
    const error = toDomainError(e instanceof GateError ? e.error : e);
    if (error.status >= 500 || error.status === 429) throw error;
    const recordId = await refusalRecord(db.read, actingAs, requestId);
    await db.writeTx((tx) =>
      onCommitted(tx, {
        ok: false,
        error: {
          code: error.code,
          status: error.status,
          message: error.message,
          ...(error.extra.errors ? { errors: error.extra.errors } : {}),
        },
        recordId,
      }),
    );
    return;
  }
  if (!write) {
    const recordId = await refusalRecord(db.read, actingAs, requestId);
    await db.writeTx((tx) => onCommitted(tx, { ok: true, value, recordId }));
  }
}

/** The record the gate wrote for a call it refused (or a read), found by its request id under the workflow's delegation. */
async function refusalRecord(
  db: Db,
  actingAs: { orgDid: string; delegationId: string },
  requestId: string,
): Promise<string | null> {
  const row = await db.provenanceRecord.findFirst({
    where: { orgDid: actingAs.orgDid, delegationId: actingAs.delegationId, requestId },
    select: { id: true },
    orderBy: { seq: "desc" },
  });
  return row?.id ?? null;
}

/** A body alone is the input as it is; otherwise the body's own fields (none: no body). */
function bodyOf(op: Operation, input: Record<string, unknown>): unknown {
  if (!op.body) return undefined;
  if (op.params === undefined && op.query === undefined) return input;
  const picked = pick(input, op.body);
  return Object.keys(picked).length === 0 && op.bodyOptional ? undefined : picked;
}
