import type { Database, Db } from "../db/client";
import type { ApprovalRequest as Row } from "../db/generated/sqlite/client";
import { appendServiceRecord } from "../provenance/appendServiceRecord";
import { requestHash } from "../provenance/record";
import type { EscalationSchema } from "./schemas";
import { settleApproval } from "./settleApproval";
import { approvalChanged } from "./approvalChanged";
import { putPlatformEvent } from "../events/platformEvents";
import { approvalEventPayload } from "./requestApproval";
import { approvalView } from "./views";

/** Rows handled per pass and per transaction: a backlog drains over passes without long locks. */
const BATCH = 100;

/**
 * A move the service makes on its own (expiry, escalation, a cascade): a service record, under no
 * delegation (provenance/appendServiceRecord.ts).
 */
export async function recordServiceMove(
  tx: Db,
  engine: Database["engine"],
  row: Row,
  operation: string,
  body: Record<string, unknown>,
): Promise<string> {
  const record = await appendServiceRecord(tx, engine, {
    org_did: row.orgDid,
    grantor_did: null,
    capability: null,
    operation,
    resource_type: "approval",
    resource_id: row.id,
    decision: "allowed",
    status: 200,
    request_hash: requestHash(body),
  });
  return record.id;
}

/**
 * Expires open requests whose `expires_at` has passed (or, once an escalation schema has had every
 * level, rejects them when its `on_exhausted` says so), each with a record whose actor is the
 * service. Returns how many it moved.
 */
export async function expireDueApprovals(db: Database, now = new Date()): Promise<number> {
  const due = await db.read.approvalRequest.findMany({
    where: { status: { in: ["pending", "delegated"] }, expiresAt: { lte: now } },
    orderBy: { expiresAt: "asc" },
    take: BATCH,
  });
  let moved = 0;
  for (const row of due) {
    await db.writeTx(async (tx) => {
      const current = await tx.approvalRequest.findUnique({ where: { id: row.id } });
      if (!current || (current.status !== "pending" && current.status !== "delegated")) return;
      const schema = current.escalationSchema as EscalationSchema | null;
      const reject = schema?.on_exhausted === "reject" && current.status === "pending";
      const provenanceId = await recordServiceMove(
        tx,
        db.engine,
        current,
        reject ? "APPROVAL_REJECT escalation_exhausted" : "APPROVAL_EXPIRE",
        { approval_id: current.id, expires_at: current.expiresAt.toISOString() },
      );
      await settleApproval(tx, current, reject ? "rejected" : "expired", {
        respondedBy: current.orgDid,
        respondedAt: now,
        endReason: reject ? "escalation_exhausted" : "expired",
        decisionProvenanceId: provenanceId,
      });
      moved++;
    });
  }
  return moved;
}

/**
 * Moves pending requests whose escalation delay has passed to the next level of approvers
 * (named passports, or a console role), recording each move and putting `approval.escalated` on
 * the bus (so a Slack or e-mail bridge can tell the new approvers); the level after that, if any,
 * is due `after_seconds` later.
 */
export async function escalateDueApprovals(db: Database, now = new Date()): Promise<number> {
  const due = await db.read.approvalRequest.findMany({
    where: { status: "pending", nextEscalationAt: { lte: now } },
    orderBy: { nextEscalationAt: "asc" },
    take: BATCH,
  });
  let moved = 0;
  for (const row of due) {
    await db.writeTx(async (tx) => {
      const schema = row.escalationSchema as EscalationSchema | null;
      const level = schema?.levels[row.escalationLevel];
      if (!schema || !level) {
        await tx.approvalRequest.updateMany({ where: { id: row.id }, data: { nextEscalationAt: null } });
        return;
      }
      const following = schema.levels[row.escalationLevel + 1];
      const next = following ? new Date(now.getTime() + following.after_seconds * 1000) : null;
      const { count } = await tx.approvalRequest.updateMany({
        where: { id: row.id, status: "pending", escalationLevel: row.escalationLevel },
        data: {
          escalationLevel: row.escalationLevel + 1,
          approverDids: Array.isArray(level.approvers) ? `|${level.approvers.join("|")}|` : null,
          approverRole: Array.isArray(level.approvers) ? null : level.approvers,
          approverPassportId: Array.isArray(level.approvers) ? level.approvers[0] : null,
          nextEscalationAt: next && next < row.expiresAt ? next : null,
        },
      });
      if (count === 0) return;
      approvalChanged(tx, row);
      const provenanceId = await recordServiceMove(tx, db.engine, row, "APPROVAL_ESCALATE", {
        approval_id: row.id,
        level: row.escalationLevel + 1,
        approvers: level.approvers,
      });
      const escalated = await tx.approvalRequest.findUniqueOrThrow({ where: { id: row.id } });
      await putPlatformEvent(tx, db.engine, row.orgDid, {
        type: "approval.escalated",
        payload: {
          ...approvalEventPayload(approvalView(escalated)),
          escalation_level: escalated.escalationLevel,
          approvers: level.approvers,
          next_escalation_at: escalated.nextEscalationAt?.toISOString() ?? null,
          provenance_id: provenanceId,
        },
      });
      moved++;
    });
  }
  return moved;
}

/**
 * Cancels open requests of runs that have ended (cancelled, failed, completed) without them: a
 * decision never resumes an ended run. A run's requests carry its execution id as `task_id`.
 */
export async function cancelApprovalsOfEndedRuns(db: Database): Promise<number> {
  const rows = await db.read.$queryRawUnsafe<{ id: string }[]>(
    `SELECT a."id" FROM "approval_request" a JOIN "async_execution" e ON e."id" = a."task_id"
      WHERE a."waiter_kind" = 'execution' AND a."status" IN ('pending', 'delegated')
        AND e."status" IN ('completed', 'failed', 'cancelled')
      LIMIT ${BATCH}`,
  );
  let moved = 0;
  for (const { id } of rows) {
    await db.writeTx(async (tx) => {
      const row = await tx.approvalRequest.findUnique({ where: { id } });
      if (!row || (row.status !== "pending" && row.status !== "delegated")) return;
      const provenanceId = await recordServiceMove(tx, db.engine, row, "APPROVAL_CANCEL execution_ended", {
        approval_id: id,
        execution_id: row.taskId,
      });
      await settleApproval(tx, row, "cancelled", {
        respondedAt: new Date(),
        endReason: "execution_ended",
        decisionProvenanceId: provenanceId,
      });
      moved++;
    });
  }
  return moved;
}
