/** A job as its handler sees it, for the duration of one claim. */
export interface ClaimedJob<P = unknown> {
  id: string;
  kind: string;
  orgDid: string | null;
  payload: P;
  /** Claims so far, this one included (1 on the first run). */
  attempts: number;
  maxAttempts: number;
  /** This claim's fence: `finishJob` and `retryJob` succeed only while it is still the job's. */
  leaseToken: string;
  /** The worker holding the claim. */
  workerId: string;
  /** The W3C traceparent of the call that queued it (null when it was not traced). */
  traceparent?: string | null;
  /** Claimed ahead of a free slot and not started yet: its attempt is counted when it starts. */
  uncounted?: boolean;
}

export interface JobHelpers {
  /** Aborted when the worker stops or the lease was found taken over: stop early, the outcome would be refused anyway. */
  signal: AbortSignal;
  log(line: string): void;
  /**
   * Runs `fn`, the transaction that records the outcome the handler reached, again while it fails
   * for the database's sake (connection lost, refused, busy, full) and this claim holds: a finished
   * run does not fail, nor spend an attempt, for a connection blip.
   */
  commit<T>(fn: () => Promise<T>): Promise<T>;
}

/** Why a job's attempts ran out when the worker of its last attempt died holding it (its lease expired). */
export class WorkerLost extends Error {
  readonly code = "worker_lost";
  constructor(readonly jobId: string) {
    super(`the worker running the last attempt of job ${jobId} stopped before it ended (its lease expired)`);
    this.name = "WorkerLost";
  }
}

/** The claim was lost (lease expired and taken over, or the job settled elsewhere): this worker may not record an outcome. */
export class LeaseLost extends Error {
  readonly code = "lease_lost";
  constructor(readonly jobId: string) {
    super(`the lease on job ${jobId} was lost: another worker holds it or it has already settled`);
    this.name = "LeaseLost";
  }
}
