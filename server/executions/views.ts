import type { AsyncExecution, CallbackAttempt, ExecutionLog } from "../db/generated/sqlite/client";

export type ExecutionStatusValue = "queued" | "processing" | "completed" | "failed" | "cancelled";
type Json = Record<string, unknown>;

/** The AsyncExecution shape of a row. */
export function executionView(e: AsyncExecution) {
  return {
    id: e.id,
    status: e.status as ExecutionStatusValue,
    queued_at: e.queuedAt.toISOString(),
    ...(e.taskId ? { task_id: e.taskId } : {}),
    agent_id: e.agentId,
    requester_passport_id: e.requesterPassportId,
    result_json: (e.resultJson as Json | null) ?? null,
    error_json: (e.errorJson as Json | null) ?? null,
    progress_percent: e.progressPercent,
    progress_message: e.progressMessage,
    callback_url: e.callbackUrl,
    callback_success: e.callbackSuccess,
    callback_attempts: e.callbackAttempts,
    max_attempts: e.maxAttempts,
    current_attempt: e.currentAttempt,
    started_at: e.startedAt?.toISOString() ?? null,
    completed_at: e.completedAt?.toISOString() ?? null,
    provenance_id: e.provenanceId,
  };
}

export function callbackAttemptView(a: CallbackAttempt) {
  return {
    id: a.id,
    attempt: a.attempt,
    status_code: a.statusCode,
    success: a.success,
    duration_ms: a.durationMs,
    error: a.error,
    next_attempt_at: a.nextAttemptAt?.toISOString() ?? null,
    created_at: a.createdAt.toISOString(),
  };
}

export function logLineView(l: ExecutionLog) {
  return {
    seq: l.seq,
    level: l.level as "debug" | "info" | "warn" | "error",
    line: l.line,
    created_at: l.createdAt.toISOString(),
    attempt: l.attempt,
  };
}

/** A handler's result as `result_json`: a JSON object as it is, anything else as `{value}`. */
export function resultJson(result: unknown): Json {
  return result !== null && typeof result === "object" && !Array.isArray(result)
    ? (result as Json)
    : { value: result ?? null };
}
