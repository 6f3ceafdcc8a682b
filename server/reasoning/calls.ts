import type { z } from "zod";
import type { Db } from "../db/client";
import type { ReasoningAttempt as AttemptRow, ReasoningCall as CallRow } from "../db/generated/sqlite/client";
import { NotFound, ValidationFailed } from "../errors";
import type { Principal } from "../governance/principal";
import { keyset } from "../http/cursor";
import type {
  FEEDBACK_SIGNALS,
  ReasoningCall,
  ReasoningCallList,
  ReasoningCallListQuery,
  ReasoningFeedbackRequest,
} from "./schemas";

/** Recorded reasoning calls: `GET /v1/reasoning/calls`, `GET /v1/reasoning/calls/{id}`, feedback. */

type CallView = z.input<typeof ReasoningCall>;

function callView(c: CallRow, attempts?: AttemptRow[]): CallView {
  return {
    id: c.id,
    delegation_id: c.delegationId,
    actor_did: c.actorDid,
    entity_id: c.entityId,
    task: c.task as CallView["task"],
    complexity: c.complexity as CallView["complexity"],
    budget: c.budgetMode as CallView["budget"],
    pinned_model: c.pinnedModel,
    model: c.model,
    provider: c.provider,
    status: c.status as CallView["status"],
    reason: c.reason,
    alternatives: c.alternatives as string[],
    input_tokens: c.inputTokens,
    output_tokens: c.outputTokens,
    cost_usd: c.costUsd,
    reserved_usd: c.reservedUsd,
    duration_ms: c.durationMs,
    error_code: c.errorCode,
    error_message: c.errorMessage,
    provenance_id: c.provenanceId,
    request_id: c.requestId,
    feedback:
      c.feedbackScore === null
        ? null
        : {
            score: c.feedbackScore,
            signal: c.feedbackSignal as (typeof FEEDBACK_SIGNALS)[number] | null,
            comment: c.feedbackComment,
            created_at: c.feedbackAt!.toISOString(),
          },
    prompt_key: c.promptKey,
    prompt_version: c.promptVersion,
    created_at: c.createdAt.toISOString(),
    completed_at: c.completedAt?.toISOString() ?? null,
    ...(attempts
      ? {
          attempts: attempts.map((a) => ({
            attempt: a.attempt,
            model: a.model,
            provider: a.provider,
            status: a.status as "succeeded",
            error_message: a.errorMessage,
            input_tokens: a.inputTokens,
            output_tokens: a.outputTokens,
            cost_usd: a.costUsd,
            latency_ms: a.latencyMs,
            created_at: a.createdAt.toISOString(),
          })),
        }
      : {}),
  };
}

/** The organization's calls, newest first, filterable by model, delegation, entity and status. */
export async function listCalls(
  db: Db,
  principal: Principal,
  query: z.output<typeof ReasoningCallListQuery>,
  secret: Buffer,
): Promise<z.input<typeof ReasoningCallList>> {
  const { after, take, page } = keyset<CallRow>(secret, "reasoning-calls", query, (last) => [last.id]);
  const rows = await db.reasoningCall.findMany({
    where: {
      orgDid: principal.orgDid,
      ...(query.model ? { model: query.model } : {}),
      ...(query.delegation_id ? { delegationId: query.delegation_id } : {}),
      ...(query.entity_id ? { entityId: query.entity_id } : {}),
      ...(query.status ? { status: query.status } : {}),
      ...(after ? { id: { lt: after[0] as string } } : {}),
    },
    orderBy: { id: "desc" },
    take,
  });
  const { items, pagination } = page(rows);
  return { data: items.map((c) => callView(c)), pagination };
}

/** One call with each attempt of its fallback chain. */
export async function getCall(db: Db, principal: Principal, id: string): Promise<CallView> {
  const call = await db.reasoningCall.findFirst({ where: { id, orgDid: principal.orgDid } });
  if (!call) throw NotFound("reasoning call", id);
  const attempts = await db.reasoningAttempt.findMany({ where: { callId: id }, orderBy: { attempt: "asc" } });
  return callView(call, attempts);
}

/** Feedback on a call (the latest replaces the previous): a score and a comment, for people and learning. */
export async function recordFeedback(
  db: Db,
  principal: Principal,
  id: string,
  input: z.output<typeof ReasoningFeedbackRequest>,
): Promise<CallView> {
  if (input.score === undefined && input.signal === undefined)
    throw ValidationFailed([
      { field: "score", code: "REQUIRED_FIELD_MISSING", message: "A score or a signal is needed." },
    ]);
  // Each implies the other when absent, so old clients' scores count as signals, and signals as scores.
  const score = input.score ?? (input.signal === "positive" ? 1 : -1);
  const signal = input.signal ?? (score === 1 ? "positive" : score === -1 ? "negative" : null);
  const { count } = await db.reasoningCall.updateMany({
    where: { id, orgDid: principal.orgDid },
    data: {
      feedbackScore: score,
      feedbackSignal: signal,
      feedbackComment: input.comment ?? null,
      feedbackAt: new Date(),
    },
  });
  if (count === 0) throw NotFound("reasoning call", id);
  return getCall(db, principal, id);
}
