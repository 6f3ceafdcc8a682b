import type { z } from "zod";
import type { Db } from "../db/client";
import type { LearningProposal } from "../db/generated/sqlite/client";
import type { Principal } from "../governance/principal";
import { keyset, olderThan } from "../http/cursor";
import type { LearningProposalListQuery } from "./schemas";
import { proposalView } from "./views";

/** The organization's proposals, newest first, filtered by state, kind and target. */
export async function listProposals(
  db: Db,
  principal: Principal,
  query: z.output<typeof LearningProposalListQuery>,
  secret: Buffer,
) {
  const { after, take, page } = keyset<LearningProposal>(secret, "learning_proposals", query, (last) => [
    last.createdAt.toISOString(),
    last.id,
  ]);
  const rows = await db.learningProposal.findMany({
    where: {
      orgDid: principal.orgDid,
      ...(query.approval_state ? { approvalState: query.approval_state } : {}),
      ...(query.kind ? { kind: query.kind } : {}),
      ...(query.target ? { target: query.target } : {}),
      ...olderThan(after, "createdAt", "id"),
    },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take,
  });
  const { items, pagination } = page(rows);
  return { data: items.map(proposalView), pagination };
}
