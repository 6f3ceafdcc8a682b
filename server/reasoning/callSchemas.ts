import { z } from "zod";
import { ListQuery, PaginationInfo } from "../http/listSchemas";
import { EXAMPLE } from "../openapi/examples";
import { ReasoningBudgetMode, ReasoningComplexity, ReasoningTask, Timestamp } from "./thinkSchemas";

// Pure zod: recorded reasoning calls and their feedback.

export const ReasoningAttemptStatus = z.enum(["succeeded", "error", "timeout", "rate_limited"]);

export const ReasoningCallStatus = z.enum(["pending", "succeeded", "failed"]);

export const ReasoningAttempt = z.object({
  attempt: z.number().int().describe("1 for the first choice, then each fallback"),
  model: z.string(),
  provider: z.string(),
  status: ReasoningAttemptStatus,
  error_message: z.string().nullable(),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  cost_usd: z.number(),
  latency_ms: z.number().int(),
  created_at: Timestamp,
});

const CALL_EXAMPLE = {
  id: "rsn_01m806mp6t2k9d8c7b6a5z4y3x",
  delegation_id: EXAMPLE.delegationId,
  actor_did: EXAMPLE.agentDid,
  entity_id: "team-support",
  task: "reasoning" as const,
  complexity: "medium" as const,
  budget: "optimize" as const,
  pinned_model: null,
  model: "gpt-4o-mini",
  provider: "openai",
  status: "succeeded" as const,
  reason: "optimize for reasoning at medium complexity: gpt-4o-mini scored 0.71",
  alternatives: ["claude-3-5-haiku-latest"],
  input_tokens: 24,
  output_tokens: 11,
  cost_usd: 0.0000102,
  reserved_usd: 0.00016,
  duration_ms: 812,
  error_code: null,
  error_message: null,
  provenance_id: EXAMPLE.recordId,
  request_id: EXAMPLE.requestId,
  feedback: null,
  prompt_key: null,
  prompt_version: null,
  created_at: EXAMPLE.createdAt,
  completed_at: EXAMPLE.createdAt,
};

export const ReasoningCallFeedbackView = z.object({
  score: z.number().int(),
  signal: z.enum(["positive", "negative", "rephrase", "correction"]).nullable(),
  comment: z.string().nullable(),
  created_at: Timestamp,
});

export const ReasoningCall = z
  .object({
    id: z.string(),
    delegation_id: z.string().nullable(),
    actor_did: z.string().nullable(),
    entity_id: z.string().nullable(),
    task: ReasoningTask,
    complexity: ReasoningComplexity,
    budget: ReasoningBudgetMode,
    pinned_model: z.string().nullable(),
    model: z.string().nullable().describe("The model that answered, or the first choice when none did"),
    provider: z.string().nullable(),
    status: ReasoningCallStatus,
    reason: z.string(),
    alternatives: z.array(z.string()),
    input_tokens: z.number().int(),
    output_tokens: z.number().int(),
    cost_usd: z.number(),
    reserved_usd: z.number().describe("The worst case reserved against the delegation's budget at admission"),
    duration_ms: z.number().int().nullable(),
    error_code: z.string().nullable(),
    error_message: z.string().nullable(),
    provenance_id: z.string().nullable().describe("The provenance record of the call's admission"),
    request_id: z.string(),
    feedback: ReasoningCallFeedbackView.nullable(),
    prompt_key: z.string().nullable().describe("The registered prompt the call rendered (`prompt` of the request)"),
    prompt_version: z.string().nullable().describe("Its version"),
    created_at: Timestamp,
    completed_at: Timestamp.nullable(),
    attempts: z.array(ReasoningAttempt).optional().describe("Each attempt of the fallback chain (GET one call)"),
  })
  .meta({ id: "ReasoningCall", example: CALL_EXAMPLE });

export const ReasoningCallListQuery = ListQuery.extend({
  model: z.string().min(1).max(300).optional().describe("Only calls answered by (or first routed to) this model"),
  delegation_id: z.string().min(1).max(100).optional(),
  entity_id: z.string().min(1).max(200).optional(),
  status: ReasoningCallStatus.optional(),
});

export const ReasoningCallList = z.object({ data: z.array(ReasoningCall), pagination: PaginationInfo }).meta({
  id: "ReasoningCallList",
  example: { data: [CALL_EXAMPLE], pagination: { has_more: false, next_cursor: null } },
});

export const ReasoningCallIdParams = z.object({ id: z.string().min(1).max(100) });

export const FEEDBACK_SIGNALS = ["positive", "negative", "rephrase", "correction"] as const;

export const ReasoningFeedbackRequest = z
  .object({
    score: z
      .number()
      .int()
      .min(-1)
      .max(1)
      .optional()
      .describe("-1 bad, 0 neutral, 1 good; when absent, 1 for a positive signal and -1 for the others"),
    signal: z
      .enum(FEEDBACK_SIGNALS)
      .optional()
      .describe(
        "What the caller saw: the answer was good (positive) or bad (negative), the user rephrased the question, or corrected the answer. When absent, a score of 1 is positive and -1 negative. Prompt performance counts these. A score or a signal is needed.",
      ),
    comment: z.string().max(2000).optional(),
  })
  .strict()
  .meta({
    id: "ReasoningFeedbackRequest",
    example: { score: 1, signal: "positive", comment: "Right answer, short." },
  });
