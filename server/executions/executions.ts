import type { z } from "zod";
import type { AsyncExecution } from "../db/generated/sqlite/client";
import type { Db } from "../db/client";
import { IllegalTransition, NotFound } from "../errors";
import { keyset, olderThan } from "../http/cursor";
import type { Principal } from "../governance/principal";
import type { RevocationHook } from "../identity/revocationHooks";
import { attemptView } from "./attempts";
import { cancelExecutions } from "./endExecution";
import type { ExecutionListQuery } from "./schemas";
import { callbackAttemptView, executionView, logLineView } from "./views";

/** The organization's executions, newest first, by status and agent. */
export async function listExecutions(
  db: Db,
  principal: Principal,
  query: z.output<typeof ExecutionListQuery>,
  secret: Buffer,
) {
  const { after, take, page } = keyset<AsyncExecution>(secret, "executions", query, (last) => [
    last.queuedAt.toISOString(),
    last.id,
  ]);
  const rows = await db.asyncExecution.findMany({
    where: {
      orgDid: principal.orgDid,
      ...(query.status ? { status: query.status } : {}),
      ...(query.agent_id ? { agentId: query.agent_id } : {}),
      ...olderThan(after, "queuedAt", "id"),
    },
    orderBy: [{ queuedAt: "desc" }, { id: "desc" }],
    take,
  });
  const { items, pagination } = page(rows);
  return { data: items.map(executionView), pagination };
}

async function findExecution(db: Db, principal: Principal, id: string): Promise<AsyncExecution> {
  const row = await db.asyncExecution.findFirst({ where: { id, orgDid: principal.orgDid } });
  if (!row) throw NotFound("execution", id);
  return row;
}

/**
 * One execution with what only its detail carries: the input (unless the agent's manifest marks
 * it redacted: kept for the run and its retries, never shown) and every attempt.
 */
export async function getExecution(db: Db, principal: Principal, id: string) {
  const row = await db.asyncExecution.findFirst({
    where: { id, orgDid: principal.orgDid },
    include: { attempts: { orderBy: { attempt: "asc" } }, version: { select: { manifest: true } } },
  });
  if (!row) throw NotFound("execution", id);
  const redacted = (row.version.manifest as { redact_input?: boolean }).redact_input === true;
  return {
    ...executionView(row),
    input: redacted ? null : (row.input ?? null),
    input_redacted: redacted,
    attempts: row.attempts.map(attemptView),
  };
}

/** The callback's delivery attempts, oldest first. */
export async function listCallbackAttempts(db: Db, principal: Principal, id: string) {
  const e = await findExecution(db, principal, id);
  const rows = await db.callbackAttempt.findMany({ where: { executionId: e.id }, orderBy: { attempt: "asc" } });
  return { data: rows.map(callbackAttemptView) };
}

/** The lines the run logged (at most 200). */
export async function listExecutionLogs(db: Db, principal: Principal, id: string) {
  const e = await findExecution(db, principal, id);
  const rows = await db.executionLog.findMany({ where: { executionId: e.id }, orderBy: { seq: "asc" } });
  return { data: rows.map(logLineView) };
}

/** queued or processing → cancelled (a running sandbox stops within a second); an ended execution is 409. */
export async function cancelExecution(db: Db, principal: Principal, id: string) {
  const e = await findExecution(db, principal, id);
  if (e.status !== "queued" && e.status !== "processing") throw IllegalTransition("execution", e.status, "cancelled");
  const [cancelled] = await cancelExecutions(db, [e], {
    code: "cancelled",
    message: "Cancelled by a caller.",
    cancelled_by: principal.actorDid,
  });
  if (!cancelled) throw IllegalTransition("execution", (await findExecution(db, principal, id)).status, "cancelled");
  return executionView(cancelled);
}

// Revoking a delegation cancels the executions that act under it, in the revoking transaction.
// A run's delegation derives from its invoker's: revoking that one, or any ancestor, even without
// cascading (a console session signed out), ends the runs under it.
export const cancelRunsOfRevokedDelegations: RevocationHook = async (tx, ids) => {
  if (ids.length === 0) return;
  const rows = await tx.asyncExecution.findMany({
    where: {
      status: { in: ["queued", "processing"] },
      OR: [{ delegationId: { in: [...ids] } }, ...ids.map((id) => ({ delegation: { ancestry: { contains: id } } }))],
    },
  });
  if (rows.length === 0) return;
  await cancelExecutions(tx, rows, {
    code: "delegation_revoked",
    message: "The delegation this run acts under (or one it derives from) was revoked.",
  });
};
