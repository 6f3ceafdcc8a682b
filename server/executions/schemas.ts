import { z } from "zod";
import { ListQuery, PaginationInfo } from "../http/listSchemas";
import { EXAMPLE } from "../openapi/examples";
import { AGENT_EXAMPLE } from "../agents/schemas";

// Pure zod: the console's Executions pages import these.

const Timestamp = z.string().describe("ISO 8601 date-time");

export const ExecutionStatus = z.enum(["queued", "processing", "completed", "failed", "cancelled"]);
export const FINAL_EXECUTION_STATUSES = ["completed", "failed", "cancelled"] as const;

const executionExample = {
  id: AGENT_EXAMPLE.executionId,
  status: "completed" as const,
  queued_at: "2026-11-21T09:32:00.000Z",
  task_id: AGENT_EXAMPLE.jobId,
  agent_id: AGENT_EXAMPLE.agentId,
  requester_passport_id: EXAMPLE.agentDid,
  result_json: { routed_to: "finance-approvers", amount: 1250 },
  error_json: null,
  progress_percent: 100,
  progress_message: "routed",
  callback_url: "https://hooks.example.com/svc/executions",
  callback_success: true,
  callback_attempts: 1,
  max_attempts: 3,
  current_attempt: 1,
  started_at: "2026-11-21T09:32:00.041Z",
  completed_at: "2026-11-21T09:32:00.219Z",
  provenance_id: EXAMPLE.recordId,
};

export const ExecutionAttempt = z
  .object({
    attempt: z.number().int().describe("1 on the first run"),
    status: z
      .enum(["running", "completed", "failed", "cancelled", "lost", "paused"])
      .describe(
        "lost: its worker stopped (crashed or frozen past its lease) before it ended; error says why. paused: it asked for an approval (ctx.approvals.request) and the run waits for the decision",
      ),
    worker_id: z.string().nullable().describe("The worker that ran it"),
    started_at: Timestamp,
    ended_at: Timestamp.nullable(),
    error: z
      .record(z.string(), z.unknown())
      .nullable()
      .describe(
        "{code, message, …} when it did not complete: a handler's error (with name and stack), or worker_lost / timeout with the cause of a lost attempt",
      ),
  })
  .meta({ id: "ExecutionAttempt" });

export const AsyncExecution = z
  .object({
    id: z.string(),
    status: ExecutionStatus,
    queued_at: Timestamp,
    task_id: z.string().optional().describe("The job that runs the execution"),
    agent_id: z.string().optional(),
    requester_passport_id: z
      .string()
      .optional()
      .describe("Who invoked it: the invoker's passport (or organization) DID"),
    result_json: z
      .record(z.string(), z.unknown())
      .nullable()
      .optional()
      .describe("The handler's result; a result that is not a JSON object is given as {value}"),
    error_json: z
      .record(z.string(), z.unknown())
      .nullable()
      .optional()
      .describe(
        "{code, message, …}: code is timeout, cancelled, delegation_revoked, memory_limit, stack_overflow, no_handler, syntax_error, handler_error, worker_lost or internal",
      ),
    progress_percent: z.number().int().min(0).max(100).optional(),
    progress_message: z.string().nullable().optional(),
    callback_url: z.string().nullable().optional(),
    callback_success: z
      .boolean()
      .nullable()
      .optional()
      .describe("null while no callback was attempted or it is still being retried"),
    callback_attempts: z.number().int().optional(),
    max_attempts: z.number().int().optional(),
    current_attempt: z.number().int().optional(),
    started_at: Timestamp.nullable().optional(),
    completed_at: Timestamp.nullable().optional(),
    provenance_id: z.string().nullable().optional().describe("The provenance record of the run (written when it ends)"),
    input: z
      .unknown()
      .optional()
      .describe(
        "Only in GET /v1/executions/{id}: the input the handler was given (null when none, or when the agent's manifest sets redact_input)",
      ),
    input_redacted: z
      .boolean()
      .optional()
      .describe(
        "Only in GET /v1/executions/{id}: true when the agent's manifest sets redact_input, so the input is kept for the run but never shown",
      ),
    attempts: z
      .array(ExecutionAttempt)
      .optional()
      .describe("Only in GET /v1/executions/{id}: every attempt, oldest first"),
  })
  .meta({ id: "AsyncExecution", example: executionExample });

export const ExecutionListQuery = ListQuery.extend({
  status: ExecutionStatus.optional().describe("Only executions in this status"),
  agent_id: z.string().min(1).max(100).optional().describe("Only executions of this agent"),
});

export const ExecutionList = z.object({ data: z.array(AsyncExecution), pagination: PaginationInfo }).meta({
  id: "ExecutionList",
  example: { data: [executionExample], pagination: { has_more: false, next_cursor: null } },
});

export const ExecutionIdParams = z.object({ id: z.string().min(1).max(100) });

export const CallbackAttempt = z.object({
  id: z.string(),
  attempt: z.number().int(),
  status_code: z.number().int().nullable(),
  success: z.boolean(),
  duration_ms: z.number().int(),
  error: z.string().nullable(),
  next_attempt_at: Timestamp.nullable(),
  created_at: Timestamp,
});

export const CallbackAttemptList = z.object({ data: z.array(CallbackAttempt) }).meta({
  id: "CallbackAttemptList",
  example: {
    data: [
      {
        id: "cba_01m806mp6w1x4c7v0b3n6m9q2s",
        attempt: 1,
        status_code: 500,
        success: false,
        duration_ms: 42,
        error: null,
        next_attempt_at: "2026-11-21T09:32:05.219Z",
        created_at: "2026-11-21T09:32:00.230Z",
      },
      {
        id: "cba_01m806mp6x5d8f1g4h7j0k3l6z",
        attempt: 2,
        status_code: 200,
        success: true,
        duration_ms: 38,
        error: null,
        next_attempt_at: null,
        created_at: "2026-11-21T09:32:05.260Z",
      },
    ],
  },
});

export const ExecutionLogLine = z.object({
  seq: z.number().int(),
  level: z.enum(["debug", "info", "warn", "error"]),
  line: z.string(),
  created_at: Timestamp,
  attempt: z.number().int().optional().describe("The attempt that logged it (1 on the first run)"),
});

export const ExecutionLogList = z.object({ data: z.array(ExecutionLogLine) }).meta({
  id: "ExecutionLogList",
  example: {
    data: [{ seq: 1, level: "info", line: "routing invoice inv_2041", created_at: "2026-11-21T09:32:00.100Z" }],
  },
});

export const CallbackSecret = z
  .object({ secret: z.string().describe("whsec_…: verify callbacks with it (Standard Webhooks)") })
  .meta({ id: "CallbackSecret", example: { secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" } });

export const RotatedCallbackSecret = z
  .object({
    secret: z.string().describe("The new secret; callbacks are signed with it from now on"),
    previous_expires_at: Timestamp.nullable().describe(
      "Until then callbacks also carry a signature with the previous secret",
    ),
  })
  .meta({
    id: "RotatedCallbackSecret",
    example: { secret: "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD", previous_expires_at: "2026-11-22T09:30:00.000Z" },
  });
