import { z } from "zod";
import { ListQuery, PaginationInfo } from "../http/listSchemas";
import { EXAMPLE } from "../openapi/examples";

// Pure zod: the console's prompt pages import these.

/** How large a version's `content` may be (characters). */
export const MAX_PROMPT_CONTENT = 64 * 1024;
/** How large a version's `input_schema` and `meta` may be, serialized. */
export const MAX_INPUT_SCHEMA_BYTES = 64 * 1024;
export const MAX_META_BYTES = 16 * 1024;
/** How many versions an `extends_uri` chain may hold above a version (its parent, grandparent, …). */
export const MAX_EXTENDS_DEPTH = 8;
/** How long a rendered text may be (characters): a prompt, not a document. Counted while rendering. */
export const MAX_RENDERED_TEXT = 512 * 1024;
/** How deep a template's sections (`{{#a}}`, `{{^a}}`) may nest; rendering recurses once per level. */
export const MAX_TEMPLATE_DEPTH = 32;

export const PROMPT_STATUSES = ["active", "deprecated"] as const;

export const PromptKey = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[a-z0-9][a-z0-9_.-]*$/, "lower case letters, digits, `_`, `.` and `-`")
  .refine((k) => k !== "affinity", { message: "`affinity` is reserved (GET /v1/prompts/affinity)" })
  .describe("The prompt's key in its organization, e.g. `support.triage` (not `affinity`, a path of its own)");

/** A `{key}` path parameter. */
export const PromptKeyParams = z.object({ key: PromptKey });

export const PromptVersionParams = z.object({
  key: PromptKey,
  version: z
    .string()
    .min(1)
    .max(128)
    .describe("An exact version (`1.2.0`) or, when reading, a semver range (`^1.2`): the highest version it matches"),
});

const Namespace = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[a-z0-9][a-z0-9_.-]*$/, "lower case letters, digits, `_`, `.` and `-`");

const PROFILE_EXAMPLE = {
  prompt_uri: "prompt://support/support.triage",
  prompt_key: "support.triage",
  org_id: EXAMPLE.orgDid,
  scope: "organization",
  namespace: "support",
  active_version: "1.2.0",
  recommended_model: "gpt-4o-mini",
  created_at: EXAMPLE.createdAt,
  updated_at: EXAMPLE.createdAt,
};

export const PromptProfile = z
  .object({
    prompt_uri: z.string().describe("`prompt://<namespace>/<key>`; `extends_uri` names it with `@<version>`"),
    prompt_key: z.string(),
    org_id: z.string().describe("The organization's DID"),
    scope: z.string().describe("From the first version's `meta.scope`"),
    namespace: z.string().describe("From the first version's `meta.namespace`"),
    active_version: z.string().describe("What a render without a version uses"),
    recommended_model: z
      .string()
      .nullable()
      .describe("The model a learning proposal recommended for this prompt; null when none"),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: "PromptProfile", example: PROFILE_EXAMPLE });

const VERSION_EXAMPLE = {
  prompt_uri: PROFILE_EXAMPLE.prompt_uri,
  prompt_key: PROFILE_EXAMPLE.prompt_key,
  org_id: EXAMPLE.orgDid,
  version: "1.2.0",
  content: "Classify the ticket from {{customer}}:\n{{ticket}}",
  extends_uri: "prompt://support/support.base@1.0.0",
  published_by: EXAMPLE.agentDid,
  meta: { id: "support.triage", namespace: "support", scope: "organization", description: "Triage a ticket" },
  input_schema: {
    type: "object",
    properties: { customer: { type: "string" }, ticket: { type: "string" } },
    required: ["ticket"],
  },
  published_at: EXAMPLE.createdAt,
  status: "active" as const,
};

export const PromptVersion = z
  .object({
    prompt_uri: z.string(),
    prompt_key: z.string(),
    org_id: z.string(),
    version: z.string().describe("Semantic version"),
    content: z.string().describe("The Mustache template"),
    extends_uri: z.string().nullable().describe("`<prompt_uri>@<version>` this version renders inside; null when none"),
    published_by: z.string().describe("The publishing actor's DID"),
    meta: z.record(z.string(), z.unknown()),
    input_schema: z.record(z.string(), z.unknown()).nullable().describe("JSON Schema of the inputs; null when none"),
    published_at: z.string(),
    status: z.enum(PROMPT_STATUSES),
  })
  .meta({ id: "PromptVersion", example: VERSION_EXAMPLE });

export const PromptPublishRequest = z
  .object({
    version: z.string().min(1).max(128).describe("Semantic version, greater than every published version of the key"),
    content: z.string().min(1).max(MAX_PROMPT_CONTENT).describe("The prompt body: a Mustache template"),
    meta: z
      .looseObject({
        id: z.string().min(1).max(128).describe("The prompt's key (the path's `{key}`)"),
        namespace: Namespace.describe("The prompt's namespace; fixed by its first version"),
        scope: z
          .string()
          .min(1)
          .max(64)
          .describe("Who the prompt is for (e.g. `organization`); fixed by its first version"),
        description: z.string().max(2000),
      })
      .describe("Stored as given; at most 16 KiB as JSON"),
    input_schema: z
      .record(z.string(), z.unknown())
      .optional()
      .describe(
        "JSON Schema of the render inputs, in the dialect its `$schema` names (draft-07 by default; 2019-09, 2020-12); at most 64 KiB as JSON",
      ),
    extends_uri: z
      .string()
      .max(400)
      .optional()
      .describe("`<prompt_uri>@<version>` (an exact published version) to render inside"),
  })
  .strict()
  .meta({
    id: "PromptPublishRequest",
    example: {
      version: VERSION_EXAMPLE.version,
      content: VERSION_EXAMPLE.content,
      meta: VERSION_EXAMPLE.meta,
      input_schema: VERSION_EXAMPLE.input_schema,
      extends_uri: VERSION_EXAMPLE.extends_uri,
    },
  });

export const PromptListQuery = ListQuery.extend({
  namespace: Namespace.optional().describe("Only this namespace"),
  scope: z.string().min(1).max(64).optional().describe("Only this scope"),
});

export const PromptListResponse = z.object({ data: z.array(PromptProfile), pagination: PaginationInfo }).meta({
  id: "PromptListResponse",
  example: { data: [PROFILE_EXAMPLE], pagination: { has_more: false, next_cursor: null } },
});

export const PromptVersionListResponse = z.object({ data: z.array(PromptVersion), pagination: PaginationInfo }).meta({
  id: "PromptVersionListResponse",
  example: { data: [VERSION_EXAMPLE], pagination: { has_more: false, next_cursor: null } },
});

export const PromptRenderRequest = z
  .object({
    version: z
      .string()
      .min(1)
      .max(128)
      .optional()
      .describe("Exact version or semver range; the active version when absent"),
    inputs: z.record(z.string(), z.unknown()).default({}).describe("Validated against the version's `input_schema`"),
  })
  .strict()
  .meta({
    id: "PromptRenderRequest",
    example: { version: "^1.2", inputs: { customer: "Acme", ticket: "Login fails" } },
  });

export const PromptRenderResponse = z
  .object({
    prompt_key: z.string(),
    version: z.string().describe("The version rendered"),
    text: z.string().describe("The rendered text, the `extends_uri` chain included"),
  })
  .meta({
    id: "PromptRenderResponse",
    example: {
      prompt_key: "support.triage",
      version: "1.2.0",
      text: "You are a support agent.\n\nClassify the ticket from Acme:\nLogin fails",
    },
  });

export const PromptActiveVersionRequest = z
  .object({ version: z.string().min(1).max(128).describe("An exact published, non-deprecated version") })
  .strict()
  .meta({ id: "PromptActiveVersionRequest", example: { version: "1.2.0" } });

export const PROMPT_HISTORY_CHANGES = ["active_version", "recommended_model", "deprecation"] as const;
export const PROMPT_HISTORY_SOURCES = ["publish", "call", "learning_apply", "learning_rollback"] as const;

const HISTORY_EXAMPLE = {
  id: "phs_01m806mp6t2k9d8c7b6a5z4y3x",
  prompt_key: "support.triage",
  change: "active_version" as const,
  from: "1.1.0",
  to: "1.2.0",
  actor: EXAMPLE.agentDid,
  source: "call" as const,
  request_id: EXAMPLE.requestId,
  proposal_id: null,
  at: EXAMPLE.createdAt,
};

export const PromptHistoryEntry = z
  .object({
    id: z.string(),
    prompt_key: z.string(),
    change: z.enum(PROMPT_HISTORY_CHANGES).describe("What moved (`deprecation`: `to` is the version deprecated)"),
    from: z.string().nullable(),
    to: z.string().nullable(),
    actor: z.string().describe("Who moved it (a DID)"),
    source: z
      .enum(PROMPT_HISTORY_SOURCES)
      .describe("A first publication, a /v1 or console call, or a learning proposal"),
    request_id: z.string().nullable().describe("The call's request id (its provenance record names it)"),
    proposal_id: z.string().nullable().describe("The learning proposal that applied or rolled back the change"),
    at: z.string(),
  })
  .meta({ id: "PromptHistoryEntry", example: HISTORY_EXAMPLE });

export const PromptHistoryResponse = z.object({ data: z.array(PromptHistoryEntry), pagination: PaginationInfo }).meta({
  id: "PromptHistoryResponse",
  example: { data: [HISTORY_EXAMPLE], pagination: { has_more: false, next_cursor: null } },
});

/** `?window_days=` of the performance and affinity reports. */
export const WindowDays = z.coerce
  .number()
  .int()
  .min(1)
  .max(365)
  .default(30)
  .describe("The window: the last N days (default 30)");

export const PromptPerformanceQuery = z.object({ window_days: WindowDays });

const PERFORMANCE_EXAMPLE = {
  prompt_key: "support.triage",
  window: { start: "2026-10-22T09:30:00.000Z", end: EXAMPLE.createdAt },
  stats: {
    total_calls: 1240,
    avg_tokens: 812,
    avg_cost_usd: 0.00041,
    avg_duration_ms: 930,
    positive_signals: 210,
    negative_signals: 31,
    rephrases: 12,
    corrections: 9,
  },
  model_breakdown: [
    {
      model_id: "gpt-4o-mini",
      provider: "openai",
      call_count: 1100,
      avg_latency_ms: 880,
      avg_cost_usd: 0.00032,
      avg_tokens: 790,
      success_rate: 0.99,
    },
  ],
  recommended_model: "gpt-4o-mini",
};

export const ModelBreakdown = z.object({
  model_id: z.string(),
  provider: z.string(),
  call_count: z.number().int(),
  avg_latency_ms: z.number().int(),
  avg_cost_usd: z.number(),
  avg_tokens: z.number().int().describe("Input plus output tokens"),
  success_rate: z.number().describe("Succeeded calls over calls, 0..1"),
});

export const PromptPerformanceResponse = z
  .object({
    prompt_key: z.string(),
    window: z.object({ start: z.string(), end: z.string() }),
    stats: z.object({
      total_calls: z.number().int(),
      avg_tokens: z.number().int(),
      avg_cost_usd: z.number(),
      avg_duration_ms: z.number().int(),
      positive_signals: z.number().int(),
      negative_signals: z.number().int(),
      rephrases: z.number().int(),
      corrections: z.number().int(),
    }),
    model_breakdown: z.array(ModelBreakdown).describe("Per model that answered, most calls first"),
    recommended_model: z.string().nullable(),
  })
  .meta({ id: "PromptPerformanceResponse", example: PERFORMANCE_EXAMPLE });

export const PromptAffinityQuery = ListQuery.extend({
  window_days: WindowDays,
  prompt_key: PromptKey.optional().describe("Only this prompt"),
  min_sample: z.coerce.number().int().min(1).max(1_000_000).default(1).describe("Leave out pairs with fewer calls"),
});

const AFFINITY_EXAMPLE = {
  prompt_key: "support.triage",
  model_id: "gpt-4o-mini",
  provider: "openai",
  sample_size: 1100,
  stats: { avg_latency_ms: 880, avg_cost_usd: 0.00032, avg_tokens: 790, success_rate: 0.99 },
  affinity_score: 0.87,
};

export const PromptAffinityEntry = z.object({
  prompt_key: z.string(),
  model_id: z.string(),
  provider: z.string(),
  sample_size: z.number().int(),
  stats: z.object({
    avg_latency_ms: z.number().int(),
    avg_cost_usd: z.number(),
    avg_tokens: z.number().int(),
    success_rate: z.number(),
  }),
  affinity_score: z.number().describe("0..1, the README's formula"),
});

export const PromptAffinityResponse = z
  .object({ data: z.array(PromptAffinityEntry), pagination: PaginationInfo })
  .meta({
    id: "PromptAffinityResponse",
    example: { data: [AFFINITY_EXAMPLE], pagination: { has_more: false, next_cursor: null } },
  });

/** `prompt` of a reasoning call: the rendered text is its prompt, and the call is attributed to the version. */
export const ReasoningPromptRef = z
  .object({
    key: PromptKey,
    version: z
      .string()
      .min(1)
      .max(128)
      .optional()
      .describe("Exact version or semver range; the active version when absent"),
    inputs: z.record(z.string(), z.unknown()).default({}),
  })
  .strict()
  .describe("A registered prompt to render as the call's prompt; the call is attributed to its version");
