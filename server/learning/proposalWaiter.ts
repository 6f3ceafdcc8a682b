import type { ApprovalWaiter } from "../approvals/waiters";
import { learningApplier } from "./appliers";
import { moveProposal } from "./moveProposal";
import type { LearningKind } from "./appliers";

/** Decisions that approve a proposal; every other final status (rejected, overridden, expired, cancelled) rejects it. */
const APPROVES = new Set(["approved", "approved_with_modifications"]);

/**
 * The waiter of learning proposals: the inbox's decision moves the proposal in the deciding
 * transaction. Approved (or approved with modifications: a `proposed` object in the modified
 * parameters replaces the proposal's, validated by its applier) → approved. Rejected, overridden,
 * expired or cancelled → rejected: nothing is left to answer a pending proposal, and a new one can
 * be made.
 */
export const proposalWaiter: ApprovalWaiter = {
  async onSettled(db, approval) {
    const row = await db.learningProposal.findUnique({ where: { id: approval.waiter_ref } });
    if (!row || row.approvalState !== "pending") return;
    const by = approval.responded_by ?? row.orgDid;
    if (!APPROVES.has(approval.status)) {
      await moveProposal(db, row, "rejected", by);
      return;
    }
    const modified = approval.status === "approved_with_modifications" ? approval.modified_params?.proposed : undefined;
    if (modified && typeof modified === "object" && !Array.isArray(modified)) {
      const proposed = modified as Record<string, unknown>;
      await learningApplier(row.kind as LearningKind)?.validate(db, row.orgDid, row.target, proposed);
      await moveProposal(db, row, "approved", by, { proposed: JSON.stringify(proposed) });
    } else {
      await moveProposal(db, row, "approved", by);
    }
  },
};
