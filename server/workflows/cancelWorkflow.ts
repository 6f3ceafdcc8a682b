import type { Db } from "../db/client";
import { IllegalTransition, NotFound } from "../errors";
import type { Principal } from "../governance/principal";
import type { RevocationHook } from "../identity/revocationHooks";
import { endWorkflow } from "./advanceWorkflow";
import { getWorkflow } from "./workflows";

/**
 * Cancels a running workflow: nodes that had not run are skipped, those waiting for an approval
 * too, runs still going are cancelled (their nodes fail), and its delegation ends. A workflow
 * that has ended is 409 naming both states.
 */
export async function cancelWorkflow(tx: Db, principal: Principal, id: string) {
  const workflow = await tx.workflow.findFirst({ where: { id, orgDid: principal.orgDid } });
  if (!workflow) throw NotFound("workflow", id);
  const ended = await endWorkflow(tx, workflow, "cancelled", {
    code: "cancelled",
    message: "The workflow was cancelled.",
    cancelled_by: principal.actorDid,
  });
  if (!ended) {
    const now = await tx.workflow.findUniqueOrThrow({ where: { id }, select: { status: true } });
    throw IllegalTransition("workflow", now.status, "cancelled");
  }
  return getWorkflow(tx, principal, id);
}

/**
 * The revocation hook: a workflow whose delegation was revoked (directly, or through the
 * starter's delegation it derives from: revocations cascade to it) is cancelled in the revoking
 * transaction, with the cause.
 */
export const cancelWorkflowsOfRevokedDelegations: RevocationHook = async (tx, revokedIds) => {
  const rows = await tx.workflow.findMany({ where: { delegationId: { in: [...revokedIds] }, status: "running" } });
  for (const w of rows) await endWorkflow(tx, w, "cancelled", cancelledByRevocation);
};

export const cancelledByRevocation = {
  code: "delegation_revoked",
  message: "The delegation this workflow acts under (or one it derives from) was revoked.",
};
