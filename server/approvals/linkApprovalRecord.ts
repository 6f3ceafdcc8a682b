import type { Db } from "../db/client";
import { OPEN_APPROVAL_STATUSES, type ApprovalRequest } from "./schemas";
import { approvalWaiter } from "./waiters";

/**
 * Points a request at the provenance record of the call that raised it, in that call's
 * transaction. The record is appended after the request is written (its id is only known then),
 * so whoever raised it (an approval call, a learning proposal, a run) links it here: only this
 * area writes its table.
 */
export async function linkApprovalRecord(tx: Db, approvalId: string, recordId: string): Promise<void> {
  await tx.approvalRequest.update({ where: { id: approvalId }, data: { provenanceId: recordId } });
}

/**
 * Points a decided request at its decision's record, in the deciding call's transaction, and tells
 * whoever waits on a final decision (a workflow's approval node) that record too: it is written
 * after the decision, so the waiter's `onSettled` did not know it yet.
 */
export async function linkDecisionRecord(
  tx: Db,
  decided: Pick<ApprovalRequest, "id" | "status">,
  recordId: string,
): Promise<void> {
  const row = await tx.approvalRequest.update({
    where: { id: decided.id },
    data: { decisionProvenanceId: recordId },
    select: { orgDid: true, waiterKind: true, waiterRef: true },
  });
  if (row.waiterKind && row.waiterRef && !(OPEN_APPROVAL_STATUSES as readonly string[]).includes(decided.status))
    await approvalWaiter(row.waiterKind)?.onDecisionRecorded?.(
      tx,
      { id: decided.id, org_did: row.orgDid, waiter_ref: row.waiterRef },
      recordId,
    );
}
