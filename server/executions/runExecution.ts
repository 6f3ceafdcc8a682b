import { DbNull } from "@prisma/client/runtime/client";
import { config } from "../config";
import { database, type Database, type Db } from "../db/client";
import type { AsyncExecution } from "../db/generated/sqlite/client";
import { backoffDelay, finishJob, retryJob, WorkerLost, type ClaimedJob, type JobHelpers } from "../jobs";
import { DomainError } from "../errors";
import { refuseHostileInput } from "../http/validation";
import { runBundle, type SandboxOutcome } from "../sandbox/pool";
import { appendRunRecord, cancelExecutions, queueCallback } from "./endExecution";
import { localRuns } from "./localRuns";
import { executionView, resultJson } from "./views";
import { putPlatformEvent } from "../events/platformEvents";
import { executionChanged } from "./executionChanged";

export const RUN_JOB = "execution.run";
/** How often a run checks whether it was cancelled or its delegation revoked elsewhere. */
const POLL_MS = 250;
/** Progress and log lines are written at most this often while a run goes on (and at its end). */
const FLUSH_MS = 200;
const MAX_LOG_LINES = 200;
/** Errors after which another attempt cannot help. */
const FINAL_CODES = new Set(["cancelled", "delegation_revoked", "delegation_expired", "no_handler", "syntax_error", "invalid_result"]);

type ChainEnd = "delegation_revoked" | "delegation_expired";
const chainEndError = (code: ChainEnd) => ({
  code,
  message: `The delegation this run acts under (or one it derives from) ${code === "delegation_revoked" ? "was revoked" : "has expired"}.`,
});

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
  // The run's delegation and every one it derives from: a revocation or expiry anywhere in it ends
  // the run, including revocations that did not cascade to it (a console session signed out).
  const chain = [...e.delegation.ancestry.split(" ").filter(Boolean), e.delegationId];
  const ended = await chainEnded(db.read, chain);
  if (ended) {
    await db.writeTx(async (tx) => {
      await cancelExecutions(tx, [e], chainEndError(ended));
      await finishJob(tx, job);
    });
    return;
  }
  const started = await db.writeTx(async (tx) => {
    executionChanged(tx, e);
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
  // Each line's seq is taken when it is logged: computed at flush, a flush waiting for the write
  // lock would number its lines after the ones logged meanwhile, and the next flush collide.
  const lines: Array<{ seq: number; level: string; line: string; at: Date }> = [];
  let logged = await db.read.executionLog.count({ where: { executionId: id } });
  let flushing: Promise<void> = Promise.resolve();
  const flush = () =>
    (flushing = flushing.then(async () => {
      const p = progress;
      const batch = lines.splice(0);
      progress = undefined;
      if (!p && batch.length === 0) return;
      await db.writeTx(async (tx) => {
        executionChanged(tx, e);
        if (p) await tx.asyncExecution.updateMany({ where: { id, status: "processing" }, data: { progressPercent: p.percent, progressMessage: p.message } });
        if (batch.length > 0) await tx.executionLog.createMany({ data: batch.map((l) => ({ id: `${id}:${l.seq}`, executionId: id, seq: l.seq, level: l.level, line: l.line, createdAt: l.at })) });
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
      onProgress: (percent, message) => void (progress = { percent, message: message === undefined ? null : storableText(message) }),
      onLog: (line, level) => {
        if (logged >= MAX_LOG_LINES) return;
        lines.push({ seq: ++logged, level, line: storableText(line), at: new Date() });
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
        else {
          const end = await chainEnded(db.read, chain);
          if (end) run.cancel(end);
        }
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
  await settle(db, job, e, storableOutcome(outcome), chain);
}

/**
 * The outcome as it can be stored: a result or error holding what the database refuses (NUL, lone
 * surrogates: PostgreSQL's jsonb rejects them) or no JSON (too deep, non-finite numbers) would make
 * every attempt to record it throw. Checked by the rules every request's input is held to; such a
 * run fails with `invalid_result`.
 */
function storableOutcome(outcome: SandboxOutcome): SandboxOutcome {
  try {
    refuseHostileInput(outcome.ok ? outcome.result : outcome.error, outcome.ok ? "result" : "error");
    return outcome;
  } catch (err) {
    const why = err instanceof DomainError ? err.extra.errors?.[0] : undefined;
    const message = `The handler's ${outcome.ok ? "result" : "error"} cannot be stored${why ? ` (${why.field}: ${why.message})` : ""}.`;
    return { ok: false, error: { code: "invalid_result", message: storableText(message.slice(0, 500)) } };
  }
}

/** Telemetry text as the database can store it: NUL and lone surrogates become U+FFFD. */
const storableText = (s: string) => s.replace(/\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD");

/**
 * Records how an attempt ended, with the job's end (or retry), in one transaction. Every move is
 * conditional on the execution not having ended: on PostgreSQL (READ COMMITTED) a cancel or
 * revocation can commit between the read below and the update, and must not be overwritten.
 */
async function settle(db: Database, job: ClaimedJob, e: AsyncExecution, outcome: SandboxOutcome, chain: string[]): Promise<void> {
  await db.writeTx(async (tx) => {
    executionChanged(tx, e);
    const move = async (data: Parameters<typeof tx.asyncExecution.updateMany>[0]["data"]) =>
      (await tx.asyncExecution.updateMany({ where: { id: e.id, status: { in: ["processing", "queued"] } }, data })).count > 0;
    // Cancelled meanwhile: the run still gets its record.
    const endedMeanwhile = async () => {
      const now = await tx.asyncExecution.findUniqueOrThrow({ where: { id: e.id } });
      if (now.status === "cancelled" && now.startedAt && !now.provenanceId) {
        const provenanceId = await appendRunRecord(tx, db.engine, now, "cancelled");
        await tx.asyncExecution.update({ where: { id: e.id }, data: { provenanceId } });
      }
      await finishJob(tx, job);
    };
    const now = await tx.asyncExecution.findUniqueOrThrow({ where: { id: e.id } });
    if (now.status !== "processing" && now.status !== "queued") return endedMeanwhile();
    const chainEnd = !outcome.ok && (outcome.error.code === "delegation_revoked" || outcome.error.code === "delegation_expired") ? (outcome.error.code as ChainEnd) : await chainEnded(tx, chain);
    if (chainEnd) {
      const [cancelled] = await cancelExecutions(tx, [now], chainEndError(chainEnd));
      if (!cancelled) return endedMeanwhile();
      await tx.asyncExecution.update({ where: { id: e.id }, data: { provenanceId: await appendRunRecord(tx, db.engine, cancelled, "cancelled") } });
      await finishJob(tx, job);
      return;
    }
    const end = async (status: "completed" | "failed", data: Parameters<typeof move>[0]) => {
      if (!(await move({ ...data, status, completedAt: new Date() }))) return endedMeanwhile();
      const ended = await tx.asyncExecution.findUniqueOrThrow({ where: { id: e.id } });
      const provenanceId = await appendRunRecord(tx, db.engine, ended, status);
      await tx.asyncExecution.update({ where: { id: e.id }, data: { provenanceId } });
      await queueCallback(tx, ended);
      await putPlatformEvent(tx, db.engine, ended.orgDid, { type: `execution.${status}`, payload: executionView({ ...ended, provenanceId }) });
      await finishJob(tx, job);
    };
    if (outcome.ok) return end("completed", { resultJson: resultJson(outcome.result) as object, errorJson: DbNull, progressPercent: 100 });
    const error = { ...outcome.error, attempt: now.currentAttempt };
    if (!FINAL_CODES.has(error.code) && now.currentAttempt < now.maxAttempts && job.attempts < job.maxAttempts) {
      if (!(await move({ status: "queued", errorJson: error }))) return endedMeanwhile();
      await retryJob(tx, job, `${error.code}: ${error.message}`, backoffDelay(job.attempts, config().executionRetryBaseMs));
      return;
    }
    return end("failed", { errorJson: error });
  });
}

/**
 * The `execution.run` job's `onExhausted`: its last attempt threw or its worker was lost, so the
 * job is dead-lettered; the execution ends `failed` with it (`worker_lost`, else `internal`), with
 * the run's record and its callback, as any failed run does.
 */
export async function failExhaustedRun(tx: Db, job: ClaimedJob<{ executionId: string }>, error: unknown): Promise<void> {
  const now = await tx.asyncExecution.findUnique({ where: { id: job.payload.executionId } });
  if (!now || (now.status !== "queued" && now.status !== "processing")) return;
  const lost = error instanceof WorkerLost;
  const errorJson = {
    code: lost ? "worker_lost" : "internal",
    message: lost ? "The worker running the last attempt stopped before it ended." : "The last attempt ended in an internal error of the service.",
    attempt: Math.max(now.currentAttempt, 1),
  };
  const { count } = await tx.asyncExecution.updateMany({
    where: { id: now.id, status: { in: ["queued", "processing"] } },
    data: { status: "failed", errorJson, completedAt: new Date() },
  });
  if (count === 0) return;
  executionChanged(tx, now);
  const failed = await tx.asyncExecution.findUniqueOrThrow({ where: { id: now.id } });
  const provenanceId = await appendRunRecord(tx, config().engine, failed, "failed");
  await tx.asyncExecution.update({ where: { id: now.id }, data: { provenanceId } });
  await queueCallback(tx, failed);
  await putPlatformEvent(tx, config().engine, failed.orgDid, { type: "execution.failed", payload: executionView({ ...failed, provenanceId }) });
}

/** Whether a delegation of the chain was revoked, else whether one has expired. */
async function chainEnded(db: Db, chain: string[]): Promise<ChainEnd | undefined> {
  const rows = await db.delegation.findMany({ where: { id: { in: chain } }, select: { revokedAt: true, expiresAt: true } });
  if (rows.some((d) => d.revokedAt !== null)) return "delegation_revoked";
  const now = Date.now();
  if (rows.some((d) => d.expiresAt.getTime() <= now)) return "delegation_expired";
  return undefined;
}
