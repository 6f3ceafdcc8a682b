import type { Db } from "../db/client";
import type { Principal } from "../governance/principal";
import { respondToApproval } from "../approvals/respondToApproval";
import { findProposal } from "./findProposal";
import { assertMove } from "./moveProposal";
import { proposalView } from "./views";

/**
 * Approves or rejects a pending proposal by answering its approval request, under the same rules
 * as the inbox (not the proposer, not an agent run, the request's assigned approvers only): the
 * request's waiter then moves the proposal, in this transaction. A proposal no longer pending is a
 * 409 naming both states.
 */
export async function decideProposal(
  db: Db,
  principal: Principal,
  id: string,
  decision: "approve" | "reject",
  comment?: string,
) {
  const row = await findProposal(db, principal.orgDid, id);
  assertMove(row, decision === "approve" ? "approved" : "rejected");
  const approval = await respondToApproval(db, principal, row.approvalId!, {
    decision,
    ...(comment ? { comment } : {}),
  });
  const after = await findProposal(db, principal.orgDid, id);
  return { proposal: proposalView(after), approval };
}
