import type { Db } from "../db/client";
import type { ClaimedJob, JobHelpers } from "./types";
import { processWide } from "../processWide";

export interface JobKind<P = unknown> {
  /**
   * Runs one claimed job. To record the outcome together with the domain's writes, call
   * `finishJob(tx, job)` or `retryJob(tx, job, error)` inside the handler's own write transaction.
   * Returning without either finishes the job; throwing retries it (backoff) or dead-letters it.
   */
  handler(job: ClaimedJob<P>, helpers: JobHelpers): Promise<void>;
  /**
   * Runs in the transaction that dead-letters a job of this kind (its attempts spent: the last one
   * threw, or its worker was lost, `WorkerLost`), so the domain row it worked on ends with it
   * instead of staying "in progress" for ever. If it throws, the job is not dead-lettered: it waits
   * (backoff) and is tried again, since without it the domain row would never end.
   */
  onExhausted?(tx: Db, job: ClaimedJob<P>, error: unknown): Promise<void>;
  /** Jobs of this kind one worker runs at once (default 10). */
  concurrency?: number;
  /**
   * Jobs claimed beyond `concurrency`, to wait in the worker (not started, their leases kept by
   * the heartbeat) for a slot: when one frees, the next starts at once instead of after a claim
   * round trip, so a kind bound by a resource of its own (runs by the sandbox's threads) keeps it
   * busy while the finished work writes its outcome. Default 0.
   */
  claimAhead?: number;
  /** Wait before retry number `attempt` (1 after the first failure); default `backoffDelay`. */
  retryDelay?(attempt: number): number;
}

// Shared by every copy of this module in the process (Next.js's bundle and the server's own
// modules each load it), like the database itself.
const kinds = processWide("jobs.kinds", () => new Map<string, JobKind>());

/** Declares how jobs of `kind` run. Registering a kind again replaces it (module reloads). */
export function registerJobKind<P = unknown>(kind: string, definition: JobKind<P>): void {
  if (!/^[a-z][a-z0-9_.-]{0,63}$/.test(kind))
    throw new Error(`job kind ${JSON.stringify(kind)} must be lower-case letters, digits, '.', '_' or '-'`);
  kinds.set(kind, definition as JobKind);
}

export function jobKind(kind: string): JobKind | undefined {
  return kinds.get(kind);
}

export function registeredJobKinds(): string[] {
  return [...kinds.keys()];
}
