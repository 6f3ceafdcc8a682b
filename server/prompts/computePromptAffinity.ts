import type { Database, Db } from "../db/client";
import { averagesOf, promptCallGroups, type PromptCallGroup } from "./promptCallGroups";

const DAY_MS = 86_400_000;
/** The sample size at which a pair's evidence counts half: below it, scores stay near 0.5. */
export const AFFINITY_PRIOR_CALLS = 20;

export interface PromptAffinity {
  prompt_key: string;
  model_id: string;
  provider: string;
  sample_size: number;
  stats: ReturnType<typeof averagesOf>;
  affinity_score: number;
  /** The feedback signals behind the score (for evidence; not in the /v1 answer). */
  signals: { positive: number; negative: number; rephrases: number; corrections: number };
}

/**
 * How well each model serves each prompt, from the organization's recorded calls over the window
 * (summed by the database from the daily rollup, see promptCallGroups; the few groups are scored here). The score, 0..1 (README,
 * "Prompt affinity"):
 *
 *     quality  = (positive + 1) / (positive + negative + rephrases + corrections + 2)
 *     cost     = cheapest average cost among the prompt's models / this model's (1 when free)
 *     latency  = fastest average latency among the prompt's models / this model's (1 when 0)
 *     raw      = 0.4 × success_rate + 0.3 × quality + 0.15 × cost + 0.15 × latency
 *     affinity = 0.5 + (raw − 0.5) × n / (n + 20)
 *
 * so a pair with few calls stays near 0.5 and one with many is scored on its evidence. Sorted by
 * prompt key, then best score first. The learning worker proposes recommended models from this.
 */
export async function computePromptAffinity(
  db: Db,
  orgDid: string,
  opts: {
    engine: Database["engine"];
    windowDays?: number;
    promptKey?: string;
    /** Only prompts from this key on (a page's start: a prompt's scores depend on its own pairs only). */
    fromPromptKey?: string;
    minSample?: number;
    now?: Date;
  },
): Promise<PromptAffinity[]> {
  const now = opts.now ?? new Date();
  const since = new Date(now.getTime() - (opts.windowDays ?? 30) * DAY_MS);
  const groups = await promptCallGroups(db, opts.engine, orgDid, {
    since,
    promptKey: opts.promptKey,
    fromPromptKey: opts.fromPromptKey,
    minSample: opts.minSample,
  });
  return scorePromptAffinity(groups);
}

/** The affinity report of prompt × model groups (the formula above), in the report's order. */
export function scorePromptAffinity(groups: PromptCallGroup[]): PromptAffinity[] {
  const byPrompt = new Map<string, PromptCallGroup[]>();
  for (const g of groups) byPrompt.set(g.promptKey, [...(byPrompt.get(g.promptKey) ?? []), g]);
  const out: PromptAffinity[] = [];
  for (const [, pairs] of byPrompt) {
    const stats = pairs.map(averagesOf);
    const cheapest = Math.min(...stats.map((s) => s.avg_cost_usd));
    const fastest = Math.min(...stats.map((s) => s.avg_latency_ms));
    pairs.forEach((g, i) => {
      const s = stats[i]!;
      const feedback = g.positive + g.negative + g.rephrases + g.corrections;
      const quality = (g.positive + 1) / (feedback + 2);
      const cost = s.avg_cost_usd > 0 ? cheapest / s.avg_cost_usd : 1;
      const latency = s.avg_latency_ms > 0 ? fastest / s.avg_latency_ms : 1;
      const raw = 0.4 * (g.succeeded / g.calls) + 0.3 * quality + 0.15 * cost + 0.15 * latency;
      const score = 0.5 + (raw - 0.5) * (g.calls / (g.calls + AFFINITY_PRIOR_CALLS));
      out.push({
        prompt_key: g.promptKey,
        model_id: g.modelId,
        provider: g.provider,
        sample_size: g.calls,
        stats: s,
        affinity_score: Math.round(score * 10_000) / 10_000,
        signals: { positive: g.positive, negative: g.negative, rephrases: g.rephrases, corrections: g.corrections },
      });
    });
  }
  return out.sort(affinityOrder);
}

/** Prompt key, then best score first, then model and provider: the report's (and its cursor's) order. */
export function affinityOrder(a: AffinityKey, b: AffinityKey): number {
  return (
    cmp(a.prompt_key, b.prompt_key) ||
    b.affinity_score - a.affinity_score ||
    cmp(a.model_id, b.model_id) ||
    cmp(a.provider, b.provider)
  );
}

type AffinityKey = Pick<PromptAffinity, "prompt_key" | "affinity_score" | "model_id" | "provider">;
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
