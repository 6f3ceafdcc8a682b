import { linkApprovalRecord } from "../approvals/linkApprovalRecord";
import type { Db } from "../db/client";

/**
 * Points a new proposal, and the approval request it raised, at the record of the call (or the
 * service's move) that made it, in that transaction: the record is appended after both rows.
 */
export async function linkProposalRecord(
  tx: Db,
  proposal: { id: string; approval_id: string | null },
  recordId: string,
): Promise<void> {
  await tx.learningProposal.update({ where: { id: proposal.id }, data: { provenanceId: recordId } });
  if (proposal.approval_id) await linkApprovalRecord(tx, proposal.approval_id, recordId);
}

/** Points a tuning action (an apply or a rollback) at the record of the call that made it. */
export async function linkTuningActionRecord(tx: Db, tuningActionId: string, recordId: string): Promise<void> {
  await tx.learningTuningAction.update({ where: { id: tuningActionId }, data: { provenanceId: recordId } });
}
