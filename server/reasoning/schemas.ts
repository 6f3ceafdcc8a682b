import { z } from "zod";
import { ListQuery, PaginationInfo } from "../http/listSchemas";
import { EXAMPLE } from "../openapi/examples";
import { DelegationBudget } from "../identity/schemas";
import { ReasoningPromptRef } from "../prompts/schemas";

// Pure zod: the console's reasoning pages (providers, playground, spend) import these.

const Timestamp = z.string().describe("ISO 8601 date-time");

export const ReasoningTask = z
  .enum(["reasoning", "coding", "summarization", "creative", "math", "general"])
  .describe("What the call is for: the capability score the router ranks models by");
export const ReasoningComplexity = z
  .enum(["simple", "medium", "complex"])
  .describe("How hard the call is: how much quality weighs against price, and the least quality accepted");
export const ReasoningBudgetMode = z
  .enum(["minimize", "optimize", "unlimited"])
  .describe(
    "minimize: the cheapest model good enough for the complexity; optimize (default): quality against price; unlimited: the best model, price ignored (a delegation budget still applies)",
  );
export const ModelStatus = z.enum(["active", "deprecated", "experimental"]);
export const ProviderKind = z.enum(["openai-compatible", "anthropic"]);

export const ReasoningMessage = z
  .object({
    role: z.enum(["system", "user", "assistant"]).describe("Who speaks: system, user or assistant"),
    content: z.string().max(200_000).describe("The message's text"),
  })
  .strict();

const REASONING_REQUEST_EXAMPLE = {
  messages: [
    { role: "system" as const, content: "You answer in one sentence." },
    { role: "user" as const, content: "Why do delegations expire?" },
  ],
  task: "reasoning" as const,
  complexity: "medium" as const,
  budget: "optimize" as const,
  entity_id: "team-support",
  temperature: 0.2,
  max_tokens: 256,
};

export const ReasoningThinkRequest = z
  .object({
    messages: z
      .array(ReasoningMessage)
      .max(200)
      .optional()
      .describe("The conversation, oldest first; required, with at least one message, unless `prompt` is given"),
    prompt: ReasoningPromptRef.optional().describe(
      "A registered prompt (`POST /v1/prompts/{key}/render`): its rendered text is the call's system message (the first message), or its only (user) message when `messages` is empty; the call is attributed to the prompt's version",
    ),
    task: ReasoningTask.optional().describe("What the call is for (default general)"),
    complexity: ReasoningComplexity.optional().describe("How hard it is (default medium)"),
    budget: ReasoningBudgetMode.optional().describe("How price weighs in routing (default optimize)"),
    pinned_model: z
      .string()
      .min(1)
      .max(300)
      .optional()
      .describe("A model_id (or `<provider>/<model_id>`) that overrides routing; no fallback then"),
    entity_id: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe("The organization or entity the cost is attributed to (spend per entity)"),
    temperature: z.number().min(0).max(2).optional().describe("Sampling temperature, 0 to 2, passed to the provider"),
    max_tokens: z
      .number()
      .int()
      .min(1)
      .max(1_000_000)
      .optional()
      .describe(
        "The most output tokens, passed to the provider (default SVC_REASONING_DEFAULT_MAX_TOKENS, 1024); the budget reserves this much output",
      ),
  })
  .strict()
  .meta({ id: "ReasoningThinkRequest", example: REASONING_REQUEST_EXAMPLE });

export const RoutingDecision = z
  .object({
    selected: z.string().describe("The model_id that answered"),
    reason: z.string().describe("Why it was selected, in words (and which models failed before it)"),
    alternatives: z.array(z.string()).describe("The fallback chain after the first choice, in order (model ids)"),
  })
  .meta({ id: "RoutingDecision" });

export const ReasoningUsage = z.object({
  inputTokens: z.number().int().describe("Input tokens, as the provider counted them"),
  outputTokens: z.number().int().describe("Output tokens, as the provider counted them"),
  totalTokens: z.number().int(),
});

export const ReasoningThinkResponse = z
  .object({
    success: z.boolean(),
    data: z.object({
      model: z.string().describe("The model_id that answered"),
      provider: z.string().describe("Its provider's name"),
      text: z.string(),
      usage: ReasoningUsage,
    }),
    metadata: z.object({
      costUsd: z.number().describe("Provider token counts × the model's price per million, in USD"),
      durationMs: z.number().int().describe("From admission to the answer, fallbacks included"),
      routingDecision: RoutingDecision,
      call_id: z.string().optional().describe("The recorded call (GET /v1/reasoning/calls/{id}; feedback)"),
    }),
  })
  .meta({
    id: "ReasoningThinkResponse",
    example: {
      success: true,
      data: {
        model: "gpt-4o-mini",
        provider: "openai",
        text: "So that a leaked token stops working by itself.",
        usage: { inputTokens: 24, outputTokens: 11, totalTokens: 35 },
      },
      metadata: {
        costUsd: 0.0000102,
        durationMs: 812,
        routingDecision: {
          selected: "gpt-4o-mini",
          reason:
            "optimize for reasoning at medium complexity: gpt-4o-mini scored 0.71 (quality 0.78, price weight 0.3); claude-3-5-haiku-latest 0.62 next",
          alternatives: ["claude-3-5-haiku-latest"],
        },
        call_id: "rsn_01m806mp6t2k9d8c7b6a5z4y3x",
      },
    },
  });

export const ModelCapabilities = z
  .object({
    reasoning: z.number(),
    coding: z.number(),
    summarization: z.number(),
    multilingual: z.number(),
    math_reasoning: z.number(),
    creative_writing: z.number(),
    instruction_following: z.number(),
  })
  .describe("Scores 0..1 from the price table (server/reasoning/modelTable.json), 0.5 where unknown")
  .meta({ id: "ModelCapabilities" });

const MODEL_INFO_EXAMPLE = {
  model_id: "gpt-4o-mini",
  provider: "openai",
  display_name: "GPT-4o mini",
  description: "OpenAI's small multimodal model",
  capabilities: {
    reasoning: 0.72,
    coding: 0.7,
    summarization: 0.8,
    multilingual: 0.78,
    math_reasoning: 0.7,
    creative_writing: 0.72,
    instruction_following: 0.8,
  },
  context_length: 128000,
  supports_streaming: true,
  supports_function_calling: true,
  supports_vision: true,
  performance: { avg_latency_ms: 640, reliability: 0.99, success_rate: 0.98 },
  cost: { input_cost_per_million: 0.15, output_cost_per_million: 0.6 },
  status: "active",
};

export const ModelInfo = z
  .object({
    model_id: z.string(),
    provider: z.string().describe("The provider's name (SVC_MODEL_PROVIDERS or the console)"),
    display_name: z.string(),
    description: z.string(),
    capabilities: ModelCapabilities,
    context_length: z.number().int(),
    supports_streaming: z.boolean(),
    supports_function_calling: z.boolean(),
    supports_vision: z.boolean(),
    performance: z
      .object({
        avg_latency_ms: z.number().describe("Mean latency of its successful attempts (last 30 days); 0 before any"),
        reliability: z
          .number()
          .describe("Share of attempts that were not a provider error or timeout (rate limits excluded); 1 before any"),
        success_rate: z.number().describe("Share of attempts that answered; 1 before any"),
      })
      .describe("Measured from this organization's recorded attempts, not constants"),
    cost: z.object({
      input_cost_per_million: z.number().describe("USD per million input tokens"),
      output_cost_per_million: z.number().describe("USD per million output tokens"),
    }),
    status: ModelStatus,
  })
  .meta({ id: "ModelInfo", example: MODEL_INFO_EXAMPLE });

export const ModelListResponse = z
  .object({ models: z.array(ModelInfo) })
  .meta({ id: "ModelListResponse", example: { models: [MODEL_INFO_EXAMPLE] } });

export const ModelIdParams = z.object({ id: z.string().min(1).max(300).describe("A model_id of the catalogue") });

export const ModelPerformanceResponse = z
  .object({
    model_id: z.string(),
    total_requests: z.number().int(),
    success_rate: z.number(),
    avg_latency_ms: z.number(),
    avg_cost_usd: z.number(),
    by_complexity: z.record(
      z.string(),
      z.object({ count: z.number().int(), success_rate: z.number(), avg_cost: z.number() }),
    ),
  })
  .meta({
    id: "ModelPerformanceResponse",
    example: {
      model_id: "gpt-4o-mini",
      total_requests: 42,
      success_rate: 0.976,
      avg_latency_ms: 655.2,
      avg_cost_usd: 0.000031,
      by_complexity: {
        simple: { count: 30, success_rate: 1, avg_cost: 0.00002 },
        complex: { count: 12, success_rate: 0.917, avg_cost: 0.00006 },
      },
    },
  });

// ── recorded calls ──

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

// ── budgets (inside delegations: their shape is identity's, server/identity/schemas.ts) ──

export const Spend = z.object({
  spent_usd: z.number().describe("Settled cost of recorded calls in the period"),
  reserved_usd: z.number().describe("Worst cases reserved by calls still running"),
  calls: z.number().int(),
});

export const DelegationSpend = Spend.extend({
  delegation_id: z.string(),
  name: z.string().nullable(),
  budget: DelegationBudget.nullable(),
  remaining_usd: z.number().nullable().describe("What the budget leaves in its current period; null without one"),
  budget_spent_usd: z
    .number()
    .nullable()
    .describe(
      "What the budget's current period has settled (its own calls and its derived delegations'); null without one",
    ),
  budget_reserved_usd: z
    .number()
    .nullable()
    .describe("Worst cases reserved against the budget by calls still running; null without one"),
});

export const EntitySpend = Spend.extend({ entity_id: z.string().nullable() });

export const DelegationSpendList = z.object({ data: z.array(DelegationSpend) });
export const EntitySpendList = z.object({ data: z.array(EntitySpend) });

export const SpendQuery = z.object({
  since: z.string().datetime({ offset: true }).optional().describe("From (default: 30 days ago)"),
});

// ── providers (console) ──

export const ProviderModelConfig = z
  .object({
    model_id: z.string().min(1).max(300),
    display_name: z.string().max(200).optional(),
    context_length: z.number().int().min(1).max(100_000_000).optional(),
    input_cost_per_million: z.number().min(0).max(100_000).optional(),
    output_cost_per_million: z.number().min(0).max(100_000).optional(),
    capabilities: ModelCapabilities.partial().optional(),
  })
  .strict();

export const ProviderName = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_.-]{0,62}$/, "lowercase letters, digits, '.', '_' or '-', at most 63")
  .describe("The provider's name in model keys and answers (`provider`)");

export const ProviderConfig = z
  .object({
    name: ProviderName,
    kind: ProviderKind,
    base_url: z
      .string()
      .url()
      .max(2000)
      .optional()
      .describe("Required for openai-compatible (e.g. http://localhost:11434/v1)"),
    api_key: z.string().min(1).max(4000).optional(),
    models: z.array(ProviderModelConfig).max(500).optional().describe("Without it the provider's own list is read"),
  })
  .strict()
  .superRefine((p, ctx) => {
    if (p.kind === "openai-compatible" && !p.base_url)
      ctx.addIssue({ code: "custom", path: ["base_url"], message: "An openai-compatible provider needs base_url." });
  });

export const ProviderAddRequest = ProviderConfig;

export const ProviderView = z.object({
  id: z.string().nullable().describe("null for providers of SVC_MODEL_PROVIDERS"),
  name: z.string(),
  kind: ProviderKind,
  base_url: z.string().nullable(),
  has_api_key: z.boolean(),
  source: z.enum(["environment", "console"]),
  models: z.array(ProviderModelConfig).nullable(),
  created_at: Timestamp.nullable(),
  problem: z.string().nullable().optional().describe("Why its model list could not be read, if it could not"),
});

export const ProviderList = z.object({ data: z.array(ProviderView) });
export const ProviderIdInput = z.object({ id: z.string().min(1).max(100) });
export const ProviderRemoved = z.object({ id: z.string(), removed: z.literal(true) });

// ── routing rules (console) ──

const RuleTarget = z.string().min(1).max(100).describe("`<task>` or `<task>:<complexity>`");

export const RoutingRuleView = z.object({
  target: z.string().describe("`<task>` (every complexity without a rule of its own) or `<task>:<complexity>`"),
  task: ReasoningTask,
  complexity: ReasoningComplexity.nullable().describe("null: every complexity"),
  model: z.string().describe("A model_id or `<provider>/<model_id>`"),
  model_status: ModelStatus.nullable().describe("The model's status in the catalogue now; null when it is not there"),
  set_by: z.string().nullable(),
  proposal_id: z.string().nullable().describe("The learning proposal that set it, when one did"),
  updated_at: Timestamp,
});
export const RoutingRuleList = z.object({ data: z.array(RoutingRuleView) });
export const RoutingRuleSetRequest = z.object({ target: RuleTarget, model: z.string().min(1).max(300) }).strict();
export const RoutingRuleSet = z.object({ target: z.string(), model: z.string() });
export const RoutingRuleTargetInput = z.object({ target: RuleTarget }).strict();
export const RoutingRuleRemoved = z.object({ target: z.string(), removed: z.literal(true) });
