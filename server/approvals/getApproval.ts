import type { Db } from "../db/client";
import { NotFound } from "../errors";
import type { Principal } from "../governance/principal";
import { publicApprovalView } from "./views";

/** One request of the caller's organization (another organization's is a 404, as an unknown id). */
export async function findApproval(db: Db, principal: Principal, id: string) {
  const row = await db.approvalRequest.findFirst({ where: { id, orgDid: principal.orgDid } });
  if (!row) throw NotFound("approval request", id);
  return row;
}

export async function getApproval(db: Db, principal: Principal, id: string) {
  return publicApprovalView(await findApproval(db, principal, id));
}
