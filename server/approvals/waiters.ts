import type { Db } from "../db/client";
import { processWide } from "../processWide";
import type { ApprovalRequest } from "./schemas";

/**
 * Who waits for an approval's outcome: a paused agent run (`execution`, this area's own), a
 * workflow's approval node (`workflow_node`), … A request created with `opts.waiter` names its
 * kind and a reference the waiter understands; when the request is decided, expires or is
 * cancelled, the waiter of that kind is called in the same transaction, so the outcome and what
 * follows from it (a re-enqueued run, a node moving on) commit together or not at all.
 */
export interface ApprovalWaiter {
  /** Called once, in the settling transaction, with the request as it now stands (final status). */
  onSettled(db: Db, approval: ApprovalRequest & { waiter_ref: string }): Promise<void>;
  /**
   * Called when a decision made through the gate (`respondToApproval`) has its provenance record,
   * in the same transaction, after `onSettled`: that record is written after the decision itself,
   * so `onSettled` does not know it yet (an expiry's or a cascade's record it does).
   */
  onDecisionRecorded?(
    db: Db,
    approval: { id: string; org_did: string; waiter_ref: string },
    recordId: string,
  ): Promise<void>;
}

// Shared by every copy of this module in the process (Next.js bundles its own).
const waiters = processWide("approvals.waiters", () => new Map<string, ApprovalWaiter>());

/** Registers the waiter of `kind` (server/areas.ts does, from each area's `approvalWaiters`). */
export function registerApprovalWaiter(kind: string, waiter: ApprovalWaiter): void {
  waiters.set(kind, waiter);
}

/** The waiter registered for `kind`, if any. */
export function approvalWaiter(kind: string): ApprovalWaiter | undefined {
  return waiters.get(kind);
}
