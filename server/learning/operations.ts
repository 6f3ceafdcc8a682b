import { linkDecisionRecord } from "../approvals/linkApprovalRecord";
import { defineOperation } from "../http/operation";
import { applyProposal, rollbackProposal } from "./applyProposal";
import { createProposal } from "./createProposal";
import { decideProposal } from "./decideProposal";
import { getProposal } from "./getProposal";
import { linkProposalRecord, linkTuningActionRecord } from "./linkProposalRecord";
import { listProposals } from "./listProposals";
import * as s from "./schemas";

const tag = "Learning";
const read = "svc_api:learning:read";
const propose = "svc_api:learning:propose";
const decide = "svc_api:learning:decide";

export const createLearningProposalOp = defineOperation({
  id: "createLearningProposal",
  method: "POST",
  path: "/v1/svcos/learning/proposals",
  tag,
  summary: "Propose a change",
  description:
    "Records a proposal (pending) and raises its approval request in the inbox; the proposer cannot decide it. The kind's owning area validates target and proposed; `previous` is the target's state now. Unknown explain keys are stripped; every evidence reference must resolve, else 400. Puts learning.proposed on the bus.",
  capability: propose,
  resourceType: "learning_proposal",
  body: s.LearningProposalCreate,
  response: s.LearningProposal,
  successStatus: 201,
  problems: ["not_found"],
  async handler(ctx) {
    const created = await createProposal(ctx.db, ctx.principal, ctx.body);
    ctx.setResource(created.id);
    const answer = { ...created };
    ctx.onRecord(async (tx, record) => {
      await linkProposalRecord(tx, created, record.id);
      answer.provenance_id = record.id;
    });
    return answer;
  },
});

export const listLearningProposalsOp = defineOperation({
  id: "listLearningProposals",
  method: "GET",
  path: "/v1/svcos/learning/proposals",
  tag,
  summary: "List learning proposals",
  description: "Newest first, filtered by approval_state, kind and target.",
  capability: read,
  resourceType: "learning_proposal",
  query: s.LearningProposalListQuery,
  response: s.LearningProposalList,
  successStatus: 200,
  handler: (ctx) => listProposals(ctx.db, ctx.principal, ctx.query, ctx.secret),
});

export const getLearningProposalOp = defineOperation({
  id: "getLearningProposal",
  method: "GET",
  path: "/v1/svcos/learning/proposals/{id}",
  tag,
  summary: "Get a learning proposal",
  description: "With its tuning actions (applies and rollbacks).",
  capability: read,
  resourceType: "learning_proposal",
  params: s.ProposalIdParams,
  response: s.LearningProposalDetail,
  successStatus: 200,
  handler: (ctx) => getProposal(ctx.db, ctx.principal, ctx.params.id),
});

function decideOp(decision: "approve" | "reject") {
  return defineOperation({
    id: decision === "approve" ? "approveLearningProposal" : "rejectLearningProposal",
    method: "POST",
    path: `/v1/svcos/learning/proposals/{id}/${decision}`,
    tag,
    summary: decision === "approve" ? "Approve a proposal" : "Reject a proposal",
    description: `Answers the proposal's approval request (${decision}), under the inbox's rules: not the proposer, not an agent run. pending → ${decision === "approve" ? "approved" : "rejected"}; any other state is 409.`,
    capability: decide,
    resourceType: "learning_proposal",
    params: s.ProposalIdParams,
    body: s.LearningDecision,
    bodyOptional: true,
    response: s.LearningProposal,
    successStatus: 200,
    problems: ["illegal_state_transition"],
    async handler(ctx) {
      ctx.setResource(ctx.params.id);
      const { proposal, approval } = await decideProposal(
        ctx.db,
        ctx.principal,
        ctx.params.id,
        decision,
        ctx.body?.comment,
      );
      ctx.onRecord((tx, record) => linkDecisionRecord(tx, approval, record.id));
      return proposal;
    },
  });
}

export const approveLearningProposalOp = decideOp("approve");
export const rejectLearningProposalOp = decideOp("reject");

function changeOp(action: "apply" | "rollback") {
  return defineOperation({
    id: action === "apply" ? "applyLearningProposal" : "rollbackLearningProposal",
    method: "POST",
    path: `/v1/svcos/learning/proposals/{id}/${action}`,
    tag,
    summary: action === "apply" ? "Apply an approved proposal" : "Roll an applied proposal back",
    description:
      action === "apply"
        ? "approved → applied: sets `proposed` on the target and records a tuning action whose payload embeds the explain metadata. 409 when the proposal is not approved, or when the target is no longer in its `previous` state. Puts learning.applied on the bus."
        : "applied → rolled_back: restores `previous` exactly. 409 when the proposal is not applied, or when the target is no longer in its applied state. Puts learning.rolled_back on the bus.",
    capability: decide,
    resourceType: "learning_proposal",
    params: s.ProposalIdParams,
    response: s.LearningProposalDetail,
    successStatus: 200,
    problems: ["illegal_state_transition", "learning_target_changed", "conflict"],
    async handler(ctx) {
      ctx.setResource(ctx.params.id);
      const change = action === "apply" ? applyProposal : rollbackProposal;
      const { tuning_action } = await change(ctx.db, ctx.principal, ctx.params.id);
      const detail = await getProposal(ctx.db, ctx.principal, ctx.params.id);
      ctx.onRecord(async (tx, record) => {
        await linkTuningActionRecord(tx, tuning_action.id, record.id);
        // The answer names the record too (it is appended after the handler returns).
        for (const a of detail.tuning_actions) if (a.id === tuning_action.id) a.provenance_id = record.id;
      });
      return detail;
    },
  });
}

export const applyLearningProposalOp = changeOp("apply");
export const rollbackLearningProposalOp = changeOp("rollback");

export const learningOperations = [
  createLearningProposalOp,
  listLearningProposalsOp,
  getLearningProposalOp,
  approveLearningProposalOp,
  rejectLearningProposalOp,
  applyLearningProposalOp,
  rollbackLearningProposalOp,
];
