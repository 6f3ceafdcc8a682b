import type { Db } from "../db/client";
import type { LearningProposal as Row } from "../db/generated/sqlite/client";
import { IllegalTransition } from "../errors";
import type { ApprovalState } from "./schemas";

/** The moves api-contract.md allows: none → pending → approved | rejected; approved → applied → rolled_back. */
const NEXT: Record<ApprovalState, readonly ApprovalState[]> = {
  none: ["pending"],
  pending: ["approved", "rejected"],
  approved: ["applied"],
  rejected: [],
  applied: ["rolled_back"],
  rolled_back: [],
};

/** Refuses (409 naming both states) a move the contract does not allow from the row's state. */
export function assertMove(row: Pick<Row, "approvalState">, to: ApprovalState): void {
  if (!NEXT[row.approvalState as ApprovalState]?.includes(to))
    throw IllegalTransition("learning proposal", row.approvalState, to);
}

/**
 * Moves a proposal in one conditional UPDATE, so that of two concurrent moves (an apply and a
 * second apply, a decision and the expiry) exactly one wins and the other gets the 409.
 */
export async function moveProposal(tx: Db, row: Row, to: ApprovalState, by: string, data: { proposed?: string } = {}) {
  assertMove(row, to);
  const { count } = await tx.learningProposal.updateMany({
    where: { id: row.id, approvalState: row.approvalState },
    data: { ...data, approvalState: to, changedAt: new Date(), changedBy: by },
  });
  if (count === 0) {
    const now = await tx.learningProposal.findUniqueOrThrow({ where: { id: row.id } });
    throw IllegalTransition("learning proposal", now.approvalState, to);
  }
  return tx.learningProposal.findUniqueOrThrow({ where: { id: row.id } });
}
