import type { z } from "zod";
import { requestApproval } from "../approvals/requestApproval";
import { MAX_APPROVAL_TTL_SECONDS } from "../approvals/schemas";
import type { Db } from "../db/client";
import { ValidationFailed } from "../errors";
import { putPlatformEvent } from "../events/platformEvents";
import type { Principal } from "../governance/principal";
import { newId } from "../ids";
import { learningApplier } from "./appliers";
import { resolveEvidence } from "./resolveEvidence";
import type { LearningExplainMetadata, LearningProposalCreate } from "./schemas";
import { proposalView } from "./views";

/** The waiter kind of learning proposals (server/approvals/waiters.ts). */
export const LEARNING_PROPOSAL_WAITER = "learning_proposal";
/** The `agent_id` of their approval requests: the learning area itself, not an agent. */
export const LEARNING_APPROVAL_AGENT = "svc:learning";

/**
 * Records a proposal and raises its approval request in the inbox (the proposer is its requester,
 * so cannot decide it), in the caller's transaction. The kind's applier (the area owning the
 * target) validates the target and the proposed state and gives the target's current state,
 * stored as `previous`. The explain metadata is validated by the schema (unknown keys already
 * stripped); each evidence reference must resolve (400 naming the ones that do not). Puts
 * `learning.proposed` on the bus.
 */
export async function createProposal(
  db: Db,
  principal: Principal,
  input: z.output<typeof LearningProposalCreate>,
  opts: { origin?: "api" | "worker"; now?: Date } = {},
) {
  const now = opts.now ?? new Date();
  const applier = learningApplier(input.kind);
  if (!applier)
    throw ValidationFailed([
      { field: "kind", code: "UNSUPPORTED_KIND", message: `No area of this service applies ${input.kind} proposals.` },
    ]);
  await applier.validate(db, principal.orgDid, input.target, input.proposed);
  const explain: LearningExplainMetadata | undefined = input.explain && { ...input.explain };
  if (explain) {
    // The service's own fields: the proposal's state says them.
    delete explain.approval_state;
    delete explain.changed_at;
    delete explain.changed_by;
    const errors = await resolveEvidence(db, principal.orgDid, explain.evidence_refs ?? []);
    if (explain.expiry) {
      const at = Date.parse(explain.expiry);
      if (at <= now.getTime() || at > now.getTime() + MAX_APPROVAL_TTL_SECONDS * 1000)
        errors.push({
          field: "explain.expiry",
          code: "OUT_OF_RANGE",
          message: `must be in the future, at most ${MAX_APPROVAL_TTL_SECONDS / 86_400} days ahead`,
        });
    }
    if (errors.length > 0) throw ValidationFailed(errors);
  }
  const previous = await applier.current(db, principal.orgDid, input.target);

  const id = newId("lrn");
  const approval = await requestApproval(
    db,
    principal,
    {
      task_id: id,
      agent_id: LEARNING_APPROVAL_AGENT,
      action_description: `Learning proposal: ${input.kind} of ${input.target} → ${JSON.stringify(input.proposed)}`,
      risk_level: "medium",
      request_data: {
        proposal_id: id,
        kind: input.kind,
        target: input.target,
        proposed: input.proposed,
        previous,
        ...(explain ? { explain } : {}),
      },
      ...(explain?.expiry ? { expires_at: explain.expiry } : {}),
    },
    { waiter: { kind: LEARNING_PROPOSAL_WAITER, ref: id }, now },
  );
  const row = await db.learningProposal.create({
    data: {
      id,
      orgDid: principal.orgDid,
      kind: input.kind,
      target: input.target,
      proposed: JSON.stringify(input.proposed),
      previous: JSON.stringify(previous),
      explain: explain ? JSON.stringify(explain) : null,
      approvalState: "pending",
      approvalId: approval.id,
      proposedBy: principal.actorDid,
      origin: opts.origin ?? "api",
      changedAt: now,
      changedBy: principal.actorDid,
      createdAt: now,
    },
  });
  const view = proposalView(row);
  await putPlatformEvent(db, undefined, principal.orgDid, {
    type: "learning.proposed",
    payload: learningEventPayload(view),
  });
  return view;
}

/** What the bus carries about a proposal: what it changes and where it stands, not its evidence. */
export function learningEventPayload(p: ReturnType<typeof proposalView>): Record<string, unknown> {
  return {
    proposal_id: p.id,
    kind: p.kind,
    target: p.target,
    approval_state: p.approval_state,
    approval_id: p.approval_id,
    proposed: p.proposed,
    previous: p.previous,
    source: p.explain.source ?? null,
    changed_by: p.changed_by,
  };
}
