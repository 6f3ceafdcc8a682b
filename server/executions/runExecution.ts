import { config } from "../config";
import { database, type Database, type Db } from "../db/client";
import { commitBatched, commitGrouped } from "../db/groupCommit";
import { backoffDelay, finishJob, retryJob, WorkerLost, type ClaimedJob, type JobHelpers } from "../jobs";
import { DomainError } from "../errors";
import { refuseHostileInput } from "../http/validation";
import { newId } from "../ids";
import { runBundle, type SandboxOutcome } from "../sandbox/pool";
import { awaitIntegrated, leafIndexes } from "../ledger/integrate";
import { subscriptionIndex } from "../events/matcher";
import { putPlatformEvent } from "../events/platformEvents";
import { endAttempt, openAttempt } from "./attempts";
import { executionChanged, executionChangedNow } from "./executionChanged";
import { appendRunRecord, cancelExecutions, queueCallback } from "./endExecution";
import { localRuns } from "./localRuns";
import { AWAITING_APPROVAL, pauseRun } from "./pauseRun";
import { runRunEndHooks } from "./runEndHooks";
import {
  chainEnded,
  insertLogLines,
  loadRun,
  moveRunToEnd,
  requeueRun,
  runStarts,
  writeProgress,
  type ChainEnd,
  type Run,
} from "./runStatements";
import { executionView, resultJson } from "./views";
import { watchRunEnd } from "./watchRunEnd";

export const RUN_JOB = "execution.run";
/** Progress and log lines are written at most this often while a run goes on (and at its end). */
const FLUSH_MS = 200;
const MAX_LOG_LINES = 200;
/** Errors after which another attempt cannot help. */
const FINAL_CODES = new Set([
  "cancelled",
  "delegation_revoked",
  "delegation_expired",
  "no_handler",
  "syntax_error",
  "invalid_result",
]);

const chainEndError = (code: ChainEnd) => ({
  code,
  message: `The delegation this run acts under (or one it derives from) ${code === "delegation_revoked" ? "was revoked" : "has expired"}.`,
});

/**
 * The `execution.run` job, as named steps: load the run (one query), start it (one conditional
 * UPDATE that also checks the delegation chain, and its attempt's row, committed together with
 * the other runs starting at the same moment), run the bundle in the sandbox with its telemetry
 * written every FLUSH_MS, then settle: the outcome, the run's provenance record, the job's end and
 * the callback's job in one transaction, shared with the calls committing at the same moment
 * (db/groupCommit.ts). A cancel or revocation that commits meanwhile wins: every move is
 * conditional on the execution not having ended and its chain being live, and only when one
 * finds nothing to move does the run read why (`settleContested`). While it runs, a cancel or a
 * chain's end stops it when announced, not by polling (watchRunEnd.ts). The statements themselves
 * are in runStatements.ts.
 *
 * Statements on the common path (tests/integration/statementCounts.test.ts): 1 load, the start's
 * BEGIN/UPDATE/INSERT/COMMIT (shared BEGIN/COMMIT and INSERT when runs start together), 1–2 per telemetry flush, and the settle's UPDATE, record (2), job DELETE, BEGIN/COMMIT.
 */
export async function runExecutionJob(job: ClaimedJob<{ executionId: string }>, helpers: JobHelpers): Promise<void> {
  const db = await database();
  const run = await loadRun(db, job.payload.executionId);
  if (!run || (run.status !== "queued" && run.status !== "processing")) return;
  if (!(await startRun(db, job, run))) return;
  // A first attempt's row was written with the start; a later one closes what lost workers left open.
  if (job.attempts > 1) await openAttempt(db, job, run.id, run.timeoutMs, helpers.log);
  const outcome = await runInSandbox(db, run, helpers, job.attempts);
  // The worker was abandoned (as in a crash) or lost the lease: it records nothing; the job is
  // claimed again after its lease, and counts as an attempt (worker_lost once they are spent).
  if (!outcome.ok && outcome.error.code === "worker_stopped") throw new Error("the worker stopped during the run");
  // Paused for a person's decision (ctx.approvals.request): the attempt ends, the run waits unclaimed.
  if (!outcome.ok && outcome.error.code === AWAITING_APPROVAL)
    return helpers.commit(() => commitGrouped(db, (tx) => pauseRun(tx, job, run, outcome), { retryable: true }));
  // Conditional moves only: safe to run again if its group rolls back. The outcome is kept while
  // the database is away: recording it is retried under the job's lease (helpers.commit), not the run.
  const stored = storableOutcome(outcome);
  await helpers.commit(() =>
    commitGrouped(db, (tx) => settleRun(tx, db.engine, job, run, stored), { retryable: true }),
  );
}

/**
 * queued → processing, in one conditional UPDATE that also checks the chain, with a first
 * attempt's row: one transaction for both, shared by the runs starting at the same moment
 * (`commitBatched`: the worker starts the runs it claimed together). When it moves nothing, the
 * run reads why: a chain that ended cancels the execution, an execution that ended meanwhile
 * just ends the job.
 */
async function startRun(db: Database, job: ClaimedJob, run: Run): Promise<boolean> {
  if (await commitBatched(db, runStarts, { job, run })) {
    executionChangedNow(run);
    return true;
  }
  await db.writeTx(async (tx) => {
    executionChanged(tx, run);
    const now = await tx.asyncExecution.findUnique({ where: { id: run.id } });
    const ended = await chainEnded(tx, db.engine, run.chain);
    if (now && ended && (now.status === "queued" || now.status === "processing"))
      await cancelExecutions(tx, [now], chainEndError(ended));
    await finishJob(tx, job);
  });
  return false;
}

/**
 * A trigger run's input names its event's ledger record (`verification`). On PostgreSQL the run
 * was queued in the event's own transaction, before the integrator gave that record its position,
 * so the leaf index is filled in here, when the run starts: one read (the ingest call answered
 * once the record had its position), and a wait for the integrator only if it has not got there.
 */
async function withLeafIndex(db: Database, input: unknown): Promise<unknown> {
  const verification = (input as { verification?: { provenance_record_id?: unknown; leaf_index?: unknown } } | null)
    ?.verification;
  const recordId = verification?.provenance_record_id;
  if (!verification || verification.leaf_index !== null || typeof recordId !== "string") return input;
  let leafIndex = (await leafIndexes(db.read, [recordId])).get(recordId);
  if (leafIndex === undefined) {
    await awaitIntegrated(db, [recordId]);
    leafIndex = (await leafIndexes(db.read, [recordId])).get(recordId);
  }
  return { ...(input as object), verification: { ...verification, leaf_index: leafIndex ?? null } };
}

/**
 * Runs the bundle, its progress and log lines kept in memory and written every FLUSH_MS (never on
 * the guest's critical path), and a watch that stops it when the execution is cancelled or its
 * chain ends elsewhere.
 */
async function runInSandbox(db: Database, run: Run, helpers: JobHelpers, attempt: number): Promise<SandboxOutcome> {
  const telemetry = await openTelemetry(db, run, helpers, attempt);
  const sandboxRun = runBundle({
    code: run.bundle.toString("utf8"),
    input: await withLeafIndex(db, run.input),
    memoryMb: run.memoryMb,
    timeoutMs: run.timeoutMs,
    orgDid: run.orgDid,
    bridge: {
      context: { executionId: run.id, delegationId: run.delegationId, agentId: run.agentId, orgDid: run.orgDid },
      onProgress: telemetry.progress,
      onLog: telemetry.log,
    },
  });
  localRuns.set(run.id, sandboxRun);
  const stop = () => sandboxRun.cancel("worker_stopped");
  helpers.signal.addEventListener("abort", stop);
  const unwatch = watchRunEnd(db, run, (code) => sandboxRun.cancel(code));
  try {
    return await sandboxRun;
  } finally {
    unwatch();
    helpers.signal.removeEventListener("abort", stop);
    localRuns.delete(run.id);
    await telemetry.close();
  }
}

/**
 * Progress and log lines, written by the raw driver in at most two statements per flush (they
 * need no transaction together: each is whole on its own).
 */
async function openTelemetry(db: Database, run: Run, helpers: JobHelpers, attempt: number) {
  let progress: { percent: number; message: string | null } | undefined;
  // Each line's seq is taken when it is logged: computed at flush, a flush waiting for the write
  // lock would number its lines after the ones logged meanwhile, and the next flush collide.
  const lines: Array<{ seq: number; level: string; line: string; at: Date }> = [];
  // A first attempt has logged nothing yet; a later one continues the numbering.
  let logged = run.startedBefore ? await db.read.executionLog.count({ where: { executionId: run.id } }) : 0;
  let flushing: Promise<void> = Promise.resolve();
  const flush = () =>
    (flushing = flushing
      .then(async () => {
        const p = progress;
        const batch = lines.splice(0);
        progress = undefined;
        if (p) await writeProgress(db, run, p);
        if (batch.length > 0) await insertLogLines(db, run, attempt, batch);
        if (p || batch.length > 0) executionChangedNow(run);
      })
      .catch((err: unknown) =>
        helpers.log(`execution ${run.id}: telemetry not written: ${err instanceof Error ? err.message : String(err)}`),
      ));
  const flusher = setInterval(() => void flush(), FLUSH_MS);
  return {
    progress: (percent: number, message: string | undefined) =>
      void (progress = { percent, message: message === undefined ? null : storableText(message) }),
    log: (line: string, level: string) => {
      if (logged >= MAX_LOG_LINES) return;
      lines.push({ seq: ++logged, level, line: storableText(line), at: new Date() });
    },
    async close() {
      clearInterval(flusher);
      await flush();
    },
  };
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
const storableText = (s: string) =>
  s.replace(/\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD");

/**
 * Records how an attempt ended, in the settling transaction: completed, failed, or queued again
 * while attempts remain. Each move is one conditional UPDATE (not ended, chain live); when one
 * moves nothing, `settleContested` reads why and records that instead.
 */
async function settleRun(
  tx: Db,
  engine: Database["engine"],
  job: ClaimedJob,
  run: Run,
  outcome: SandboxOutcome,
): Promise<void> {
  executionChanged(tx, run);
  await endAttempt(tx, run.id, job.attempts, outcome);
  if (!outcome.ok && (outcome.error.code === "delegation_revoked" || outcome.error.code === "delegation_expired")) {
    return settleContested(tx, engine, job, run, outcome.error.code as ChainEnd);
  }
  if (outcome.ok) {
    if (await endRun(tx, engine, job, run, "completed", { result: resultJson(outcome.result) })) return;
    return settleContested(tx, engine, job, run);
  }
  const error = { ...outcome.error, attempt: job.attempts };
  if (!FINAL_CODES.has(error.code) && job.attempts < run.maxAttempts && job.attempts < job.maxAttempts) {
    if (await requeueRun(tx, engine, run, error)) {
      await retryJob(
        tx,
        job,
        `${error.code}: ${error.message}`,
        backoffDelay(job.attempts, config().executionRetryBaseMs),
      );
      return;
    }
    return settleContested(tx, engine, job, run);
  }
  if (await endRun(tx, engine, job, run, "failed", { error })) return;
  return settleContested(tx, engine, job, run);
}

/** processing → completed | failed with its record, callback, platform event and the job's end; false if it moved nothing. */
async function endRun(
  tx: Db,
  engine: Database["engine"],
  job: ClaimedJob,
  run: Run,
  status: "completed" | "failed",
  end: { result?: object; error?: object },
): Promise<boolean> {
  const provenanceId = newId("prv");
  if (!(await moveRunToEnd(tx, engine, run, status, end, provenanceId))) return false;
  await recordRunEnd(tx, engine, run, status, provenanceId);
  await finishJob(tx, job);
  return true;
}

/**
 * The end of a run, written in one place for every way a run ends (a settled attempt, an
 * exhausted job, a cancel the run finds): its provenance record under the id the execution
 * already points at, its callback's job, and its platform event when something subscribes to it
 * (unsubscribed, it would be an event and a ledger record nobody reads), and the hooks of the
 * areas that wait for runs (a workflow's agent node).
 */
async function recordRunEnd(
  tx: Db,
  engine: Database["engine"],
  run: RunEnd,
  status: "completed" | "failed",
  provenanceId: string,
): Promise<void> {
  await appendRunRecord(tx, engine, run, status, { recordId: provenanceId, actorDid: run.delegateDid });
  await queueCallback(tx, run);
  await runRunEndHooks(tx, { id: run.id, orgDid: run.orgDid, status });
  const type = `execution.${status}`;
  await subscriptionIndex.refresh(tx, engine);
  if (subscriptionIndex.match(run.orgDid, type).length === 0) return;
  const ended = await tx.asyncExecution.findUniqueOrThrow({ where: { id: run.id } });
  await putPlatformEvent(tx, engine, run.orgDid, { type, payload: executionView(ended) }, run.id);
}

type RunEnd = Pick<Run, "id" | "orgDid" | "agentId" | "delegationId" | "requesterPassportId" | "callbackUrl"> & {
  delegateDid?: string;
};

/**
 * A move found nothing to move: the execution ended meanwhile (a cancel: the run still gets its
 * record) or the chain ended (the run is cancelled, with its record).
 */
async function settleContested(
  tx: Db,
  engine: Database["engine"],
  job: ClaimedJob,
  run: Run,
  reported?: ChainEnd,
): Promise<void> {
  const now = await tx.asyncExecution.findUniqueOrThrow({ where: { id: run.id } });
  if (now.status === "processing" || now.status === "queued") {
    const chainEnd = reported ?? (await chainEnded(tx, engine, run.chain));
    if (!chainEnd) throw new Error(`execution ${run.id} could not be settled`);
    const [cancelled] = await cancelExecutions(tx, [now], chainEndError(chainEnd));
    if (cancelled) await recordCancel(tx, engine, run);
  } else if (now.status === "cancelled" && now.startedAt && !now.provenanceId) {
    await recordCancel(tx, engine, run);
  }
  await finishJob(tx, job);
}

async function recordCancel(tx: Db, engine: Database["engine"], run: Run): Promise<void> {
  const provenanceId = newId("prv");
  await appendRunRecord(tx, engine, run, "cancelled", { recordId: provenanceId, actorDid: run.delegateDid });
  await tx.asyncExecution.update({ where: { id: run.id }, data: { provenanceId } });
}

/**
 * The `execution.run` job's `onExhausted`: its last attempt threw or its worker was lost, so the
 * job is dead-lettered; the execution ends `failed` with it (`worker_lost`, else `internal`), with
 * the run's record and its callback, as any failed run does.
 */
export async function failExhaustedRun(
  tx: Db,
  job: ClaimedJob<{ executionId: string }>,
  error: unknown,
): Promise<void> {
  const now = await tx.asyncExecution.findUnique({ where: { id: job.payload.executionId } });
  if (!now || (now.status !== "queued" && now.status !== "processing")) return;
  const lost = error instanceof WorkerLost;
  const errorJson = {
    code: lost ? "worker_lost" : "internal",
    message: lost
      ? "The worker running the last attempt stopped before it ended."
      : "The last attempt ended in an internal error of the service.",
    attempt: Math.max(now.currentAttempt, 1),
  };
  const provenanceId = newId("prv");
  const { count } = await tx.asyncExecution.updateMany({
    where: { id: now.id, status: { in: ["queued", "processing"] } },
    data: { status: "failed", errorJson, completedAt: new Date(), provenanceId },
  });
  if (count === 0) return;
  executionChanged(tx, now);
  await recordRunEnd(tx, config().engine, now, "failed", provenanceId);
}
