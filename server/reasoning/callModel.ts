import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { inSpan } from "../telemetry/tracing";
import { DomainError } from "../errors";
import { createGuardedFetch } from "../outbound/guardedFetch";
import { processWide } from "../processWide";
import { componentLog } from "../telemetry/log";
import { observeUsageAnomaly } from "../telemetry/metrics";
import type { CatalogueModel } from "./catalogue";
import { inputTokenBound } from "./route";

/**
 * One attempt against one model, through the Vercel AI SDK's provider packages (never
 * hand-written HTTP), with a `fetch` made of svc's SSRF guard: a provider's base URL reaches a
 * private address only when SVC_OUTBOUND_ALLOW lists it. The SDK's own retries are off: a failure
 * falls back to the next model of the chain instead, each attempt recorded.
 */
export interface AttemptInput {
  messages: { role: "system" | "user" | "assistant"; content: string }[];
  temperature?: number;
  maxTokens: number;
  timeoutMs: number;
  signal?: AbortSignal;
}

export type AttemptOutcome =
  | {
      ok: true;
      text: string;
      inputTokens: number;
      outputTokens: number;
      latencyMs: number;
      /** The usage the provider reported, when it was out of bounds and counted as `inputTokens`/`outputTokens` instead. */
      reportedUsage?: { inputTokens: number | undefined; outputTokens: number | undefined };
    }
  | { ok: false; status: "error" | "timeout" | "rate_limited"; message: string; latencyMs: number };

/**
 * The usage a call is charged for, from what the provider reports but never beyond what the call
 * could have used: a provider's usage is its word, and a broken or hostile one (an
 * OpenAI-compatible endpoint anyone may configure) reporting `prompt_tokens: -1e7` would make
 * the call pay the budget back, and 1e15 would charge trillions. Each count is a whole number
 * from 0 to its bound: input at most `inputTokenBound` of the messages sent (what a byte-level
 * tokenizer can make of them), output at most `max_tokens`. A missing count is 0, as before.
 */
export function boundedUsage(
  reported: { inputTokens: number | undefined; outputTokens: number | undefined },
  bounds: { inputTokens: number; outputTokens: number },
): { inputTokens: number; outputTokens: number; clamped: boolean } {
  const bound = (n: number | undefined, max: number) =>
    n === undefined ? 0 : Number.isFinite(n) ? Math.min(max, Math.max(0, Math.round(n))) : n > 0 ? max : 0;
  const inputTokens = bound(reported.inputTokens, bounds.inputTokens);
  const outputTokens = bound(reported.outputTokens, bounds.outputTokens);
  const clamped =
    (reported.inputTokens !== undefined && inputTokens !== reported.inputTokens) ||
    (reported.outputTokens !== undefined && outputTokens !== reported.outputTokens);
  return { inputTokens, outputTokens, clamped };
}

/** Model replies are small; 4 MiB leaves room for long ones while bounding what a provider can send. */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

/**
 * The AI SDK, loaded on the first model call (the module system keeps it): a process that never
 * reasons (the CLI, a worker without providers) neither parses nor evaluates it.
 */
const loadAiSdk = async () => {
  const [ai, openaiCompatible, anthropic] = await Promise.all([
    import("ai"),
    import("@ai-sdk/openai-compatible"),
    import("@ai-sdk/anthropic"),
  ]);
  return { ...ai, ...openaiCompatible, ...anthropic };
};
type AiSdk = Awaited<ReturnType<typeof loadAiSdk>>;
/** A provider's chat model, as the SDK's providers build it (the language model specification, v3). */
type ChatModel =
  | ReturnType<ReturnType<AiSdk["createOpenAICompatible"]>["chatModel"]>
  | ReturnType<ReturnType<AiSdk["createAnthropic"]>>;
type Prompt = Parameters<ChatModel["doGenerate"]>[0]["prompt"];
// The loaded SDK, kept: an `import()` of a module already loaded still resolves its specifier
// again, which under a loader hook (tsx, as svc runs) is a round trip to the hooks' thread each
// time (measured by bench/reasoning.ts: about a millisecond of CPU per call).
const sdkHolder = processWide("reasoning.aiSdk", () => ({ loaded: undefined as Promise<AiSdk> | undefined }));
const aiSdk = (): Promise<AiSdk> => (sdkHolder.loaded ??= loadAiSdk());

/**
 * Language models, kept per provider, model, key and timeout: the SDK builds its answer schemas
 * (zod) in each model's constructor, about 1.5 ms of CPU (bench/reasoning.ts), while a model holds
 * no per-call state (the guarded fetch applies its limits per request). Bounded; a provider's
 * new key or base URL makes a new entry.
 */
const MAX_MODELS = 1_000;
const models = processWide("reasoning.languageModels", () => new Map<string, ChatModel>());

async function languageModel(sdk: AiSdk, m: CatalogueModel, timeoutMs: number): Promise<ChatModel> {
  const apiKey = await m.provider.apiKey();
  const key = JSON.stringify([
    m.provider.kind,
    m.provider.name,
    m.provider.id,
    m.provider.baseUrl,
    m.modelId,
    timeoutMs,
    apiKey,
  ]);
  const kept = models.get(key);
  if (kept) return kept;
  const made = buildModel(sdk, m, timeoutMs, apiKey);
  if (models.size >= MAX_MODELS) models.clear();
  models.set(key, made);
  return made;
}

function buildModel(
  { createAnthropic, createOpenAICompatible }: AiSdk,
  m: CatalogueModel,
  timeoutMs: number,
  apiKey: string | undefined,
): ChatModel {
  const fetch = createGuardedFetch({ timeoutMs, maxBytes: MAX_ANSWER_BYTES });
  if (m.provider.kind === "anthropic") {
    return createAnthropic({ apiKey: apiKey ?? "", baseURL: m.provider.baseUrl ?? undefined, fetch })(m.modelId);
  }
  return createOpenAICompatible({
    name: m.provider.name,
    baseURL: m.provider.baseUrl!,
    apiKey,
    fetch,
  }).chatModel(m.modelId);
}

function classify(
  { APICallError }: AiSdk,
  e: unknown,
): { status: "error" | "timeout" | "rate_limited"; message: string } {
  for (let cur: unknown = e, depth = 0; cur && depth < 5; cur = (cur as { cause?: unknown }).cause, depth++) {
    if (APICallError.isInstance(cur) && cur.statusCode === 429)
      return { status: "rate_limited", message: "The provider answered 429 (rate limited)." };
    if (cur instanceof DomainError && cur.code === "outbound_timeout")
      return { status: "timeout", message: cur.message };
    if (cur instanceof Error && (cur.name === "TimeoutError" || cur.name === "AbortError"))
      return { status: "timeout", message: "The attempt ran out of time." };
  }
  if (APICallError.isInstance(e))
    return {
      status: "error",
      message: `The provider answered ${e.statusCode ?? "no status"}: ${e.message.slice(0, 300)}`,
    };
  return { status: "error", message: (e instanceof Error ? e.message : String(e)).slice(0, 300) };
}

export function callModel(m: CatalogueModel, input: AttemptInput): Promise<AttemptOutcome> {
  return inSpan(
    `model ${m.key}`,
    { "gen_ai.system": m.provider.kind, "gen_ai.request.model": m.modelId },
    async (span) => {
      const outcome = await attemptModel(m, input);
      if (outcome.ok) {
        span.setAttributes({
          "gen_ai.usage.input_tokens": outcome.inputTokens,
          "gen_ai.usage.output_tokens": outcome.outputTokens,
        });
        if (outcome.reportedUsage) {
          span.setAttribute("svc.usage_clamped", true);
          observeUsageAnomaly(m.provider.name);
          componentLog("reasoning").warn(
            {
              provider: m.provider.name,
              model: m.modelId,
              reported: outcome.reportedUsage,
              counted: { inputTokens: outcome.inputTokens, outputTokens: outcome.outputTokens },
            },
            "a provider reported usage the call could not have used; counted within its bounds",
          );
        }
      } else span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.status });
      return outcome;
    },
    SpanKind.CLIENT,
  );
}

/** svc's text turns in the specification's prompt: a system turn's content is its text, others' a text part. */
function promptOf(messages: AttemptInput["messages"]): Prompt {
  return messages.map((m) =>
    m.role === "system"
      ? { role: "system" as const, content: m.content }
      : { role: m.role, content: [{ type: "text" as const, text: m.content }] },
  );
}

async function attemptModel(m: CatalogueModel, input: AttemptInput): Promise<AttemptOutcome> {
  const started = performance.now();
  const timeout = AbortSignal.timeout(input.timeoutMs);
  const signal = input.signal ? AbortSignal.any([input.signal, timeout]) : timeout;
  const sdk = await aiSdk();
  try {
    // The model's own call (the providers' language model specification), not `generateText`:
    // svc's messages are already plain text turns, and generateText's prompt validation (zod), step
    // loop and telemetry were a fifth of the CPU svc adds to a call (2.0-2.1 -> 1.6-1.7 ms, README).
    const model = await languageModel(sdk, m, input.timeoutMs);
    const result = await model.doGenerate({
      prompt: promptOf(input.messages),
      maxOutputTokens: input.maxTokens,
      temperature: input.temperature,
      abortSignal: signal,
    });
    let text = "";
    for (const part of result.content) if (part.type === "text") text += part.text;
    const reported = { inputTokens: result.usage.inputTokens.total, outputTokens: result.usage.outputTokens.total };
    const usage = boundedUsage(reported, {
      inputTokens: inputTokenBound(input.messages),
      outputTokens: input.maxTokens,
    });
    return {
      ok: true,
      text,
      inputTokens: usage.inputTokens,
      outputTokens: usage.outputTokens,
      latencyMs: Math.round(performance.now() - started),
      ...(usage.clamped ? { reportedUsage: reported } : {}),
    };
  } catch (e) {
    return { ok: false, ...classify(sdk, e), latencyMs: Math.round(performance.now() - started) };
  }
}
