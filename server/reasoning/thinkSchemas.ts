import { z } from "zod";
import { ReasoningPromptRef } from "../prompts/schemas";

// Pure zod: a reasoning call (`think`) and its answer.

export const Timestamp = z.string().describe("ISO 8601 date-time");

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
