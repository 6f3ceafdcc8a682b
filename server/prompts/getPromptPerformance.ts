import type { Database, Db } from "../db/client";
import type { Principal } from "../governance/principal";
import { findProfile } from "./getPrompt";
import { averagesOf, promptCallGroups } from "./promptCallGroups";

const DAY_MS = 86_400_000;

/**
 * `GET /v1/prompts/{key}/performance`: the prompt's recorded reasoning calls over the window
 * (those that named it with `prompt`, any version), in total and per model that answered, with the
 * feedback signals callers sent, and its recommended model.
 */
export async function getPromptPerformance(
  db: Db,
  engine: Database["engine"],
  principal: Principal,
  key: string,
  windowDays: number,
  now = new Date(),
) {
  const profile = await findProfile(db, principal.orgDid, key);
  const since = new Date(now.getTime() - windowDays * DAY_MS);
  const groups = await promptCallGroups(db, engine, principal.orgDid, { since, promptKey: key });
  const total = { calls: 0, succeeded: 0, timed: 0, durationSum: 0, costSum: 0, tokenSum: 0 };
  const signals = { positive: 0, negative: 0, rephrases: 0, corrections: 0 };
  for (const g of groups) {
    for (const k of Object.keys(total) as (keyof typeof total)[]) total[k] += g[k];
    for (const k of Object.keys(signals) as (keyof typeof signals)[]) signals[k] += g[k];
  }
  const overall = averagesOf(total);
  return {
    prompt_key: key,
    window: { start: since.toISOString(), end: now.toISOString() },
    stats: {
      total_calls: total.calls,
      avg_tokens: overall.avg_tokens,
      avg_cost_usd: overall.avg_cost_usd,
      avg_duration_ms: overall.avg_latency_ms,
      positive_signals: signals.positive,
      negative_signals: signals.negative,
      rephrases: signals.rephrases,
      corrections: signals.corrections,
    },
    model_breakdown: groups
      .sort((a, b) => b.calls - a.calls || a.modelId.localeCompare(b.modelId))
      .map((g) => ({ model_id: g.modelId, provider: g.provider, call_count: g.calls, ...averagesOf(g) })),
    recommended_model: profile.recommendedModel,
  };
}
