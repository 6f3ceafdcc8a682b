import type { LearningProposal as Row, LearningTuningAction as ActionRow } from "../db/generated/sqlite/client";
import type { LearningExplainMetadata, LearningProposal } from "./schemas";

/** The stored explain metadata with the proposal's own state, as every answer and tuning action carries it. */
export function explainView(row: Row): LearningExplainMetadata {
  const given = (row.explain ? JSON.parse(row.explain) : {}) as LearningExplainMetadata;
  return {
    ...given,
    approval_state: row.approvalState as LearningExplainMetadata["approval_state"],
    changed_at: row.changedAt.toISOString(),
    changed_by: row.changedBy,
  };
}

export function proposalView(row: Row): LearningProposal {
  return {
    id: row.id,
    kind: row.kind as LearningProposal["kind"],
    target: row.target,
    proposed: JSON.parse(row.proposed) as Record<string, unknown>,
    previous: JSON.parse(row.previous) as Record<string, unknown>,
    approval_state: row.approvalState as LearningProposal["approval_state"],
    approval_id: row.approvalId,
    explain: explainView(row),
    proposed_by: row.proposedBy,
    origin: row.origin as LearningProposal["origin"],
    provenance_id: row.provenanceId,
    changed_at: row.changedAt.toISOString(),
    changed_by: row.changedBy,
    created_at: row.createdAt.toISOString(),
  };
}

export function tuningActionView(row: ActionRow) {
  return {
    id: row.id,
    action: row.action as "apply" | "rollback",
    payload: JSON.parse(row.payload) as Record<string, unknown>,
    actor_did: row.actorDid,
    provenance_id: row.provenanceId,
    created_at: row.createdAt.toISOString(),
  };
}
