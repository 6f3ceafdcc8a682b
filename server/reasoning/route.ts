import type { z } from "zod";
import type { CatalogueModel } from "./catalogue";
import type { Measured } from "./measuredPerformance";
import { ruleFor, ruleModel, targetOf, type Rule } from "./routingRules";
import type { ModelCapabilities, ReasoningBudgetMode, ReasoningComplexity, ReasoningTask } from "./schemas";

/**
 * The router: which model answers a call, and which ones it falls back to. Pure (no I/O), so its
 * cost is the bench's "router overhead" and every rule can be tested on a made-up catalogue.
 *
 * Candidates: the active models (the experimental ones only when none is active; deprecated ones
 * never), whose context length holds the call's estimated input (UTF-8 bytes / 4) plus max_tokens,
 * and, under a delegation budget, whose price is known.
 *
 * For each candidate:
 *   quality = capability[task] × (0.5 + 0.5 × reliability)      reliability measured, 1 before any call
 *   price   = worst case of this call in USD (input bound × input price + max_tokens × output price)
 *   relative price = price / the most expensive candidate's price (0 when every candidate is free)
 * and by budget mode:
 *   unlimited  score = quality
 *   optimize   score = quality − w × relative price,  w = 0.6 simple, 0.3 medium, 0.1 complex
 *   minimize   the cheapest candidate whose quality reaches the complexity's floor
 *              (0 simple, 0.6 medium, 0.75 complex; all candidates if none does), quality breaking ties
 * The first is selected; the next ones (up to SVC_REASONING_MAX_ATTEMPTS in all) are its fallbacks.
 *
 * Under a budget with `remaining` USD left: optimize keeps only the candidates whose worst case
 * fits (so it picks a cheaper model that fits); minimize and unlimited refuse when their choice
 * does not fit (the caller asked for the cheapest or the best, not for something else); fallbacks
 * are the ranked candidates that fit. A pinned model wins, alone (no fallback).
 *
 * Routing rules (routingRules.ts): when the organization has a rule for the call's task and
 * complexity (or for the task), its model goes first if it is an active candidate (context long
 * enough, priced under a budget) whose worst case fits the budget; the others follow in their
 * ranked order as fallbacks, and the reason says the rule chose it. A rule whose model is
 * missing, not active or over the budget is passed over, and the reason says so.
 */
export type Task = z.output<typeof ReasoningTask>;
export type Complexity = z.output<typeof ReasoningComplexity>;
export type BudgetMode = z.output<typeof ReasoningBudgetMode>;

export const TASK_SCORE: Record<Task, keyof z.output<typeof ModelCapabilities>> = {
  reasoning: "reasoning",
  coding: "coding",
  summarization: "summarization",
  creative: "creative_writing",
  math: "math_reasoning",
  general: "instruction_following",
};
export const PRICE_WEIGHT: Record<Complexity, number> = { simple: 0.6, medium: 0.3, complex: 0.1 };
export const QUALITY_FLOOR: Record<Complexity, number> = { simple: 0, medium: 0.6, complex: 0.75 };

export interface RouteRequest {
  task: Task;
  complexity: Complexity;
  budget: BudgetMode;
  pinnedModel?: string;
  /** Upper bound of the input tokens (see inputTokenBound). */
  inputTokens: number;
  maxTokens: number;
  maxAttempts: number;
  /** What the tightest delegation budget leaves; undefined without a budget. */
  remainingUsd?: number;
  /** The organization's routing rules. */
  rules?: readonly Rule[];
  /** The model the call's prompt recommends (its profile's `recommended_model`): preferred before a routing rule. */
  promptRecommendation?: { promptKey: string; model: string };
}

export interface Ranked {
  model: CatalogueModel;
  quality: number;
  worstCaseUsd: number;
  score: number;
}

export type RouteOutcome =
  | { ok: true; chain: Ranked[]; reason: string }
  | { ok: false; kind: "no_model"; detail: string }
  | { ok: false; kind: "unknown_pinned"; detail: string }
  | { ok: false; kind: "over_budget"; requiredUsd: number; detail: string }
  /** Under a budget, the only models that could take the call have no known price. */
  | { ok: false; kind: "unpriced"; models: string[]; detail: string };

/** The most a call can cost on `m`. */
export function worstCaseUsd(m: CatalogueModel, inputTokens: number, maxTokens: number): number {
  return (inputTokens * m.inputCostPerMillion + maxTokens * m.outputCostPerMillion) / 1_000_000;
}

/**
 * An upper bound of the input tokens, without a tokenizer: byte-level BPE tokenizers (OpenAI's,
 * Llama's, Anthropic's) never make more tokens than UTF-8 bytes, plus each message's framing
 * (role and separators, at most 4 tokens in OpenAI's accounting) and 3 for the reply's priming.
 * It over-reserves (English runs about 4 bytes a token), which is the safe side of a budget.
 */
export function inputTokenBound(messages: readonly { content: string }[]): number {
  let bytes = 0;
  for (const m of messages) bytes += Buffer.byteLength(m.content, "utf8") + 4;
  return bytes + 3;
}

const fmt = (n: number) => (Math.round(n * 100) / 100).toFixed(2);
const usd = (n: number) => `$${n < 0.01 ? n.toPrecision(2) : n.toFixed(4)}`;

export function route(
  models: readonly CatalogueModel[],
  measured: ReadonlyMap<string, Measured>,
  req: RouteRequest,
): RouteOutcome {
  const budgeted = req.remainingUsd !== undefined;
  const fits = (r: Ranked) => !budgeted || r.worstCaseUsd <= req.remainingUsd! + 1e-12;
  const rank = (m: CatalogueModel): Ranked => {
    const reliability = measured.get(m.key)?.reliability ?? 1;
    const quality = m.capabilities[TASK_SCORE[req.task]] * (0.5 + 0.5 * reliability);
    return { model: m, quality, worstCaseUsd: worstCaseUsd(m, req.inputTokens, req.maxTokens), score: quality };
  };

  if (req.pinnedModel) {
    const pinned = models.find((m) => m.key === req.pinnedModel) ?? models.find((m) => m.modelId === req.pinnedModel);
    if (!pinned) return { ok: false, kind: "unknown_pinned", detail: `No model ${req.pinnedModel} in the catalogue.` };
    const r = rank(pinned);
    if (budgeted && !pinned.priced)
      return {
        ok: false,
        kind: "unpriced",
        models: [pinned.key],
        detail: `${pinned.modelId} (${pinned.provider.name}) has no known price, so it cannot be used under a delegation budget.`,
      };
    if (!fits(r))
      return {
        ok: false,
        kind: "over_budget",
        requiredUsd: r.worstCaseUsd,
        detail: `The pinned model ${pinned.modelId} may cost up to ${usd(r.worstCaseUsd)} for this call (max_tokens ${req.maxTokens}); the budget leaves ${usd(req.remainingUsd!)}.`,
      };
    return {
      ok: true,
      chain: [r],
      reason: `pinned_model ${pinned.modelId} (${pinned.provider.name}): routing skipped`,
    };
  }

  const estimated = Math.ceil(req.inputTokens / 4) + req.maxTokens;
  const usable = models.filter(
    (m) => m.status !== "deprecated" && m.contextLength >= estimated && (!budgeted || m.priced),
  );
  const active = usable.filter((m) => m.status === "active");
  const pool = active.length > 0 ? active : usable;
  if (pool.length === 0 && budgeted) {
    // What the call could use but for the budget: models without a price.
    const unpriced = models.filter((m) => m.status !== "deprecated" && m.contextLength >= estimated && !m.priced);
    if (unpriced.length > 0)
      return {
        ok: false,
        kind: "unpriced",
        models: unpriced.map((m) => m.key),
        detail: `Your delegation has a budget, and no model that could take this call has a known price: ${unpriced
          .slice(0, 5)
          .map((m) => `${m.modelId} (${m.provider.name})`)
          .join(
            ", ",
          )}${unpriced.length > 5 ? ` and ${unpriced.length - 5} more` : ""}. A call under a budget needs the price of its model.`,
      };
  }
  if (pool.length === 0)
    return {
      ok: false,
      kind: "no_model",
      detail:
        models.length === 0
          ? "No model provider offers a model."
          : `None of the ${models.length} catalogue models is usable for this call (deprecated, too small a context for about ${estimated} tokens${budgeted ? ", or without a known price under a budget" : ""}).`,
    };

  let ranked = pool.map(rank);
  const maxPrice = Math.max(...ranked.map((r) => r.worstCaseUsd));
  if (req.budget === "optimize") {
    const w = PRICE_WEIGHT[req.complexity];
    for (const r of ranked) r.score = r.quality - w * (maxPrice > 0 ? r.worstCaseUsd / maxPrice : 0);
    ranked.sort((a, b) => b.score - a.score || a.worstCaseUsd - b.worstCaseUsd);
  } else if (req.budget === "minimize") {
    const floor = QUALITY_FLOOR[req.complexity];
    const good = ranked.filter((r) => r.quality >= floor);
    ranked = (good.length > 0 ? good : ranked).sort((a, b) => a.worstCaseUsd - b.worstCaseUsd || b.quality - a.quality);
    for (const r of ranked) r.score = r.quality;
  } else {
    ranked.sort((a, b) => b.score - a.score || a.worstCaseUsd - b.worstCaseUsd);
  }

  // A preferred model goes first when it is an active candidate that fits the budget: the one the
  // call's prompt recommends, else the routing rule's. One passed over lets the next one try.
  const rule = req.rules ? ruleFor(req.rules, req.task, req.complexity) : undefined;
  const preferences: { who: string; chosenBy: string; model: string }[] = [];
  if (req.promptRecommendation)
    preferences.push({
      who: `prompt ${req.promptRecommendation.promptKey}'s recommendation`,
      chosenBy: `recommended for prompt ${req.promptRecommendation.promptKey}`,
      model: req.promptRecommendation.model,
    });
  if (rule) {
    const target = targetOf(rule.task, rule.complexity);
    preferences.push({
      who: `routing rule ${target}`,
      chosenBy: `chosen by the routing rule ${target}`,
      model: rule.model,
    });
  }
  let ruled: Ranked | undefined;
  let chosenBy = "";
  let ruleNote = "";
  for (const p of preferences) {
    const wanted = ruleModel(models, p.model);
    // A preference overrides minimize's quality floor, not the pool (active, context, priced under a budget).
    const candidate =
      wanted && pool.includes(wanted) ? (ranked.find((r) => r.model === wanted) ?? rank(wanted)) : undefined;
    if (!wanted) ruleNote += `; ${p.who} prefers ${p.model}, which is not in the catalogue: passed over`;
    else if (wanted.status !== "active")
      ruleNote += `; ${p.who} prefers ${wanted.modelId}, which is ${wanted.status}: passed over`;
    else if (!candidate)
      ruleNote += `; ${p.who} prefers ${wanted.modelId}, which cannot take this call (context${budgeted ? " or price" : ""}): passed over`;
    else if (!fits(candidate))
      ruleNote += `; ${p.who} prefers ${wanted.modelId}, which may cost up to ${usd(candidate.worstCaseUsd)}, over the remaining budget (${usd(req.remainingUsd!)}): passed over`;
    else {
      ruled = candidate;
      chosenBy = p.chosenBy;
      ranked = [candidate, ...ranked.filter((r) => r !== candidate)];
      break;
    }
  }

  const first = ranked[0]!;
  let skipped = 0;
  if (budgeted) {
    if (req.budget !== "optimize" && !fits(first)) {
      const cheaper = ranked.find(fits);
      return {
        ok: false,
        kind: "over_budget",
        requiredUsd: first.worstCaseUsd,
        detail: `${req.budget} selects ${first.model.modelId}, which may cost up to ${usd(first.worstCaseUsd)} for this call (max_tokens ${req.maxTokens}); the budget leaves ${usd(req.remainingUsd!)}.${cheaper ? ` With budget "optimize", ${cheaper.model.modelId} (up to ${usd(cheaper.worstCaseUsd)}) would fit.` : ""}`,
      };
    }
    const fitting = ranked.filter(fits);
    skipped = ranked.length - fitting.length;
    if (fitting.length === 0) {
      const cheapest = ranked.reduce((a, b) => (b.worstCaseUsd < a.worstCaseUsd ? b : a));
      return {
        ok: false,
        kind: "over_budget",
        requiredUsd: cheapest.worstCaseUsd,
        detail: `No model fits the budget: the cheapest, ${cheapest.model.modelId}, may cost up to ${usd(cheapest.worstCaseUsd)} for this call (max_tokens ${req.maxTokens}); the budget leaves ${usd(req.remainingUsd!)}.`,
      };
    }
    ranked = fitting;
  }
  const chain = ranked.slice(0, req.maxAttempts);
  const selected = chain[0]!;
  const why = ruled
    ? `${chosenBy} (quality ${fmt(selected.quality)}, up to ${usd(selected.worstCaseUsd)})`
    : req.budget === "minimize"
      ? `the cheapest (up to ${usd(selected.worstCaseUsd)}) with quality ${fmt(selected.quality)} ≥ ${QUALITY_FLOOR[req.complexity]}`
      : req.budget === "optimize"
        ? `scored ${fmt(selected.score)} (quality ${fmt(selected.quality)}, price weight ${PRICE_WEIGHT[req.complexity]}, up to ${usd(selected.worstCaseUsd)})`
        : `the best quality, ${fmt(selected.quality)}, price ignored`;
  const next = chain
    .slice(1)
    .map((r) => `${r.model.modelId} ${fmt(r.score)}`)
    .join(", ");
  const reason =
    `${req.budget} for ${req.task} at ${req.complexity} complexity among ${pool.length} ${active.length > 0 ? "active" : "experimental"} model(s): ` +
    `${selected.model.modelId} (${selected.model.provider.name}) ${why}` +
    (next ? `; fallbacks: ${next}` : "") +
    (skipped > 0 ? `; ${skipped} model(s) over the remaining budget (${usd(req.remainingUsd!)}) skipped` : "") +
    ruleNote;
  return { ok: true, chain, reason };
}
