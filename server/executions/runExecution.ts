import { DbNull } from "@prisma/client/runtime/client";
import { config } from "../config";
import { database, type Database, type Db } from "../db/client";
import type { AsyncExecution } from "../db/generated/sqlite/client";
import { backoffDelay, finishJob, retryJob, type ClaimedJob, type JobHelpers } from "../jobs";
import { runBundle, type SandboxOutcome } from "../sandbox/pool";
import { appendRunRecord, cancelExecutions, queueCallback } from "./endExecution";
import { localRuns } from "./localRuns";
import { executionView, resultJson } from "./views";
import { putPlatformEvent } from "../events/platformEvents";

export const RUN_JOB = "execution.run";
/** How often a run checks whether it was cancelled or its delegation revoked elsewhere. */
const POLL_MS = 250;
/** Progress and log lines are written at most this often while a run goes on (and at its end). */
const FLUSH_MS = 200;
const MAX_LOG_LINES = 200;
/** Errors after which another attempt cannot help. */
const FINAL_CODES = new Set(["cancelled", "delegation_revoked", "no_handler", "syntax_error"]);

const revoked = (code = "delegation_revoked") => ({ code, message: "The delegation this run acts under (or one it derives from) was revoked." });

/**
 * The `execution.run` job: queued → processing, the bundle in the sandbox, then in one transaction
 * the outcome (completed, failed, or queued again for a retry while attempts remain), the run's
 * provenance record, the job's end and the callback's job. A cancel or revocation that commits
 * meanwhile wins: the final update only applies to an execution still processing.
 */
export async function runExecutionJob(job: ClaimedJob<{ executionId: string }>, helpers: JobHelpers): Promise<void> {
  const db = await database();
  const id = job.payload.executionId;
  const e = await db.read.asyncExecution.findUnique({ where: { id }, include: { version: true, delegation: { select: { ancestry: true } } } });
  if (!e || (e.status !== "queued" && e.status !== "processing")) return;
  // The run's delegation and every one it derives from: a revocation anywhere in it ends the run,
  // including revocations that did not cascade to it (a console session signed out).
  const chain = [...e.delegation.ancestry.split(" ").filter(Boolean), e.delegationId];
  if (await chainRevoked(db.read, chain)) {
    await db.writeTx(async (tx) => {
      await cancelExecutions(tx, [e], revoked());
      await finishJob(tx, job);
    });
    return;
  }
  if (job.attempts > e.maxAttempts) {
    // The last attempt's worker died holding it: the attempts are spent.
    await settle(db, job, e, { ok: false, error: { code: "worker_lost", message: "The worker running the last attempt stopped before it ended." } }, chain);
    return;
  }
  const started = await db.writeTx(async (tx) => {
    const { count } = await tx.asyncExecution.updateMany({
      where: { id, status: { in: ["queued", "processing"] } },
      data: { status: "processing", currentAttempt: job.attempts, startedAt: e.startedAt ?? new Date() },
    });
    if (count === 0) await finishJob(tx, job);
    return count > 0;
  });
  if (!started) return;

  // Telemetry is kept in memory and written every FLUSH_MS, never on the guest's critical path.
  let progress: { percent: number; message: string | null } | undefined;
  const lines: Array<{ level: string; line: string; at: Date }> = [];
  let logged = await db.read.executionLog.count({ where: { executionId: id } });
  let flushing: Promise<void> = Promise.resolve();
  const flush = () =>
    (flushing = flushing.then(async () => {
      const p = progress;
      const batch = lines.splice(0);
      progress = undefined;
      if (!p && batch.length === 0) return;
      await db.writeTx(async (tx) => {
        if (p) await tx.asyncExecution.updateMany({ where: { id, status: "processing" }, data: { progressPercent: p.percent, progressMessage: p.message } });
        if (batch.length > 0) await tx.executionLog.createMany({ data: batch.map((l, i) => ({ id: `${id}:${logged - batch.length + i + 1}`, executionId: id, seq: logged - batch.length + i + 1, level: l.level, line: l.line, createdAt: l.at })) });
      });
    }).catch((err: unknown) => helpers.log(`execution ${id}: telemetry not written: ${err instanceof Error ? err.message : String(err)}`)));

  const run = runBundle({
    code: Buffer.from(e.version.bundle).toString("utf8"),
    input: e.input ?? null,
    memoryMb: e.version.memoryMb,
    timeoutMs: e.version.timeoutMs,
    orgDid: e.orgDid,
    bridge: {
      context: { executionId: id, delegationId: e.delegationId, agentId: e.agentId, orgDid: e.orgDid },
      onProgress: (percent, message) => void (progress = { percent, message: message ?? null }),
      onLog: (line, level) => {
        if (logged >= MAX_LOG_LINES) return;
        logged++;
        lines.push({ level, line, at: new Date() });
      },
    },
  });
  localRuns.set(id, run);
  const stop = () => run.cancel("worker_stopped");
  helpers.signal.addEventListener("abort", stop);
  const flusher = setInterval(() => void flush(), FLUSH_MS);
  let polling = false;
  const poller = setInterval(() => {
    if (polling) return;
    polling = true;
    db.read.asyncExecution
      .findUnique({ where: { id }, select: { status: true, errorJson: true } })
      .then(async (now) => {
        if (!now) return;
        if (now.status === "cancelled") run.cancel(((now.errorJson as { code?: string } | null)?.code ?? "cancelled") as string);
        else if (await chainRevoked(db.read, chain)) run.cancel("delegation_revoked");
      })
      .catch(() => undefined)
      .finally(() => (polling = false));
  }, POLL_MS);
  let outcome: SandboxOutcome;
  try {
    outcome = await run;
  } finally {
    clearInterval(flusher);
    clearInterval(poller);
    helpers.signal.removeEventListener("abort", stop);
    localRuns.delete(id);
  }
  await flush();
  await flushing;
  // The worker was abandoned (as in a crash) or lost the lease: it records nothing; the job is
  // claimed again after its lease, and counts as an attempt (worker_lost once they are spent).
  if (!outcome.ok && outcome.error.code === "worker_stopped") throw new Error("the worker stopped during the run");
  await settle(db, job, e, outcome, chain);
}

/** Records how an attempt ended, with the job's end (or retry), in one transaction. */
async function settle(db: Database, job: ClaimedJob, e: AsyncExecution, outcome: SandboxOutcome, chain: string[]): Promise<void> {
  await db.writeTx(async (tx) => {
    const now = await tx.asyncExecution.findUniqueOrThrow({ where: { id: e.id } });
    if (now.status !== "processing" && now.status !== "queued") {
      // Cancelled meanwhile: the run still gets its record.
      if (now.status === "cancelled" && now.startedAt && !now.provenanceId) {
        const provenanceId = await appendRunRecord(tx, db.engine, now, "cancelled");
        await tx.asyncExecution.update({ where: { id: e.id }, data: { provenanceId } });
      }
      await finishJob(tx, job);
      return;
    }
    if ((!outcome.ok && outcome.error.code === "delegation_revoked") || (await chainRevoked(tx, chain))) {
      const [cancelled] = await cancelExecutions(tx, [now], revoked());
      if (cancelled) await tx.asyncExecution.update({ where: { id: e.id }, data: { provenanceId: await appendRunRecord(tx, db.engine, cancelled, "cancelled") } });
      await finishJob(tx, job);
      return;
    }
    if (outcome.ok) {
      const done = await tx.asyncExecution.update({
        where: { id: e.id },
        data: { status: "completed", resultJson: resultJson(outcome.result) as object, errorJson: DbNull, progressPercent: 100, completedAt: new Date() },
      });
      const provenanceId = await appendRunRecord(tx, db.engine, done, "completed");
      await tx.asyncExecution.update({ where: { id: e.id }, data: { provenanceId } });
      await queueCallback(tx, done);
      await putPlatformEvent(tx, db.engine, done.orgDid, { type: "execution.completed", payload: executionView({ ...done, provenanceId }) });
      await finishJob(tx, job);
      return;
    }
    const error = { ...outcome.error, attempt: now.currentAttempt };
    if (!FINAL_CODES.has(error.code) && now.currentAttempt < now.maxAttempts && job.attempts < job.maxAttempts) {
      await tx.asyncExecution.update({ where: { id: e.id }, data: { status: "queued", errorJson: error } });
      await retryJob(tx, job, `${error.code}: ${error.message}`, backoffDelay(job.attempts, config().executionRetryBaseMs));
      return;
    }
    const failed = await tx.asyncExecution.update({ where: { id: e.id }, data: { status: "failed", errorJson: error, completedAt: new Date() } });
    const provenanceId = await appendRunRecord(tx, db.engine, failed, "failed");
    await tx.asyncExecution.update({ where: { id: e.id }, data: { provenanceId } });
    await queueCallback(tx, failed);
    await putPlatformEvent(tx, db.engine, failed.orgDid, { type: "execution.failed", payload: executionView({ ...failed, provenanceId }) });
    await finishJob(tx, job);
  });
}

async function chainRevoked(db: Db, chain: string[]): Promise<boolean> {
  return (await db.delegation.count({ where: { id: { in: chain }, revokedAt: { not: null } } })) > 0;
}
