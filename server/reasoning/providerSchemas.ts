import { z } from "zod";
import { ModelCapabilities } from "./modelSchemas";
import { Timestamp } from "./thinkSchemas";

export const ProviderKind = z.enum(["openai-compatible", "anthropic"]);

// Pure zod: model providers (console).

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
