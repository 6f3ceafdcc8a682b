import type { Db } from "../db/client";
import type { Principal } from "../governance/principal";
import { findProposal } from "./findProposal";
import { proposalView, tuningActionView } from "./views";

/** One proposal of the caller's organization with its tuning actions (applies and rollbacks), oldest first. */
export async function getProposal(db: Db, principal: Principal, id: string) {
  const row = await findProposal(db, principal.orgDid, id);
  const actions = await db.learningTuningAction.findMany({
    where: { proposalId: row.id },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });
  return { ...proposalView(row), tuning_actions: actions.map(tuningActionView) };
}
