import { DbNull } from "@prisma/client/runtime/client";
import { config } from "../config";
import { afterCommit, sqlIn, type Database, type Db } from "../db/client";
import { sqliteTimestamp } from "../db/raw";
import { commitGrouped } from "../db/groupCommit";
import type { ExecutionAttempt } from "../db/generated/sqlite/client";
import { jobLeaseMs, WorkerLost, type ClaimedJob } from "../jobs";
import type { SandboxOutcome } from "../sandbox/pool";
import { lineLog } from "../telemetry/log";

// The attempt history of an execution: one row per claim of its run job, opened when the run
// starts and closed with how it ended. An attempt whose worker vanished (crashed, or frozen past
// its lease) is closed by whoever runs the next one, or by the job's exhaustion, saying why.

const attemptId = (executionId: string, attempt: number) => `${executionId}:${attempt}`;

/** Error codes that mean the attempt was stopped rather than failed. */
const STOPPED = new Set(["cancelled", "delegation_revoked", "delegation_expired"]);

/**
 * Opens attempt `job.attempts` of an execution, in the transaction that moves it to processing.
 * Earlier attempts left open lost their worker: each is closed (`lost`, with `worker_lost` or
 * `timeout` and the cause), and a line saying so goes to the execution's log and the worker's.
 */
export async function beginAttempt(
  tx: Db,
  job: ClaimedJob,
  executionId: string,
  timeoutMs: number,
  log: (line: string) => void,
): Promise<void> {
  const now = new Date();
  if (job.attempts > 1) {
    await closeLostAttempts(tx, executionId, job.attempts, timeoutMs, log, now);
    // A run resumed after a pause runs again: "Approval … approved; resuming" is over, and would
    // otherwise stay the execution's message after it completed (the agent's next progress replaces it).
    const previous = await tx.executionAttempt.findUnique({
      where: { id: attemptId(executionId, job.attempts - 1) },
      select: { status: true },
    });
    if (previous?.status === "paused")
      await tx.asyncExecution.updateMany({
        where: { id: executionId, status: "processing" },
        data: { progressMessage: null },
      });
  }
  // An attempt given back uncounted (the database failed during it) is claimed again under the same number.
  await tx.executionAttempt.upsert({
    where: { id: attemptId(executionId, job.attempts) },
    create: {
      id: attemptId(executionId, job.attempts),
      executionId,
      attempt: job.attempts,
      workerId: job.workerId,
      status: "running",
      startedAt: now,
    },
    update: { workerId: job.workerId, status: "running", startedAt: now, endedAt: null, errorJson: DbNull },
  });
}

/**
 * Opens a later attempt of a run that has just moved to processing, closing the attempts its lost
 * workers left open (`beginAttempt`, in a transaction of its own). A first attempt's row is
 * written with the run's start (runExecution.ts, `runStarts`).
 */
export async function openAttempt(
  db: Database,
  job: ClaimedJob,
  executionId: string,
  timeoutMs: number,
  log: (line: string) => void,
): Promise<void> {
  return commitGrouped(db, (tx) => beginAttempt(tx, job, executionId, timeoutMs, log));
}

/** Closes the attempt with the sandbox's outcome, in the transaction that records it (and rolls back with it). */
export async function endAttempt(tx: Db, executionId: string, attempt: number, outcome: SandboxOutcome): Promise<void> {
  const status = outcome.ok
    ? "completed"
    : outcome.error.code === "awaiting_approval"
      ? "paused"
      : STOPPED.has(outcome.error.code)
        ? "cancelled"
        : "failed";
  const engine = config().engine;
  const now = new Date();
  await sqlIn(tx, engine).execute(
    `UPDATE "execution_attempt" SET "status" = $2, "error_json" = ${engine === "postgresql" ? "$3::jsonb" : "$3"}, "ended_at" = $4
      WHERE "id" = $1 AND "ended_at" IS NULL`,
    [
      attemptId(executionId, attempt),
      status,
      outcome.ok ? null : JSON.stringify({ ...outcome.error, attempt }),
      engine === "sqlite" ? sqliteTimestamp(now) : now,
    ],
  );
}

/**
 * Closes the attempts before `before` that never ended: their worker stopped renewing the job's
 * lease (it died, or froze: SIGSTOP, a stalled VM, a lost database) and the job was claimed again
 * or exhausted. `timeout` when the attempt has been going longer than the run's wall-clock limit
 * (it would have been stopped by now had its worker been alive), else `worker_lost`.
 */
export async function closeLostAttempts(
  tx: Db,
  executionId: string,
  before: number,
  timeoutMs: number,
  log: (line: string) => void,
  now = new Date(),
): Promise<void> {
  const open = await tx.executionAttempt.findMany({
    where: { executionId, endedAt: null, attempt: { lt: before } },
    orderBy: { attempt: "asc" },
  });
  if (open.length === 0) return;
  let seq = await tx.executionLog.count({ where: { executionId } });
  for (const a of open) {
    const error = lostError(a, timeoutMs, now);
    await tx.executionAttempt.updateMany({
      where: { id: a.id, endedAt: null },
      data: { status: "lost", errorJson: error, endedAt: now },
    });
    const line = `attempt ${a.attempt} ${error.code}: ${error.message}`;
    seq += 1;
    await tx.executionLog.create({
      data: { id: `${executionId}:${seq}`, executionId, seq, level: "warn", line, createdAt: now, attempt: a.attempt },
    });
    afterCommit(tx, () => log(`execution ${executionId}: ${line}`));
  }
}

function lostError(a: ExecutionAttempt, timeoutMs: number, now: Date) {
  const ranMs = now.getTime() - a.startedAt.getTime();
  const after = `${(ranMs / 1000).toFixed(1)} s`;
  const worker = a.workerId ? `worker ${a.workerId}` : "its worker";
  const lease = `its lease (SVC_JOB_LEASE_MS, ${jobLeaseMs()} ms) expired without a heartbeat`;
  if (ranMs > timeoutMs) {
    return {
      code: "timeout",
      message: `The attempt ran past the run's wall-clock limit of ${timeoutMs} ms without ending: ${worker} stopped answering (frozen or dead) and ${lease}; it was given up ${after} after it started.`,
      cause: "lease_expired",
      worker_id: a.workerId,
      started_at: a.startedAt.toISOString(),
      attempt: a.attempt,
    };
  }
  return {
    code: "worker_lost",
    message: `${worker[0]!.toUpperCase()}${worker.slice(1)} stopped before the attempt ended (crashed, or frozen): ${lease}; it was given up ${after} after it started.`,
    cause: "lease_expired",
    worker_id: a.workerId,
    started_at: a.startedAt.toISOString(),
    attempt: a.attempt,
  };
}

/** An attempt as the execution's detail shows it. */
export function attemptView(a: ExecutionAttempt) {
  return {
    attempt: a.attempt,
    status: a.status as "running" | "completed" | "failed" | "cancelled" | "lost",
    worker_id: a.workerId,
    started_at: a.startedAt.toISOString(),
    ended_at: a.endedAt?.toISOString() ?? null,
    error: (a.errorJson as Record<string, unknown> | null) ?? null,
  };
}

/**
 * The run job's exhaustion: an attempt still open lost its worker (the job was claimed once more
 * than allowed), or threw outside the sandbox (an internal error of the service).
 */
export async function closeExhaustedAttempts(
  tx: Db,
  job: ClaimedJob<{ executionId: string }>,
  error: unknown,
): Promise<void> {
  const executionId = job.payload.executionId;
  if (!(error instanceof WorkerLost)) {
    const errorJson = { code: "internal", message: "The attempt ended in an internal error of the service." };
    await tx.executionAttempt.updateMany({
      where: { executionId, endedAt: null },
      data: { status: "failed", errorJson, endedAt: new Date() },
    });
    return;
  }
  const e = await tx.asyncExecution.findUnique({
    where: { id: executionId },
    select: { version: { select: { timeoutMs: true } } },
  });
  if (!e) return;
  await closeLostAttempts(tx, executionId, job.attempts + 1, e.version.timeoutMs, lineLog("svc-jobs", "warn"));
}
