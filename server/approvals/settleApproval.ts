import type { Db } from "../db/client";
import type { ApprovalRequest as Row } from "../db/generated/sqlite/client";
import { domainError, IllegalTransition } from "../errors";
import { approvalChanged } from "./approvalChanged";
import { putPlatformEvent } from "../events/platformEvents";
import { approvalEventPayload } from "./requestApproval";
import { OPEN_APPROVAL_STATUSES, type ApprovalStatus } from "./schemas";
import { approvalView } from "./views";
import { approvalWaiter } from "./waiters";

/** The fields a settling move writes besides the status. */
export type SettleData = Partial<
  Pick<
    Row,
    | "respondedBy"
    | "responseComment"
    | "respondedAt"
    | "delegatedTo"
    | "overrideAction"
    | "decisionHash"
    | "stepUp"
    | "endReason"
    | "approverPassportId"
    | "approverDids"
    | "approverRole"
    | "decisionProvenanceId"
  >
> & { modifiedParams?: object };

/**
 * The clock checked where it matters: an open request past its `expires_at` is expired, whether
 * or not the worker's sweep has marked it yet, so it cannot be decided (409 naming `expired`);
 * nor can the grant of a decision be used after it (`to` is then `used`).
 */
export function assertNotExpired(row: Row, to: ApprovalStatus | "used", now: Date): void {
  const open = (OPEN_APPROVAL_STATUSES as readonly string[]).includes(row.status);
  if ((open || to === "used") && row.expiresAt.getTime() <= now.getTime())
    throw domainError(
      "illegal_state_transition",
      `The approval request expired at ${row.expiresAt.toISOString()} and cannot become ${to}.`,
      { current_state: "expired", requested_state: to, expires_at: row.expiresAt.toISOString() },
    );
}

/**
 * Moves a request out of an open state (pending, delegated), in one conditional UPDATE so that of
 * two concurrent moves (a decision and the expiry, two approvers) exactly one wins and the other
 * gets the 409 naming both states. A final state calls the request's waiter and puts
 * `approval.decided` or `approval.expired` on the bus, in the same transaction.
 */
export async function settleApproval(tx: Db, row: Row, to: ApprovalStatus, data: SettleData): Promise<Row> {
  if (!(OPEN_APPROVAL_STATUSES as readonly string[]).includes(row.status))
    throw IllegalTransition("approval request", row.status, to);
  // delegated → only the delegate's answers, expiry or cancellation (api-contract "State transitions").
  if (row.status === "delegated" && (to === "delegated" || to === "overridden"))
    throw IllegalTransition("approval request", row.status, to);
  const { count } = await tx.approvalRequest.updateMany({
    where: { id: row.id, status: row.status },
    data: { ...data, status: to },
  });
  if (count === 0) {
    const now = await tx.approvalRequest.findUniqueOrThrow({ where: { id: row.id } });
    throw IllegalTransition("approval request", now.status, to);
  }
  const settled = await tx.approvalRequest.findUniqueOrThrow({ where: { id: row.id } });
  approvalChanged(tx, settled);
  if (to === "delegated") {
    await putPlatformEvent(tx, undefined, row.orgDid, {
      type: "approval.decided",
      payload: approvalEventPayload(approvalView(settled)),
    });
    return settled;
  }
  const view = approvalView(settled);
  await putPlatformEvent(tx, undefined, row.orgDid, {
    type: to === "expired" ? "approval.expired" : "approval.decided",
    payload: approvalEventPayload(view),
  });
  if (settled.waiterKind) await approvalWaiter(settled.waiterKind)?.onSettled(tx, view);
  return settled;
}
