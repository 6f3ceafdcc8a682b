import { defineOperation } from "../http/operation";
import { cancelApproval } from "./cancelApproval";
import { getApproval } from "./getApproval";
import { linkApprovalRecord, linkDecisionRecord } from "./linkApprovalRecord";
import { listApprovals } from "./listApprovals";
import { requestApproval } from "./requestApproval";
import { ADMIN_CAPABILITY, RESPOND_CAPABILITY, respondToApproval } from "./respondToApproval";
import * as s from "./schemas";
import { useApprovalGrant } from "./useApprovalGrant";

const tag = "Approvals";
const read = "svc_api:approvals:read";
const write = "svc_api:approvals:write";

export const listApprovalsOp = defineOperation({
  id: "listApprovals",
  method: "GET",
  path: "/v1/approvals",
  tag,
  summary: "List approval requests",
  description:
    "Newest first; with status=pending (or delegated) riskiest first, then newest: the inbox. mine=true keeps what you may decide.",
  capability: read,
  resourceType: "approval",
  query: s.ApprovalListQuery,
  response: s.ApprovalList,
  successStatus: 200,
  handler: (ctx) => listApprovals(ctx.db, ctx.principal, ctx.query, ctx.secret),
});

export const createApprovalOp = defineOperation({
  id: "createApproval",
  method: "POST",
  path: "/v1/approvals",
  tag,
  summary: "Ask for an approval",
  description:
    "Creates a pending request; the caller is its requester and may not decide it. expires_at defaults to 24 hours. Puts approval.requested on the bus.",
  capability: write,
  resourceType: "approval",
  body: s.ApprovalCreate,
  response: s.ApprovalRequest,
  successStatus: 201,
  problems: ["payload_too_large"],
  async handler(ctx) {
    const created = await requestApproval(ctx.db, ctx.principal, ctx.body);
    ctx.setResource(created.id);
    ctx.onRecord((tx, record) => linkApprovalRecord(tx, created.id, record.id));
    return { ...created };
  },
});

export const getApprovalOp = defineOperation({
  id: "getApproval",
  method: "GET",
  path: "/v1/approvals/{id}",
  tag,
  summary: "Get an approval request",
  capability: read,
  resourceType: "approval",
  params: s.ApprovalIdParams,
  response: s.ApprovalRequest,
  successStatus: 200,
  handler: (ctx) => getApproval(ctx.db, ctx.principal, ctx.params.id),
});

export const respondApprovalOp = defineOperation({
  id: "respondToApproval",
  method: "POST",
  path: "/v1/approvals/{id}/respond",
  tag,
  summary: "Decide an approval request",
  description: `approve, approve_with_modifications (modified_params), reject, delegate (delegated_to) or override (override_action, needs ${ADMIN_CAPABILITY}). Not by the requester, whatever credential they use (403 reason own_request: a chain through the requester's delegation, a chain the requester's derives from, or the same person or agent behind both, a console key counting as the member who minted it), nor through an agent's delegation (403 reason agent_chain); a request assigned to a console role only by members of that role. A high or critical request needs a chain with no agent's delegation (in the console: a passkey confirmation at most 5 minutes old). Past expires_at, swept or not, 409 naming expired. Puts approval.decided on the bus.`,
  capability: RESPOND_CAPABILITY,
  resourceType: "approval",
  params: s.ApprovalIdParams,
  body: s.ApprovalRespond,
  response: s.ApprovalRequest,
  successStatus: 200,
  problems: ["illegal_state_transition", "approval_step_up_required"],
  async handler(ctx) {
    ctx.setResource(ctx.params.id);
    const decided = await respondToApproval(ctx.db, ctx.principal, ctx.params.id, ctx.body);
    ctx.onRecord((tx, record) => linkDecisionRecord(tx, decided, record.id));
    return decided;
  },
});

export const cancelApprovalOp = defineOperation({
  id: "cancelApproval",
  method: "POST",
  path: "/v1/approvals/{id}/cancel",
  tag,
  summary: "Cancel your approval request",
  description: "Only the requester, only while pending or delegated.",
  capability: write,
  resourceType: "approval",
  params: s.ApprovalIdParams,
  response: s.ApprovalRequest,
  successStatus: 200,
  problems: ["illegal_state_transition"],
  async handler(ctx) {
    ctx.setResource(ctx.params.id);
    return cancelApproval(ctx.db, ctx.principal, ctx.params.id);
  },
});

export const useApprovalGrantOp = defineOperation({
  id: "useApprovalGrant",
  method: "POST",
  path: "/v1/approvals/{id}/use",
  tag,
  summary: "Act under an approval's grant",
  description:
    "Checks a call's parameters against the approved ones (the RFC 8785 canonical SHA-256 of modified_params, or of request_data when approved unchanged): equal, the use is counted; different, 403 approval_params_mismatch, recorded. After the request's expires_at, 409 naming expired.",
  capability: write,
  resourceType: "approval",
  params: s.ApprovalIdParams,
  body: s.ApprovalGrantUse,
  response: s.ApprovalGrantUsed,
  successStatus: 200,
  problems: ["illegal_state_transition", "approval_params_mismatch"],
  async handler(ctx) {
    ctx.setResource(ctx.params.id);
    return useApprovalGrant(ctx.db, ctx.principal, ctx.params.id, ctx.body.params);
  },
});

export const approvalOperations = [
  listApprovalsOp,
  createApprovalOp,
  getApprovalOp,
  respondApprovalOp,
  cancelApprovalOp,
  useApprovalGrantOp,
];
