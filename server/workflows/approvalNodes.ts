import { requestApproval } from "../approvals/requestApproval";
import type { ApprovalWaiter } from "../approvals/waiters";
import type { Db } from "../db/client";
import type { WorkflowNode } from "../db/generated/sqlite/client";
import { DomainError } from "../errors";
import { delegationPrincipal } from "../identity/authenticate";
import { settleNode, workflowIdOf } from "./advanceWorkflow";
import type { ApprovalNodeFields } from "./schemas";
import type { NodeConfig } from "./views";
import { workflowChanged } from "./workflowChanged";
import type { z } from "zod";

/** The waiter kind of approval nodes (server/approvals/waiters.ts). */
export const WORKFLOW_NODE_WAITER = "workflow_node";
/** Decisions that let the workflow go on; rejected, expired and cancelled requests fail the node. */
const GOES_ON = new Set(["approved", "approved_with_modifications", "overridden"]);

/**
 * An approval node files its request, asked by the workflow's delegation (its actor is the
 * starter, who therefore cannot decide it), with the node as the request's waiter, and waits
 * (`waiting_approval`) for the decision. Filing is idempotent per node: a job run again after a
 * restart finds the request it made. A request the approvals area refuses fails the node.
 */
export async function startApprovalNode(
  tx: Db,
  node: WorkflowNode,
  workflow: { orgDid: string; delegationId: string; id: string },
): Promise<void> {
  const fields = ((node.config ?? {}) as NodeConfig).approval as z.output<typeof ApprovalNodeFields>;
  const startedAt = new Date();
  try {
    const requester = await delegationPrincipal(tx, workflow.delegationId);
    const approval = await requestApproval(
      tx,
      requester,
      { ...fields, task_id: fields.task_id ?? node.id, agent_id: fields.agent_id ?? workflow.id },
      { waiter: { kind: WORKFLOW_NODE_WAITER, ref: node.id } },
    );
    const { count } = await tx.workflowNode.updateMany({
      where: { id: node.id, status: "pending" },
      data: {
        status: "waiting_approval",
        approvalId: approval.id,
        provenanceId: approval.provenance_id ?? null,
        startedAt,
        input: (fields.request_data ?? {}) as object,
      },
    });
    if (count > 0) workflowChanged(tx, workflow);
  } catch (e) {
    if (!(e instanceof DomainError) || e.status >= 500) throw e;
    await settleNode(
      tx,
      node.id,
      { status: "failed", error: { code: e.code, status: e.status, message: e.message, ...e.extra }, startedAt },
      ["pending"],
    );
  }
}

/**
 * The waiter of approval nodes: the decision settles the node in the deciding transaction. An
 * approval (with modifications: the modified parameters are the node's output, as a run would get
 * them) or an override completes it; a rejection, expiry or cancellation fails it, so the
 * workflow follows the node's failure edge or fails. Its record is the decision's.
 */
export const approvalNodeWaiter: ApprovalWaiter = {
  async onSettled(db, approval) {
    const decided = {
      status: approval.status,
      approval_id: approval.id,
      responded_by: approval.responded_by ?? null,
      comment: approval.response_comment ?? null,
      decision_hash: approval.decision_hash ?? null,
    };
    const provenanceId = approval.decision_provenance_id ?? null;
    if (GOES_ON.has(approval.status)) {
      const params =
        approval.status === "approved_with_modifications" ? approval.modified_params : (approval.request_data ?? {});
      await settleNode(db, approval.waiter_ref, {
        status: "completed",
        output: { ...decided, params: params ?? {}, override_action: approval.override_action ?? null },
        provenanceId,
      });
    } else {
      await settleNode(db, approval.waiter_ref, {
        status: "failed",
        error: {
          code: `approval_${approval.status}`,
          message: `The approval request was ${approval.status}.`,
          ...decided,
        },
        provenanceId,
      });
    }
  },
  // A decision made through the gate gets its record after it settled the node: the node's record
  // (the one its panel verifies) becomes the decision's, not the request's.
  async onDecisionRecorded(db, approval, recordId) {
    const { count } = await db.workflowNode.updateMany({
      where: { id: approval.waiter_ref, approvalId: approval.id },
      data: { provenanceId: recordId },
    });
    if (count > 0) workflowChanged(db, { id: workflowIdOf(approval.waiter_ref), orgDid: approval.org_did });
  },
};
