import type { Db } from "../db/client";
import { domainError, Forbidden, IllegalTransition } from "../errors";
import type { Principal } from "../governance/principal";
import { findApproval } from "./getApproval";
import type { ApprovalStatus } from "./schemas";
import { assertNotExpired } from "./settleApproval";
import { paramsHash } from "./views";

/**
 * A governed call under an approval's grant: allowed only with exactly the approved parameters
 * (their RFC 8785 canonical SHA-256 equals the decision's hash), and only to the requester's
 * delegation or one derived from it, and only until the request's `expires_at` (then 409). A call
 * with other arguments is refused (403 `approval_params_mismatch`), and the gate records the
 * refusal like any other.
 */
export async function useApprovalGrant(db: Db, principal: Principal, id: string, params: Record<string, unknown>) {
  const row = await findApproval(db, principal, id);
  const grant = await db.approvalGrant.findUnique({ where: { approvalId: id } });
  if (!grant) throw IllegalTransition("approval request", row.status, "used");
  if (!principal.chain.includes(row.requesterDelegationId) && principal.actorDid !== row.requesterPassportId)
    throw Forbidden("Only the requester may act under its approval.", { reason: "not_requester" });
  assertNotExpired(row, "used", new Date());
  const received = paramsHash(params);
  if (received !== grant.paramsHash)
    throw domainError(
      "approval_params_mismatch",
      `These parameters are not the ones approved in ${id}: the call is refused.`,
      { expected_hash: grant.paramsHash, received_hash: received },
    );
  await db.approvalGrant.update({ where: { approvalId: id }, data: { uses: { increment: 1 } } });
  return { approval_id: id, status: row.status as ApprovalStatus, params_hash: received, uses: grant.uses + 1 };
}
