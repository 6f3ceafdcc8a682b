import type { z } from "zod";
import { config } from "../config";
import type { Database, Db } from "../db/client";
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
    if (outcome.kind === "over_budget")
      throw budgetExceeded(tightest!, outcome.requiredUsd, outcome.detail, config().publicUrl);
    throw domainError("reasoning_unavailable", outcome.detail);
  }
  const chain = outcome.chain;
  const reservedUsd = budgets.length > 0 ? Math.max(...chain.map((r) => r.worstCaseUsd)) : 0;
  const callId = newId("rsn");
  const selected = chain[0]!.model;
  const alternatives = chain.slice(1).map((r) => r.model.modelId);
  await db.reasoningCall.create({
    data: {
      id: callId,
      orgDid: principal.orgDid,
      delegationId: principal.delegationId || null,
      actorDid: principal.actorDid,
      entityId: request.entity_id ?? null,
      task,
      complexity,
      budgetMode: budget,
      pinnedModel: request.pinned_model ?? null,
      model: selected.modelId,
      provider: selected.provider.name,
      status: "pending",
      reason: outcome.reason,
      alternatives,
      reservedUsd,
      requestId: scope.requestId,
      promptKey: withPrompt.prompt?.key ?? null,
      promptVersion: withPrompt.prompt?.version ?? null,
    },
  });
  await reserve(db, budgets, callId, reservedUsd);
  scope.onRecord(async (tx, record) => {
    await tx.reasoningCall.update({ where: { id: callId }, data: { provenanceId: record.id } });
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
      : "");
  await database.writeTx(async (tx) => {
    await tx.reasoningAttempt.createMany({
      data: attempts.map((a, i) => ({
        id: newId("rsa"),
        callId,
        orgDid: principal.orgDid,
        attempt: i + 1,
        model: a.ranked.model.modelId,
        provider: a.ranked.model.provider.name,
        complexity: request.complexity ?? "medium",
        status: a.outcome.ok ? "succeeded" : a.outcome.status,
        errorMessage: a.outcome.ok ? null : a.outcome.message,
        inputTokens: a.outcome.ok ? a.outcome.inputTokens : 0,
        outputTokens: a.outcome.ok ? a.outcome.outputTokens : 0,
        costUsd: round(costOf(a)),
        latencyMs: a.outcome.latencyMs,
        createdAt: a.at,
      })),
    });
    await tx.reasoningCall.update({
      where: { id: callId },
      data: {
        status: success ? "succeeded" : "failed",
        model: (success ?? attempts[0])?.ranked.model.modelId,
        provider: (success ?? attempts[0])?.ranked.model.provider.name,
        reason,
        inputTokens: success?.outcome.inputTokens ?? 0,
        outputTokens: success?.outcome.outputTokens ?? 0,
        costUsd,
        durationMs,
        errorCode: success ? null : "model_call_failed",
        errorMessage: success
          ? null
          : failures.map((a) => `${a.ranked.model.modelId}: ${(a.outcome as { message: string }).message}`).join("; "),
        completedAt: new Date(),
      },
    });
    if (budgeted) await settle(tx, callId, costUsd);
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
