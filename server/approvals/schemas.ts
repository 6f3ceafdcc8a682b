import { z } from "zod";
import { ListQuery, PaginationInfo } from "../http/listSchemas";
import { EXAMPLE } from "../openapi/examples";

// Pure zod: the console's approval inbox imports these.

const Timestamp = z.string().describe("ISO 8601 date-time");

export const ApprovalStatus = z.enum([
  "pending",
  "approved",
  "approved_with_modifications",
  "rejected",
  "delegated",
  "overridden",
  "expired",
  "cancelled",
]);
export type ApprovalStatus = z.infer<typeof ApprovalStatus>;

/** States a request can still be decided, cancelled or expired from (api-contract "State transitions"). */
export const OPEN_APPROVAL_STATUSES = ["pending", "delegated"] as const;

export const RiskLevel = z.enum(["low", "medium", "high", "critical"]);
export type RiskLevel = z.infer<typeof RiskLevel>;

/** The inbox orders riskiest first by this rank. */
export const RISK_RANK: Record<RiskLevel, number> = { low: 0, medium: 1, high: 2, critical: 3 };

/** Risk levels whose decision needs a step-up (a fresh passkey, or a person's delegation via /v1). */
export const STEP_UP_RISK_LEVELS: readonly RiskLevel[] = ["high", "critical"];

export const RiskFactor = z
  .object({
    factor: z.string().min(1).max(200).describe("What makes the action risky"),
    severity: z.enum(["low", "medium", "high"]),
  })
  .strict();

const Did = z.string().min(8).max(300).regex(/^did:/, "a DID").describe("A passport DID");

export const EscalationLevel = z
  .object({
    after_seconds: z
      .number()
      .int()
      .min(60)
      .max(30 * 86_400)
      .describe("Seconds after the previous level took the request (or after creation) that this level takes it"),
    approvers: z
      .union([z.array(Did).min(1).max(50), z.enum(["admin", "approver"])])
      .describe("Passport DIDs of the organization, or a console role"),
  })
  .strict();

export const EscalationSchema = z
  .object({
    levels: z.array(EscalationLevel).min(1).max(10),
    on_exhausted: z
      .enum(["expire", "reject"])
      .describe("What happens at expires_at once every level had its turn: expire it, or record a rejection"),
  })
  .strict()
  // Inline, not a named component: an OpenAPI 3.0 `$ref` cannot be made nullable.
  .describe("Levels of approvers the request moves to after their delays, and what happens once all had it");
export type EscalationSchema = z.infer<typeof EscalationSchema>;

/** Bounds on the stored JSON, so one request cannot fill the inbox's page. */
export const APPROVAL_DATA_MAX_BYTES = 64 * 1024;
/** `expires_at` when the request gives none: 24 hours. */
export const DEFAULT_APPROVAL_TTL_SECONDS = 24 * 60 * 60;
/** The longest a request may wait: 30 days. */
export const MAX_APPROVAL_TTL_SECONDS = 30 * 86_400;

const JsonObject = z.record(z.string(), z.unknown());

export const ApprovalCreate = z
  .object({
    task_id: z.string().min(1).max(200).describe("The task the action belongs to (the caller's id)"),
    agent_id: z.string().min(1).max(200).describe("The agent that wants to act"),
    action_description: z.string().min(1).max(2000).describe("What the approver is asked to allow"),
    risk_level: RiskLevel,
    risk_factors: z.array(RiskFactor).max(20).optional(),
    request_data: JsonObject.optional().describe("The parameters of the action (at most 64 KiB as JSON)"),
    approver_passport_id: Did.optional().describe(
      "The one person who may decide; without it any approver of the organization may",
    ),
    expires_at: z.iso
      .datetime({ offset: true })
      .optional()
      .describe("When it expires undecided; default 24 hours from now, at most 30 days"),
    alternatives: z.array(JsonObject).max(20).optional().describe("Other actions the approver may prefer"),
    conversation_id: z.string().min(1).max(200).optional(),
    escalation_schema: EscalationSchema.optional(),
  })
  .strict()
  .meta({
    id: "ApprovalCreate",
    example: {
      task_id: "task-8812",
      agent_id: "agt_01m806mp6t0a4b3c2d1e0f9g8h",
      action_description: "Refund invoice INV-2041 to the customer's card",
      risk_level: "high",
      risk_factors: [{ factor: "amount above 1,000 EUR", severity: "high" }],
      request_data: { invoice: "INV-2041", amount: 1250, currency: "EUR" },
    },
  });
export type ApprovalCreate = z.infer<typeof ApprovalCreate>;

export const ApprovalDecision = z.enum(["approve", "approve_with_modifications", "reject", "delegate", "override"]);
export type ApprovalDecision = z.infer<typeof ApprovalDecision>;

export const ApprovalRespond = z
  .object({
    decision: ApprovalDecision,
    comment: z.string().max(2000).optional(),
    modified_params: JsonObject.optional().describe("Required with approve_with_modifications: what is then executed"),
    delegated_to: Did.optional().describe(
      "Required with delegate: a passport of the organization holding svc_api:approvals:respond",
    ),
    override_action: z
      .string()
      .min(1)
      .max(2000)
      .optional()
      .describe("Required with override (svc_api:approvals:admin): what is done instead"),
  })
  .strict()
  .meta({
    id: "ApprovalRespond",
    example: { decision: "approve_with_modifications", modified_params: { amount: 1000 }, comment: "cap at 1,000" },
  });
export type ApprovalRespond = z.infer<typeof ApprovalRespond>;

export const ApprovalRequest = z
  .object({
    id: z.string(),
    task_id: z.string(),
    agent_id: z.string(),
    status: ApprovalStatus,
    created_at: Timestamp,
    requester_passport_id: z.string().optional().describe("Who asked: the requester's actor DID"),
    approver_passport_id: z
      .string()
      .optional()
      .describe("The designated approver; absent when any approver of the organization may decide"),
    action_description: z.string().optional(),
    risk_level: RiskLevel.optional(),
    risk_factors: z.array(RiskFactor).optional(),
    request_data: JsonObject.optional(),
    responded_by: z.string().nullable().optional().describe("The passport DID that decided"),
    response_comment: z.string().nullable().optional(),
    modified_params: JsonObject.nullable().optional(),
    alternatives: z.array(JsonObject).optional(),
    responded_at: Timestamp.nullable().optional(),
    expires_at: Timestamp.optional(),
    escalation_schema: EscalationSchema.nullable().optional(),
    conversation_id: z.string().nullable().optional(),
    delegated_to: z.string().nullable().optional().describe("Passport DID of the delegated approver"),
    override_action: z.string().nullable().optional(),
    escalation_level: z
      .number()
      .int()
      .optional()
      .describe("0: the first approvers; n: the escalation schema's level n has the request"),
    decision_hash: z
      .string()
      .nullable()
      .optional()
      .describe("SHA-256 (hex) of the RFC 8785 canonical parameters approved (modified_params or request_data)"),
    step_up: z
      .enum(["passkey", "non_agent_delegation"])
      .nullable()
      .optional()
      .describe("How a high or critical decision was stepped up"),
    end_reason: z
      .string()
      .nullable()
      .optional()
      .describe(
        "Why it was cancelled or expired: requester, delegation_revoked, execution_ended, workflow_cancelled, expired, escalation_exhausted",
      ),
    provenance_id: z.string().nullable().optional().describe("The provenance record of the request"),
    decision_provenance_id: z.string().nullable().optional().describe("The provenance record of its decision"),
  })
  .meta({
    id: "ApprovalRequest",
    example: {
      id: "apr_01m806mp6t3k9d8c7b6a5z4y3x",
      task_id: "task-8812",
      agent_id: "agt_01m806mp6t0a4b3c2d1e0f9g8h",
      status: "pending",
      created_at: EXAMPLE.createdAt,
      requester_passport_id: EXAMPLE.agentDid,
      action_description: "Refund invoice INV-2041 to the customer's card",
      risk_level: "high",
      risk_factors: [{ factor: "amount above 1,000 EUR", severity: "high" }],
      request_data: { invoice: "INV-2041", amount: 1250, currency: "EUR" },
      responded_by: null,
      response_comment: null,
      modified_params: null,
      alternatives: [],
      responded_at: null,
      expires_at: EXAMPLE.expiresAt,
      escalation_schema: null,
      conversation_id: null,
      delegated_to: null,
      override_action: null,
    },
  });
export type ApprovalRequest = z.infer<typeof ApprovalRequest>;

export const ApprovalListQuery = ListQuery.extend({
  status: ApprovalStatus.optional(),
  risk_level: RiskLevel.optional(),
  agent_id: z.string().max(200).optional(),
  task_id: z.string().max(200).optional(),
  mine: z
    .enum(["true", "false"])
    .transform((v) => v === "true")
    .optional()
    .describe("true: only what you may decide (not your own requests; assigned to anyone, to you or your role)"),
});

export const ApprovalList = z
  .object({ data: z.array(ApprovalRequest), pagination: PaginationInfo })
  .meta({ id: "ApprovalList", example: { data: [], pagination: { has_more: false, next_cursor: null } } });

export const ApprovalIdParams = z.object({ id: z.string().min(1).max(100).describe("The request's id (apr_…)") });

export const ApprovalGrantUse = z
  .object({ params: z.record(z.string(), z.unknown()).describe("The parameters of the call made under the grant") })
  .strict()
  .meta({ id: "ApprovalGrantUse", example: { params: { invoice: "INV-2041", amount: 1000, currency: "EUR" } } });
export const ApprovalGrantUsed = z
  .object({
    approval_id: z.string(),
    status: ApprovalStatus,
    params_hash: z.string().describe("SHA-256 (hex) of the canonical parameters, equal to the decision's"),
    uses: z.number().int().describe("Calls made under the grant so far, this one included"),
  })
  .meta({
    id: "ApprovalGrantUsed",
    example: {
      approval_id: "apr_01m806mp6t2k9d8c7b6a5z4y3x",
      status: "approved_with_modifications",
      params_hash: "9f2c4e8a1b7d3f6e0c5a2b8d4e1f7a3c6b9d2e5f8a1c4b7e0d3f6a9c2b5e8d1f",
      uses: 1,
    },
  });
