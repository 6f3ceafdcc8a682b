import { config } from "../config";
import { afterCommit, sqlIn, type Db } from "../db/client";
import { backoffDelay } from "./backoff";
import { jobKind } from "./registry";
import { LeaseLost, type ClaimedJob } from "./types";
import { wakeWorkers } from "./wake";
import { processWide } from "../processWide";

/**
 * Ends a job in the handler's own write transaction, together with the domain writes it made: the
 * row is deleted only while this claim's lease token is still the job's. Otherwise it throws
 * `LeaseLost`, so the whole transaction rolls back and the worker that took the job over decides.
 */
export async function finishJob(tx: Db, job: ClaimedJob): Promise<void> {
  const count = await sqlIn(tx, config().engine).execute(`DELETE FROM "job" WHERE "id" = $1 AND "lease_token" = $2`, [
    job.id,
    job.leaseToken,
  ]);
  if (count === 0) throw new LeaseLost(job.id);
  afterCommit(tx, () => settled.add(job));
}

// Claims whose outcome a handler committed itself: the worker records nothing more for them.
const settled = processWide("jobs.settledClaims", () => new WeakSet<ClaimedJob>());

export function outcomeCommitted(job: ClaimedJob): boolean {
  return settled.has(job);
}

/**
 * Puts a job back in the queue after a failed attempt, `delayMs` from now (default: the kind's
 * `retryDelay`, else exponential backoff), or dead-letters it as `failed` once its attempts are
 * spent, with its kind's `onExhausted` in the same transaction (unless `exhaustedHook` is false).
 * Fenced like `finishJob`. Returns the state the job is left in.
 */
export async function retryJob(
  tx: Db,
  job: ClaimedJob,
  error: unknown,
  delayMs?: number,
  { exhaustedHook = true } = {},
): Promise<"queued" | "failed"> {
  const state = job.attempts >= job.maxAttempts ? "failed" : "queued";
  const delay = delayMs ?? jobKind(job.kind)?.retryDelay?.(job.attempts) ?? backoffDelay(job.attempts);
  const { count } = await tx.job.updateMany({
    where: { id: job.id, leaseToken: job.leaseToken },
    data: {
      state,
      availableAt: new Date(Date.now() + (state === "queued" ? delay : 0)),
      lastError: describeError(error),
      leaseToken: null,
      lockedBy: null,
    },
  });
  if (count === 0) throw new LeaseLost(job.id);
  if (state === "failed" && exhaustedHook) await jobKind(job.kind)?.onExhausted?.(tx, job, error);
  afterCommit(tx, () => settled.add(job));
  if (state === "queued") afterCommit(tx, () => setTimeout(() => wakeWorkers(job.kind), delay).unref());
  return state;
}

export function describeError(error: unknown): string {
  const text =
    error instanceof Error
      ? `${error.name}: ${error.message}`
      : typeof error === "string"
        ? error
        : JSON.stringify(error);
  return (text ?? String(error)).slice(0, 4000);
}
