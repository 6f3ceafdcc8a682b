import { z } from "zod";
import { ListQuery, PaginationInfo } from "../http/listSchemas";
import { EXAMPLE } from "../openapi/examples";

// Pure zod: the console's learning page imports these.

/** The kinds of change a proposal can make (server/learning/appliers.ts owns the list). */
export const LearningKind = z
  .enum(["prompt_recommended_model", "prompt_active_version", "routing_rule", "delegation_narrowing"])
  .describe(
    "prompt_recommended_model (target: a prompt key; state {recommended_model}), prompt_active_version (target: a prompt key; state {active_version}), routing_rule (target: a routing rule, owned by the reasoning area), delegation_narrowing (target: a delegation id; state {capabilities}, only ever a subset of what it holds; applying cascades to derived delegations)",
  );

export const APPROVAL_STATES = ["none", "pending", "approved", "rejected", "applied", "rolled_back"] as const;
export const ApprovalState = z
  .enum(APPROVAL_STATES)
  .describe(
    "none → pending → approved | rejected; approved → applied → rolled_back (api-contract.md). A proposal is pending from its creation: it raises its approval request at once.",
  );
export type ApprovalState = z.infer<typeof ApprovalState>;

export const EXPLAIN_SOURCES = ["package_default", "admin", "user_explicit", "inferred", "system_benchmark"] as const;

/** How large `proposed` may be, serialized: a target's state, not a document. */
export const MAX_PROPOSED_BYTES = 8 * 1024;
/** Evidence references per proposal. */
export const MAX_EVIDENCE_REFS = 50;

/** The prefix of a statistics window reference (schemas.ts `EvidenceRef` documents the syntax). */
export const AFFINITY_WINDOW_PREFIX = "stats:prompt_affinity?";
export const PROVENANCE_ID = /^prv_[0-9a-z]{10,40}$/;

/** A statistics window reference, parsed; undefined when `ref` is not one. */
export function parseAffinityWindow(
  ref: string,
): { prompt_key: string; model_id: string; from: Date; to: Date } | string | undefined {
  if (!ref.startsWith(AFFINITY_WINDOW_PREFIX)) return undefined;
  const q = new URLSearchParams(ref.slice(AFFINITY_WINDOW_PREFIX.length));
  const [promptKey, modelId, from, to] = ["prompt_key", "model_id", "from", "to"].map((k) => q.get(k) ?? "");
  if (!promptKey || !modelId || !from || !to) return "needs prompt_key, model_id, from and to";
  const fromDate = new Date(from);
  const toDate = new Date(to);
  if (Number.isNaN(fromDate.getTime()) || Number.isNaN(toDate.getTime())) return "from and to must be ISO date-times";
  if (fromDate >= toDate) return "from must be before to";
  return { prompt_key: promptKey!, model_id: modelId!, from: fromDate, to: toDate };
}

/** The reference of the window [from, to) of a prompt × model's statistics. */
export function affinityWindowRef(promptKey: string, modelId: string, from: Date, to: Date): string {
  const q = new URLSearchParams({
    prompt_key: promptKey,
    model_id: modelId,
    from: from.toISOString(),
    to: to.toISOString(),
  });
  return AFFINITY_WINDOW_PREFIX + q.toString();
}

/** The prefix of a delegation usage window reference (least privilege's evidence, issue 31). */
export const DELEGATION_USAGE_PREFIX = "stats:delegation_usage?";

/**
 * The reference of a delegation's usage in [from, to) (GET /v1/delegations/{id}/usage?since=from),
 * and with `simulate` the replay of its calls against that narrower grant (POST …/simulate).
 */
export function delegationUsageRef(delegationId: string, from: Date, to: Date, simulate?: readonly string[]): string {
  const q = new URLSearchParams({ delegation_id: delegationId, from: from.toISOString(), to: to.toISOString() });
  if (simulate) q.set("simulate", simulate.join(","));
  return DELEGATION_USAGE_PREFIX + q.toString();
}

/** A delegation usage window reference, parsed; undefined when `ref` is not one, a string saying what is wrong when malformed. */
export function parseDelegationUsage(
  ref: string,
): { delegation_id: string; from: Date; to: Date; simulate?: string[] } | string | undefined {
  if (!ref.startsWith(DELEGATION_USAGE_PREFIX)) return undefined;
  const q = new URLSearchParams(ref.slice(DELEGATION_USAGE_PREFIX.length));
  const [id, from, to] = ["delegation_id", "from", "to"].map((k) => q.get(k) ?? "");
  if (!id || !from || !to) return "needs delegation_id, from and to";
  const fromDate = new Date(from);
  const toDate = new Date(to);
  if (Number.isNaN(fromDate.getTime()) || Number.isNaN(toDate.getTime())) return "from and to must be ISO date-times";
  if (fromDate >= toDate) return "from must be before to";
  const simulate = q.get("simulate");
  return {
    delegation_id: id!,
    from: fromDate,
    to: toDate,
    ...(simulate !== null ? { simulate: simulate.split(",").filter(Boolean) } : {}),
  };
}

/**
 * Evidence a proposal cites. Either a provenance record id (`prv_…`, a record of the caller's
 * organization), or a statistics window:
 * `stats:prompt_affinity?prompt_key=<key>&model_id=<model>&from=<ISO date-time>&to=<ISO date-time>`
 * (URL query syntax, values URL-encoded), which resolves when the organization has recorded
 * reasoning calls of that model in that window; or a delegation's usage window
 * `stats:delegation_usage?delegation_id=<id>&from=…&to=…[&simulate=<capability>,…]`, which resolves
 * when the delegation is the organization's and made calls in that window.
 */
export const EvidenceRef = z
  .string()
  .min(1)
  .max(600)
  .describe(
    "A provenance record id (`prv_…`), a statistics window `stats:prompt_affinity?prompt_key=…&model_id=…&from=…&to=…`, or a delegation's usage window `stats:delegation_usage?delegation_id=…&from=…&to=…` (with `&simulate=<capability>,…`: its calls replayed against that grant)",
  );

/**
 * The spec's LearningExplainMetadata. Unknown keys are accepted and stripped (the spec says so):
 * the object is not strict. `approval_state`, `changed_at` and `changed_by` are the service's:
 * what a caller sends for them is replaced by the proposal's own.
 */
export const LearningExplainMetadata = z
  .object({
    source: z.enum(EXPLAIN_SOURCES).optional().describe("Where the proposal comes from"),
    scope: z
      .string()
      .max(200)
      .optional()
      .describe("What the change applies to, e.g. an organization or a prompt namespace"),
    confidence: z.number().min(0).max(1).optional().describe("0 to 1"),
    evidence_refs: z
      .array(EvidenceRef)
      .max(MAX_EVIDENCE_REFS)
      .optional()
      .describe(`At most ${MAX_EVIDENCE_REFS}; each must resolve, else 400`),
    approval_state: ApprovalState.optional().describe("The proposal's state (set by the service)"),
    changed_at: z.string().max(64).optional().describe("When the state last changed (set by the service)"),
    changed_by: z.string().max(300).optional().describe("Who changed it last (set by the service)"),
    rollback_target: z.string().max(300).optional().describe("What a rollback restores, as the proposer names it"),
    expiry: z.iso
      .datetime({ offset: true })
      .optional()
      .describe("When the proposal stops being relevant (its approval request expires then)"),
  })
  .meta({
    id: "LearningExplainMetadata",
    description: "Optional explain metadata of a learning proposal; unknown keys are accepted and stripped.",
    example: {
      source: "inferred",
      scope: "prompt:support-triage",
      confidence: 0.82,
      evidence_refs: [
        EXAMPLE.recordId,
        "stats:prompt_affinity?prompt_key=support-triage&model_id=gpt-4o-mini&from=2026-11-14T00:00:00.000Z&to=2026-11-21T00:00:00.000Z",
      ],
      rollback_target: "gpt-4o",
    },
  });
export type LearningExplainMetadata = z.infer<typeof LearningExplainMetadata>;

const State = z.record(z.string(), z.unknown());

export const LearningProposalCreate = z
  .object({
    kind: LearningKind,
    target: z.string().trim().min(1).max(200).describe("What the change applies to: a prompt key, a routing rule id"),
    proposed: State.describe(
      `The target's proposed state (its kind's shape), at most ${MAX_PROPOSED_BYTES} bytes as JSON`,
    ),
    explain: LearningExplainMetadata.optional(),
  })
  .strict()
  .superRefine((body, ctx) => {
    if (JSON.stringify(body.proposed).length > MAX_PROPOSED_BYTES)
      ctx.addIssue({
        code: "custom",
        path: ["proposed"],
        message: `proposed is larger than ${MAX_PROPOSED_BYTES} bytes as JSON.`,
        params: { code: "OUT_OF_RANGE" },
      });
  })
  .meta({
    id: "LearningProposalCreate",
    example: {
      kind: "prompt_recommended_model",
      target: "support-triage",
      proposed: { recommended_model: "gpt-4o-mini" },
      explain: { source: "admin", confidence: 0.7, evidence_refs: [EXAMPLE.recordId] },
    },
  });

const PROPOSAL_EXAMPLE = {
  id: "lrn_01m806mp6t2k9d8c7b6a5z4y3x",
  kind: "prompt_recommended_model" as const,
  target: "support-triage",
  proposed: { recommended_model: "gpt-4o-mini" },
  previous: { recommended_model: "gpt-4o" },
  approval_state: "pending" as const,
  approval_id: "apr_01m806mp6t2k9d8c7b6a5z4y3x",
  explain: {
    source: "admin" as const,
    confidence: 0.7,
    evidence_refs: [EXAMPLE.recordId],
    approval_state: "pending" as const,
    changed_at: EXAMPLE.createdAt,
    changed_by: EXAMPLE.orgDid,
  },
  proposed_by: EXAMPLE.orgDid,
  origin: "api" as const,
  provenance_id: EXAMPLE.recordId,
  changed_at: EXAMPLE.createdAt,
  changed_by: EXAMPLE.orgDid,
  created_at: EXAMPLE.createdAt,
};

export const LearningProposal = z
  .object({
    id: z.string(),
    kind: LearningKind,
    target: z.string(),
    proposed: State.describe("The state the proposal sets on apply"),
    previous: State.describe("The target's state when the proposal was made: what a rollback restores, exactly"),
    approval_state: ApprovalState,
    approval_id: z.string().nullable().describe("Its request in the approval inbox (apr_…)"),
    explain: LearningExplainMetadata.describe(
      "The metadata as validated (unknown keys stripped), with the proposal's approval_state, changed_at and changed_by",
    ),
    proposed_by: z.string().describe("The proposer's DID (the organization's for the worker's own proposals)"),
    origin: z.enum(["api", "worker"]).describe("api: a caller's; worker: the service's own, from affinity statistics"),
    provenance_id: z.string().nullable().describe("The record of the call that made it"),
    changed_at: z.string(),
    changed_by: z.string(),
    created_at: z.string(),
  })
  .meta({ id: "LearningProposal", example: PROPOSAL_EXAMPLE });
export type LearningProposal = z.infer<typeof LearningProposal>;

export const LearningTuningAction = z
  .object({
    id: z.string(),
    action: z.enum(["apply", "rollback"]),
    payload: z
      .record(z.string(), z.unknown())
      .describe("{kind, target, from, to, explain}: the change made and the proposal's explain metadata"),
    actor_did: z.string(),
    provenance_id: z.string().nullable(),
    created_at: z.string(),
  })
  .meta({
    id: "LearningTuningAction",
    example: {
      id: "lta_01m806mp6t2k9d8c7b6a5z4y3x",
      action: "apply",
      payload: {
        kind: "prompt_recommended_model",
        target: "support-triage",
        from: { recommended_model: "gpt-4o" },
        to: { recommended_model: "gpt-4o-mini" },
        explain: { ...PROPOSAL_EXAMPLE.explain, approval_state: "applied" },
      },
      actor_did: EXAMPLE.orgDid,
      provenance_id: EXAMPLE.recordId,
      created_at: EXAMPLE.createdAt,
    },
  });

export const LearningProposalDetail = LearningProposal.extend({
  tuning_actions: z.array(LearningTuningAction).describe("Its applies and rollbacks, oldest first"),
}).meta({ id: "LearningProposalDetail", example: { ...PROPOSAL_EXAMPLE, tuning_actions: [] } });

export const LearningProposalListQuery = ListQuery.extend({
  approval_state: ApprovalState.optional().describe("Only proposals in this state"),
  kind: LearningKind.optional().describe("Only this kind"),
  target: z.string().max(200).optional().describe("Only this target"),
}).strict();

export const LearningProposalList = z.object({ data: z.array(LearningProposal), pagination: PaginationInfo }).meta({
  id: "LearningProposalList",
  description: "Newest first.",
  example: { data: [PROPOSAL_EXAMPLE], pagination: { has_more: false, next_cursor: null } },
});

export const ProposalIdParams = z.object({ id: z.string().min(1).max(100).describe("The proposal's id (lrn_…)") });

export const LearningDecision = z
  .object({ comment: z.string().max(2000).optional().describe("Why, kept on the approval request") })
  .strict()
  .meta({ id: "LearningDecision", example: { comment: "The affinity gap is clear over two weeks." } });
