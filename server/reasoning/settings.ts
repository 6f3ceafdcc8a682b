import { readFileSync } from "node:fs";
import { z } from "zod";
import { processWide } from "../processWide";
import { ProviderConfig } from "./schemas";

/**
 * The reasoning area's settings, read from the environment once per process. They live beside
 * the area rather than in server/config.ts so that the area stays one folder; README.md's
 * configuration table lists them with the others.
 */
export interface ReasoningSettings {
  /** SVC_MODEL_PROVIDERS: providers every organization may use. */
  providers: z.output<typeof ProviderConfig>[];
  /** SVC_MODEL_PRICES_FILE: a JSON file shaped like modelTable.json whose entries replace the table's. */
  pricesFile: string | undefined;
  /** SVC_REASONING_DEFAULT_MAX_TOKENS: output tokens asked for (and reserved) when a call gives no max_tokens. */
  defaultMaxTokens: number;
  /** SVC_REASONING_TIMEOUT_MS: one attempt's time limit; past it the call falls back to the next model. */
  attemptTimeoutMs: number;
  /** SVC_REASONING_MAX_ATTEMPTS: the first choice and its fallbacks, at most. */
  maxAttempts: number;
  /** SVC_REASONING_DISCOVERY_TTL_SECONDS: how long a provider's own model list is kept. */
  discoveryTtlSeconds: number;
}

function int(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max)
    throw new Error(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  return value;
}

/** Parses SVC_MODEL_PROVIDERS, naming the first wrong field (a typo must stop the start, not route nowhere). */
export function parseProviders(raw: string | undefined): z.output<typeof ProviderConfig>[] {
  if (raw === undefined || raw.trim() === "") return [];
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (e) {
    throw new Error(`SVC_MODEL_PROVIDERS is not valid JSON: ${(e as Error).message}`);
  }
  const parsed = z.array(ProviderConfig).max(50).safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`SVC_MODEL_PROVIDERS: ${issue.path.join(".") || "(root)"}: ${issue.message}`);
  }
  const names = new Set<string>();
  for (const p of parsed.data) {
    if (names.has(p.name)) throw new Error(`SVC_MODEL_PROVIDERS: the provider name ${p.name} appears twice`);
    names.add(p.name);
  }
  return parsed.data;
}

function load(): ReasoningSettings {
  return {
    providers: parseProviders(process.env.SVC_MODEL_PROVIDERS),
    pricesFile: process.env.SVC_MODEL_PRICES_FILE || undefined,
    defaultMaxTokens: int("SVC_REASONING_DEFAULT_MAX_TOKENS", 1024, 1, 1_000_000),
    attemptTimeoutMs: int("SVC_REASONING_TIMEOUT_MS", 60_000, 100, 600_000),
    maxAttempts: int("SVC_REASONING_MAX_ATTEMPTS", 3, 1, 10),
    discoveryTtlSeconds: int("SVC_REASONING_DISCOVERY_TTL_SECONDS", 300, 1, 86_400),
  };
}

const held = processWide("reasoning.settings", () => ({ settings: undefined as ReasoningSettings | undefined }));

export function reasoningSettings(): ReasoningSettings {
  held.settings ??= load();
  return held.settings;
}

/** Forget the parsed settings (tests that change the environment). */
export function resetReasoningSettings(): void {
  held.settings = undefined;
}

/** Reads SVC_MODEL_PRICES_FILE (settings.ts keeps the file system out of the table's module). */
export function readPricesFile(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    throw new Error(`SVC_MODEL_PRICES_FILE ${path}: ${(e as Error).message}`);
  }
}
