import { createHash } from "node:crypto";
import canonicalize from "canonicalize";
import type { ApprovalRequest as Row } from "../db/generated/sqlite/client";
import type { ApprovalRequest, EscalationSchema, RiskLevel } from "./schemas";

/** SHA-256 (hex) of the RFC 8785 canonical JSON of `params`: what a decision and a grant are bound to. */
export function paramsHash(params: unknown): string {
  return createHash("sha256")
    .update(canonicalize(params ?? {}) ?? "null", "utf8")
    .digest("hex");
}

/** A stored request as the API answers it (ApprovalRequest), plus the waiter's reference for waiters. */
export function approvalView(row: Row): ApprovalRequest & { waiter_ref: string } {
  return {
    id: row.id,
    task_id: row.taskId,
    agent_id: row.agentId,
    status: row.status as ApprovalRequest["status"],
    created_at: row.createdAt.toISOString(),
    requester_passport_id: row.requesterPassportId,
    ...(row.approverPassportId ? { approver_passport_id: row.approverPassportId } : {}),
    action_description: row.actionDescription,
    risk_level: row.riskLevel as RiskLevel,
    risk_factors: row.riskFactors as ApprovalRequest["risk_factors"],
    request_data: row.requestData as Record<string, unknown>,
    responded_by: row.respondedBy,
    response_comment: row.responseComment,
    modified_params: (row.modifiedParams as Record<string, unknown> | null) ?? null,
    alternatives: row.alternatives as Record<string, unknown>[],
    responded_at: row.respondedAt?.toISOString() ?? null,
    expires_at: row.expiresAt.toISOString(),
    escalation_schema: (row.escalationSchema as EscalationSchema | null) ?? null,
    conversation_id: row.conversationId,
    delegated_to: row.delegatedTo,
    override_action: row.overrideAction,
    escalation_level: row.escalationLevel,
    decision_hash: row.decisionHash,
    step_up: row.stepUp as ApprovalRequest["step_up"],
    end_reason: row.endReason,
    provenance_id: row.provenanceId,
    decision_provenance_id: row.decisionProvenanceId,
    waiter_ref: row.waiterRef ?? "",
  };
}

/** The view without the waiter's reference (what /v1 and the console answer). */
export function publicApprovalView(row: Row): ApprovalRequest {
  const { waiter_ref: _ref, ...view } = approvalView(row);
  return view;
}
