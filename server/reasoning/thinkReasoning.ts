import type { z } from "zod";
import { config } from "../config";
import { sqlIn, type Database, type Db } from "../db/client";
import { domainError, ValidationFailed } from "../errors";
import type { CallScope } from "../governance/governCall";
import type { Principal } from "../governance/principal";
import { newId } from "../ids";
import { budgetExceeded, lockedBudgetStates, reserve, round, settle } from "./budgets";
import { callModel, type AttemptOutcome } from "./callModel";
import { withPromptMessages } from "./promptMessages";
import { inputTokenBound, route, type Ranked } from "./route";
import { routingCatalogue } from "./routingCatalogue";
import type { ReasoningThinkRequest, ReasoningThinkResponse } from "./schemas";
import { reasoningSettings } from "./settings";

/** The request with its `prompt` rendered into `messages` (promptMessages.ts). */
type Request = Awaited<ReturnType<typeof withPromptMessages>>["request"];
type Answer = z.output<typeof ReasoningThinkResponse>;

/**
 * A routed reasoning call, in two steps around its transaction:
 *
 * 1. Admission, inside the governed call's write transaction (`admitThink`): route over the
 *    organization's catalogue, lock the delegation chain's budgets and reserve the worst case
 *    (see budgets.ts), record the call as `pending`. Its provenance record commits with it.
 * 2. After commit (`runThink`, nothing locked meanwhile, so a slow provider holds no lock): the
 *    selected model, then each fallback on a provider error, timeout or rate limit; then one
 *    short transaction records the attempts, the outcome and the cost, and settles the budget
 *    reservations to the real cost (usage × price). When every attempt failed the call is
 *    answered `model_call_failed` (502), recorded as failed, its reservation settled to what the
 *    attempts cost (nothing, unless a provider reported usage).
 *
 * A process that dies between the two leaves the call pending; the `reasoning.settleStale` task
 * settles such reservations at their worst case (what the provider billed is unknown).
 */
export interface Admitted {
  callId: string;
  /** The answer, completed in place by `run`. */
  answer: Answer;
  run(database: Database, signal?: AbortSignal): Promise<void>;
}

export async function admitThink(
  scope: Pick<CallScope, "db" | "database" | "principal" | "requestId" | "onRecord">,
  asked: z.output<typeof ReasoningThinkRequest>,
): Promise<Admitted> {
  const { db, principal } = scope;
  const withPrompt = await withPromptMessages(db, principal.orgDid, asked);
  const request = withPrompt.request;
  const settings = reasoningSettings();
  const task = request.task ?? "general";
  const complexity = request.complexity ?? "medium";
  const budget = request.budget ?? "optimize";
  const maxTokens = request.max_tokens ?? settings.defaultMaxTokens;
  const { models, measured, rules } = await routingCatalogue(db, principal.orgDid);
  if (models.length === 0 || !models.some((m) => m.status !== "deprecated"))
    throw domainError(
      "reasoning_unavailable",
      models.length === 0
        ? "No model provider is configured for your organization, or none of them offers a model right now."
        : "Every model of the configured providers is deprecated.",
    );
  const budgets = await lockedBudgetStates(db, scope.database.engine, principal.chain);
  const tightest = budgets[0];
  const inputTokens = inputTokenBound(request.messages);
  const outcome = route(models, measured, {
    task,
    complexity,
    budget,
    pinnedModel: request.pinned_model,
    inputTokens,
    maxTokens,
    maxAttempts: settings.maxAttempts,
    remainingUsd: tightest?.remainingUsd,
    rules,
    promptRecommendation: withPrompt.prompt?.recommendedModel
      ? { promptKey: withPrompt.prompt.key, model: withPrompt.prompt.recommendedModel }
      : undefined,
  });
  if (!outcome.ok) {
    if (outcome.kind === "unknown_pinned")
      throw ValidationFailed([
        {
          field: "pinned_model",
          code: "UNKNOWN_MODEL",
          message: `${outcome.detail} See GET /v1/reasoning/models.`,
          received: request.pinned_model!.slice(0, 200),
        },
      ]);
    if (outcome.kind === "unpriced")
      throw domainError("model_unpriced", outcome.detail, { unpriced_models: outcome.models });
    if (outcome.kind === "over_budget")
      throw budgetExceeded(tightest!, outcome.requiredUsd, outcome.detail, config().publicUrl);
    throw domainError("reasoning_unavailable", outcome.detail);
  }
  const chain = outcome.chain;
  const reservedUsd = budgets.length > 0 ? Math.max(...chain.map((r) => r.worstCaseUsd)) : 0;
  const callId = newId("rsn");
  const selected = chain[0]!.model;
  const alternatives = chain.slice(1).map((r) => r.model.modelId);
  const q = sqlIn(db, scope.database.engine);
  // Raw SQL: the admission's row is one INSERT on the call's hot path (Prisma's costs ~1 ms here).
  await q.execute(
    `INSERT INTO "reasoning_call" ("id","org_did","delegation_id","actor_did","entity_id","task","complexity","budget_mode","pinned_model","model","provider","status","reason","alternatives","reserved_usd","request_id","prompt_key","prompt_version","created_at")
     VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,'pending',$12,$13,$14,$15,$16,$17,$18)`,
    [
      callId,
      principal.orgDid,
      principal.delegationId || null,
      principal.actorDid,
      request.entity_id ?? null,
      task,
      complexity,
      budget,
      request.pinned_model ?? null,
      selected.modelId,
      selected.provider.name,
      outcome.reason,
      JSON.stringify(alternatives),
      reservedUsd,
      scope.requestId,
      withPrompt.prompt?.key ?? null,
      withPrompt.prompt?.version ?? null,
      new Date(),
    ],
  );
  await reserve(db, scope.database.engine, budgets, callId, reservedUsd);
  scope.onRecord(async (_tx, record) => {
    await q.execute(`UPDATE "reasoning_call" SET "provenance_id" = $1 WHERE "id" = $2`, [record.id, callId]);
  });
  const answer: Answer = {
    // What an Idempotency-Key replay shows: the admission; the call itself is GET /v1/reasoning/calls/{id}.
    success: false,
    data: {
      model: selected.modelId,
      provider: selected.provider.name,
      text: "",
      usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
    },
    metadata: {
      costUsd: 0,
      durationMs: 0,
      routingDecision: { selected: selected.modelId, reason: outcome.reason, alternatives },
      call_id: callId,
    },
  };
  const admittedAt = performance.now();
  return {
    callId,
    answer,
    run: (database, signal) =>
      runThink(database, principal, callId, chain, request, maxTokens, answer, admittedAt, budgets.length > 0, signal),
  };
}

async function runThink(
  database: Database,
  principal: Principal,
  callId: string,
  chain: Ranked[],
  request: Request,
  maxTokens: number,
  answer: Answer,
  admittedAt: number,
  budgeted: boolean,
  signal?: AbortSignal,
): Promise<void> {
  const settings = reasoningSettings();
  const attempts: { ranked: Ranked; outcome: AttemptOutcome; at: Date }[] = [];
  let success: { ranked: Ranked; outcome: Extract<AttemptOutcome, { ok: true }> } | undefined;
  for (const ranked of chain) {
    if (signal?.aborted) break;
    const at = new Date();
    const outcome = await callModel(ranked.model, {
      messages: request.messages,
      temperature: request.temperature,
      maxTokens,
      timeoutMs: settings.attemptTimeoutMs,
      signal,
    });
    attempts.push({ ranked, outcome, at });
    if (outcome.ok) {
      success = { ranked, outcome };
      break;
    }
  }
  const costOf = (a: { ranked: Ranked; outcome: AttemptOutcome }) =>
    a.outcome.ok
      ? (a.outcome.inputTokens * a.ranked.model.inputCostPerMillion +
          a.outcome.outputTokens * a.ranked.model.outputCostPerMillion) /
        1_000_000
      : 0;
  const costUsd = round(attempts.reduce((sum, a) => sum + costOf(a), 0));
  const durationMs = Math.round(performance.now() - admittedAt);
  const failures = attempts.filter((a) => !a.outcome.ok);
  const reason =
    answer.metadata.routingDecision.reason +
    (failures.length > 0
      ? `; ${failures.map((a) => `${a.ranked.model.modelId} failed (${(a.outcome as { status: string }).status})`).join(", ")}${success ? `, answered by ${success.ranked.model.modelId}` : ""}`
      : "") +
    attempts.map((a) => usageAnomalyNote(a.ranked, a.outcome)).join("");
  // One short transaction on the raw driver: it runs after every call's provider round trip, where
  // Prisma's interactive transaction and its createMany cost several milliseconds of CPU.
  const completedAt = new Date();
  const answered = success ?? attempts[0];
  await database.raw.transaction(async (q) => {
    if (attempts.length > 0) {
      const rows = attempts.map((a, i) => [
        newId("rsa"),
        callId,
        principal.orgDid,
        i + 1,
        a.ranked.model.modelId,
        a.ranked.model.provider.name,
        request.complexity ?? "medium",
        a.outcome.ok ? "succeeded" : a.outcome.status,
        a.outcome.ok ? null : a.outcome.message,
        a.outcome.ok ? a.outcome.inputTokens : 0,
        a.outcome.ok ? a.outcome.outputTokens : 0,
        round(costOf(a)),
        a.outcome.latencyMs,
        a.at,
      ]);
      await q.execute(
        `INSERT INTO "reasoning_attempt" ("id","call_id","org_did","attempt","model","provider","complexity","status","error_message","input_tokens","output_tokens","cost_usd","latency_ms","created_at") VALUES ${rows
          .map((r, i) => `(${r.map((_, j) => `$${i * r.length + j + 1}`).join(",")})`)
          .join(",")}`,
        rows.flat(),
      );
    }
    await q.execute(
      `UPDATE "reasoning_call" SET "status" = $1, "model" = COALESCE($2, "model"), "provider" = COALESCE($3, "provider"),
         "reason" = $4, "input_tokens" = $5, "output_tokens" = $6, "cost_usd" = $7, "duration_ms" = $8,
         "error_code" = $9, "error_message" = $10, "completed_at" = $11
       WHERE "id" = $12`,
      [
        success ? "succeeded" : "failed",
        answered?.ranked.model.modelId ?? null,
        answered?.ranked.model.provider.name ?? null,
        reason,
        success?.outcome.inputTokens ?? 0,
        success?.outcome.outputTokens ?? 0,
        costUsd,
        durationMs,
        success ? null : "model_call_failed",
        success
          ? null
          : failures.map((a) => `${a.ranked.model.modelId}: ${(a.outcome as { message: string }).message}`).join("; "),
        completedAt,
        callId,
      ],
    );
    if (budgeted) await settle(q, callId, costUsd, completedAt);
  });
  answer.metadata.routingDecision.reason = reason;
  answer.metadata.durationMs = durationMs;
  answer.metadata.costUsd = costUsd;
  if (!success) {
    throw domainError(
      "model_call_failed",
      `Every model of the fallback chain failed: ${failures.map((a) => `${a.ranked.model.modelId} (${(a.outcome as { status: string }).status})`).join(", ")}.`,
      {
        call_id: callId,
        attempts: attempts.map((a) => ({
          model: a.ranked.model.modelId,
          provider: a.ranked.model.provider.name,
          status: a.outcome.ok ? "succeeded" : a.outcome.status,
          message: a.outcome.ok ? null : a.outcome.message,
        })),
      },
    );
  }
  answer.success = true;
  answer.data = {
    model: success.ranked.model.modelId,
    provider: success.ranked.model.provider.name,
    text: success.outcome.text,
    usage: {
      inputTokens: success.outcome.inputTokens,
      outputTokens: success.outcome.outputTokens,
      totalTokens: success.outcome.inputTokens + success.outcome.outputTokens,
    },
  };
  answer.metadata.routingDecision.selected = success.ranked.model.modelId;
  answer.metadata.routingDecision.alternatives = chain.filter((r) => r !== success.ranked).map((r) => r.model.modelId);
}

/** The call's record of a provider's out-of-bounds usage (callModel.ts's boundedUsage): what it said, what was counted. */
function usageAnomalyNote(ranked: Ranked, outcome: AttemptOutcome): string {
  if (!outcome.ok || !outcome.reportedUsage) return "";
  const { inputTokens, outputTokens } = outcome.reportedUsage;
  return `; usage anomaly: ${ranked.model.modelId} reported ${inputTokens ?? "no"} input and ${outputTokens ?? "no"} output tokens, counted as ${outcome.inputTokens} and ${outcome.outputTokens}`;
}
