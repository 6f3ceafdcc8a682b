import type { Db } from "../db/client";
import { finishJob, LeaseLost, type ClaimedJob } from "../jobs";
import { wakeWorkers } from "../jobs/wake";
import { afterCommit } from "../db/client";
import { processWide } from "../processWide";
import type { SandboxOutcome } from "../sandbox/pool";
import { endAttempt } from "./attempts";
import { executionChanged } from "./executionChanged";
import { localRuns } from "./localRuns";

/**
 * A run paused for a person's decision (`ctx.approvals.request`, server/executions/executionWaiter.ts)
 * ends its attempt instead of holding a sandbox thread for hours: the execution stays `processing`
 * with `progress_message` saying what it waits for, and its job goes back to the queue, not due
 * until the decision makes it due (`resumePausedRun`). The sandbox timeout therefore never kills a
 * waiting run, and a restart loses nothing. A pause spends no attempt: the job's and the
 * execution's `max_attempts` grow by one with each pause (the attempt numbers go on counting).
 */
export const AWAITING_APPROVAL = "awaiting_approval";

/** Not due before a decision; also the backstop should a resume be lost (requests expire before this). */
const WAIT_BACKSTOP_MS = 31 * 86_400_000;

// Why each local run is being paused (the message its execution shows), by execution id.
const pauseMessages = processWide("executions.pauseMessages", () => new Map<string, string>());

/** Stops the local sandbox run of `executionId` so that it pauses, `message` saying what it waits for. */
export function pauseLocalRun(executionId: string, message: string): void {
  pauseMessages.set(executionId, message.slice(0, 500));
  localRuns.get(executionId)?.cancel(AWAITING_APPROVAL);
}

/**
 * Records the pause in the settling transaction: the attempt ends `paused`, the execution keeps
 * `processing` with the waiting message, the job is put back (fenced by this claim's lease) due
 * when its request settles. If the request was settled while the attempt was still stopping, the
 * job is due at once. A run cancelled meanwhile just ends its job.
 */
export async function pauseRun(
  tx: Db,
  job: ClaimedJob,
  run: { id: string; orgDid: string },
  outcome: SandboxOutcome,
): Promise<void> {
  executionChanged(tx, run);
  const message = pauseMessages.get(run.id) ?? "Waiting for an approval";
  pauseMessages.delete(run.id);
  // The sandbox stopped the run the way it stops a cancelled one ("The run was cancelled"): the
  // attempt keeps what it waits for instead, which is what happened.
  await endAttempt(
    tx,
    run.id,
    job.attempts,
    outcome.ok ? outcome : { ok: false, error: { code: AWAITING_APPROVAL, message } },
  );
  const { count } = await tx.asyncExecution.updateMany({
    where: { id: run.id, status: "processing" },
    data: { progressMessage: message, maxAttempts: { increment: 1 } },
  });
  if (count === 0) return finishJob(tx, job);
  // The request's table is read here, not imported: executions know no area above them.
  const open = await tx.approvalRequest.count({
    where: { taskId: run.id, waiterKind: "execution", status: { in: ["pending", "delegated"] } },
  });
  const due = open > 0 ? new Date(Date.now() + WAIT_BACKSTOP_MS) : new Date();
  const moved = await tx.job.updateMany({
    where: { id: job.id, leaseToken: job.leaseToken },
    data: { state: "queued", availableAt: due, leaseToken: null, lockedBy: null, maxAttempts: { increment: 1 } },
  });
  if (moved.count === 0) throw new LeaseLost(job.id);
  if (open === 0) afterCommit(tx, () => wakeWorkers(job.kind));
}

/**
 * Makes a paused run's job due now (the request it waited for has settled), in the settling
 * transaction. A run that has ended is never resumed: its waiting job, if any, is dropped.
 */
export async function resumePausedRun(tx: Db, executionId: string, message: string): Promise<void> {
  const execution = await tx.asyncExecution.findUnique({
    where: { id: executionId },
    select: { id: true, orgDid: true, status: true, taskId: true },
  });
  if (!execution || !execution.taskId) return;
  if (execution.status !== "processing") {
    await tx.job.deleteMany({ where: { id: execution.taskId, state: "queued" } });
    return;
  }
  const { count } = await tx.job.updateMany({
    where: { id: execution.taskId, state: "queued" },
    data: { availableAt: new Date() },
  });
  // Still running (its pause not yet recorded): the pause sees the settled request and is due at once.
  if (count === 0) return;
  await tx.asyncExecution.updateMany({
    where: { id: executionId, status: "processing" },
    data: { progressMessage: message },
  });
  executionChanged(tx, execution);
  afterCommit(tx, () => wakeWorkers("execution.run"));
}
