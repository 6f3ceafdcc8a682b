import { config } from "../config";
import { afterCommit, sqlIn, type Database, type Db } from "../db/client";
import { sqliteTimestamp } from "../db/raw";
import type { AsyncExecution } from "../db/generated/sqlite/client";
import { enqueue } from "../jobs";
import { appendServiceRecord } from "../provenance/appendServiceRecord";
import { requestHash } from "../provenance/record";
import { newId } from "../ids";
import { stopLocalRun } from "./localRuns";
import { executionChanged, executionStopped } from "./executionChanged";
import { runRunEndHooks } from "./runEndHooks";

export const CALLBACK_JOB = "execution.callback";

/** The HTTP-like status a run's record carries: 200 completed, 500 failed, 499 cancelled. */
const RECORD_STATUS = { completed: 200, failed: 500, cancelled: 499 } as const;

/**
 * The provenance record of a run, in the transaction that records how it ended: a service record
 * under the run's own delegation (its actor the agent's passport, its delegate), the grantor the invoker.
 */
export async function appendRunRecord(
  tx: Db,
  engine: Database["engine"],
  e: Pick<AsyncExecution, "id" | "orgDid" | "agentId" | "delegationId" | "requesterPassportId">,
  status: keyof typeof RECORD_STATUS,
  known: { recordId?: string; actorDid?: string } = {},
): Promise<string> {
  // The run already knows its actor (read with the run) and may have pointed its row at the record's id.
  const actorDid =
    known.actorDid ??
    (await tx.delegation.findUnique({ where: { id: e.delegationId }, select: { delegateDid: true } }))?.delegateDid;
  // The run's own delegation ends with it, in the same transaction.
  await endRunDelegation(tx, e);
  const entry = {
    org_did: e.orgDid,
    actingFor: { delegationId: e.delegationId, delegateDid: actorDid },
    grantor_did: e.requesterPassportId,
    capability: "svc_api:agents:invoke",
    operation: `RUN /v1/agents/${e.agentId}`,
    resource_type: "execution",
    resource_id: e.id,
    decision: "allowed",
    status: RECORD_STATUS[status],
    request_hash: requestHash(undefined),
    request_id: e.id,
  } as const;
  return (await appendServiceRecord(tx, engine, entry, known.recordId)).id;
}

/** Queues the callback of an execution that has just ended, if it has a callback URL. */
export async function queueCallback(tx: Db, e: Pick<AsyncExecution, "id" | "orgDid" | "callbackUrl">): Promise<void> {
  if (!e.callbackUrl) return;
  const schedule = config().callbackRetrySchedule;
  await enqueue(
    tx,
    CALLBACK_JOB,
    { executionId: e.id },
    {
      orgDid: e.orgDid,
      maxAttempts: Math.max(1, schedule.length),
      runAt: new Date(Date.now() + (schedule[0] ?? 0) * 1000),
    },
  );
}

/**
 * Cancels executions that have not ended (queued → cancelled, processing → cancelled), with
 * `error_json = {code, message}`: their queued jobs are deleted, their callbacks queued, and a
 * run in this process stops once this commits (runs elsewhere when they hear of it). Returns those
 * cancelled; an execution that ended meanwhile is left as it is. The areas waiting for a run
 * (runEndHooks.ts) hear of it in the same transaction.
 */
export async function cancelExecutions(
  tx: Db,
  rows: AsyncExecution[],
  error: { code: string; message: string } & Record<string, unknown>,
): Promise<AsyncExecution[]> {
  const cancelled: AsyncExecution[] = [];
  for (const e of rows) {
    const { count } = await tx.asyncExecution.updateMany({
      where: { id: e.id, status: { in: ["queued", "processing"] } },
      data: { status: "cancelled", errorJson: error as object, completedAt: new Date() },
    });
    if (count === 0) continue;
    // A claimed job is left to its handler, which finds the execution cancelled.
    if (e.taskId) await tx.job.deleteMany({ where: { id: e.taskId, state: "queued" } });
    await endRunDelegation(tx, e);
    await queueCallback(tx, e);
    afterCommit(tx, () => stopLocalRun(e.id, error.code));
    // A run of another process stops on hearing it (this process's just stopped, above).
    executionStopped(tx, e);
    executionChanged(tx, e);
    await runRunEndHooks(tx, { id: e.id, orgDid: e.orgDid, status: "cancelled" });
    cancelled.push((await tx.asyncExecution.findUnique({ where: { id: e.id } }))!);
  }
  return cancelled;
}

/**
 * A run's own delegation ends with the run, in the transaction that records its end: revoked with
 * reason `run_ended` (a RevocationRecord naming the execution), so that lists of live delegations
 * and keys count only what can still act. Nothing derives from a run's delegation (trigger runs
 * derive from their subscription's), so this cascades to nothing; one already revoked is left as is.
 */
export async function endRunDelegation(
  tx: Db,
  e: Pick<AsyncExecution, "id" | "orgDid" | "delegationId">,
): Promise<void> {
  const engine = config().engine;
  const sql = sqlIn(tx, engine);
  const now = new Date();
  const revokedAt = engine === "sqlite" ? sqliteTimestamp(now) : now;
  const count = await sql.execute(
    `UPDATE "delegation" SET "revoked_at" = $2 WHERE "id" = $1 AND "kind" = 'execution' AND "revoked_at" IS NULL`,
    [e.delegationId, revokedAt],
  );
  if (count === 0) return;
  await sql.execute(
    `INSERT INTO "revocation" ("id","delegation_id","org_did","revoked_by","revoked_at","reason","metadata")
     VALUES ($1,$2,$3,$3,$4,'run_ended',${engine === "postgresql" ? "$5::jsonb" : "$5"})`,
    [newId("rev"), e.delegationId, e.orgDid, revokedAt, JSON.stringify({ execution_id: e.id })],
  );
}
