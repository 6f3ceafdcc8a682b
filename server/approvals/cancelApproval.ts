import type { Db } from "../db/client";
import { Forbidden } from "../errors";
import type { Principal } from "../governance/principal";
import { findApproval } from "./getApproval";
import { settleApproval } from "./settleApproval";
import { publicApprovalView } from "./views";

/** The requester withdraws an open request (pending or delegated); anyone else is refused (403). */
export async function cancelApproval(db: Db, principal: Principal, id: string) {
  const row = await findApproval(db, principal, id);
  if (row.requesterPassportId !== principal.actorDid)
    throw Forbidden("Only the requester can cancel a request.", { reason: "not_requester" });
  const settled = await settleApproval(db, row, "cancelled", {
    endReason: "requester",
    respondedAt: new Date(),
  });
  return publicApprovalView(settled);
}

/**
 * The revocation hook: requests asked under a revoked delegation cannot be acted on any more, so
 * the open ones are cancelled in the revoking transaction, with the cause.
 */
export async function cancelApprovalsOfRevokedDelegations(tx: Db, revokedIds: readonly string[]): Promise<void> {
  const open = await tx.approvalRequest.findMany({
    where: { requesterDelegationId: { in: [...revokedIds] }, status: { in: ["pending", "delegated"] } },
  });
  for (const row of open)
    await settleApproval(tx, row, "cancelled", { endReason: "delegation_revoked", respondedAt: new Date() });
}
