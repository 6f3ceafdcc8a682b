import { z } from "zod";

// Pure zod: the model catalogue and measured performance.

export const ModelStatus = z.enum(["active", "deprecated", "experimental"]);

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
