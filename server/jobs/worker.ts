import { config } from "../config";
import { database, type Database } from "../db/client";
import { isInfrastructureError, outageEnded } from "../db/outage";
import { newId } from "../ids";
import { backoffDelay } from "./backoff";
import {
  claimJobs,
  extendLeases,
  reclaimExpiredJobs,
  releaseJob,
  releaseOrphanedClaims,
  releaseRunningJobs,
  startAttempt,
} from "./claim";
import { describeError, outcomeCommitted, retryJob } from "./finishJob";
import { FinishedJobs } from "./finishedJobs";
import { listenForJobs, type JobListener } from "./listener";
import { noteOutage, retryThroughOutage } from "./outage";
import { jobKind, registeredJobKinds, type JobKind } from "./registry";
import { LeaseLost, WorkerLost, type ClaimedJob, type JobHelpers } from "./types";
import { onJobEnqueued } from "./wake";
import { beat, forgetBeat } from "./heartbeat";
import { recordWorkerSeen, WORKER_SEEN_EVERY_MS } from "./workerSeen";
import { inJobSpan } from "../telemetry/tracing";
import { processWide } from "../processWide";
import { lineLog, logger } from "../telemetry/log";
import { observeJob, type JobOutcome } from "../telemetry/metrics";

export interface JobWorkerOptions {
  /** Shown in `job.locked_by`; default a fresh `wrk_…`. */
  id?: string;
  /** Only these kinds (default: every registered kind, looked up at each claim). */
  kinds?: string[];
  /** How long a claim lasts without a heartbeat (default SVC_JOB_LEASE_MS, else 30 s). */
  leaseMs?: number;
  /** The fallback poll for future `runAt`, expired leases and missed notifications (default 1 s). */
  pollMs?: number;
  log?: (line: string) => void;
}

export interface JobWorker {
  id: string;
  /** Resolves once the worker listens (PostgreSQL) and has released a dead process's jobs (SQLite). */
  ready: Promise<void>;
  /** Runs jobs until none may run right now and none is running. */
  drain(): Promise<void>;
  /**
   * Stops claiming and waits for the running handlers. `abandon` returns at once and records no
   * outcome for them, as a crashed worker would: their jobs are claimed again after the lease.
   */
  stop(opts?: { abandon?: boolean }): Promise<void>;
}

const DEFAULT_CONCURRENCY = 10;
const MAX_BATCH = 50;

/** The lease of a claim: SVC_JOB_LEASE_MS, 1 s to 1 h, default 30 s. */
export function jobLeaseMs(): number {
  const raw = process.env.SVC_JOB_LEASE_MS;
  if (raw === undefined || raw === "") return 30_000;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1000 || value > 3_600_000)
    throw new Error(`SVC_JOB_LEASE_MS must be an integer from 1000 to 3600000, got ${JSON.stringify(raw)}`);
  return value;
}

/**
 * Why `npm run worker` may not run here, or undefined when it may. SQLite's writes are serialised
 * by one process's lock, and at start that process releases every running job as its own; a second
 * process would break both, so on SQLite the web process's in-process worker is the only one.
 */
export function standaloneWorkerRefusal(): string | undefined {
  return config().engine === "sqlite"
    ? "npm run worker needs PostgreSQL: on SQLite the web process runs the only worker (SVC_IN_PROCESS_WORKER=1, the default)"
    : undefined;
}

// Databases whose running jobs this process has already released (see releaseRunningJobs).
const released = processWide("jobs.releasedDatabases", () => new WeakSet<Database>());

/** A job released because the database failed is claimable again this long after. */
const OUTAGE_RELEASE_MS = 500;

interface Running {
  job: ClaimedJob;
  abort: AbortController;
  done: Promise<void>;
}

/**
 * The claim loop: claims runnable jobs of each kind up to its concurrency (plus its claim-ahead),
 * runs their handlers, keeps their leases alive every lease/3, and records what a handler did not
 * record itself (returned: finished; threw: retried with backoff or dead-lettered). Woken by NOTIFY
 * on PostgreSQL, by local commits on both engines, and by a poll.
 *
 * The database failing is not the work failing: a handler that meets a lost connection, a refusal
 * or a full disk gives its attempt back and the job is claimed again once the database answers;
 * what the worker records (a retry, a dead letter, a finished job) it records again until it
 * sticks. Nothing is dead-lettered by an outage, and nothing is dead-lettered without its kind's
 * `onExhausted`.
 */
export function startJobWorker(opts: JobWorkerOptions = {}): JobWorker {
  const loop = new ClaimLoop(opts);
  return { id: loop.id, ready: loop.ready, drain: () => loop.drain(), stop: (o) => loop.stop(o) };
}

class ClaimLoop {
  readonly id: string;
  readonly ready: Promise<void>;
  private readonly leaseMs: number;
  private readonly log: (line: string) => void;
  private readonly kinds: string[] | undefined;
  private readonly db: Promise<Database>;
  private readonly running = new Map<string, Running>();
  private readonly runningByKind = new Map<string, number>();
  /**
   * Jobs claimed ahead of a free slot (a kind's `claimAhead`), by kind: not started, their leases
   * kept by the heartbeat, started the moment a slot frees. Their domain rows are untouched until
   * then (an execution waiting here is still `queued`, and a cancel ends it at once).
   */
  private readonly waiting = new Map<string, ClaimedJob[]>();
  private readonly finished: FinishedJobs;
  private pumping: Promise<number> | undefined;
  private again = false;
  /**
   * The kinds that may have due jobs this worker has not tried to claim since it learnt of them: a
   * kind enters when it is woken for it (a local commit, a NOTIFY, a released job's delay) or when
   * a claim filled its limit, and leaves when a claim of it runs. `everyKind` puts every kind in
   * (the start, the poll, a reconnect, a failed claim). A job's end, which frees a slot but brings
   * no new job, claims only the kinds still in here: one claim, not one per registered kind.
   */
  private readonly unclaimed = new Set<string>();
  private everyKind = true;
  /** A claim failed with its connection: it may have committed, and its jobs are to be given back. */
  private claimUnsure = false;
  /** Whether the claim in flight is of jobs to wait (their attempt not counted): what to give back if it is lost. */
  private claimingAhead = false;
  private orphansCounted = true;
  private stopped = false;
  private abandoned = false;
  /** When this loop last recorded in the database that a worker is alive (workerSeen.ts); 0: not yet. */
  private seenRecordedAt = 0;
  private listener: JobListener | undefined;
  private readonly heartbeatTimer: NodeJS.Timeout;
  private readonly pollTimer: NodeJS.Timeout;
  private readonly unsubscribe: () => void;

  constructor(opts: JobWorkerOptions) {
    this.id = opts.id ?? newId("wrk");
    this.leaseMs = opts.leaseMs ?? jobLeaseMs();
    this.log = opts.log ?? lineLog("svc-jobs");
    this.kinds = opts.kinds;
    this.db = database();
    this.finished = new FinishedJobs(this.db, this.log);
    this.ready = this.start();
    beat(this.id);
    this.heartbeatTimer = setInterval(() => void this.heartbeat(), Math.max(100, Math.floor(this.leaseMs / 3)));
    this.pollTimer = setInterval(() => void this.poll(), opts.pollMs ?? 1000);
    this.unsubscribe = onJobEnqueued((kind) => this.wanted(kind) && void this.pump(kind));
    this.ready.then(
      () => void this.pump(),
      (e: unknown) => this.log(`the job worker could not start: ${describeError(e)}`),
    );
  }

  private wanted(kind: string): boolean {
    return !this.kinds || this.kinds.includes(kind);
  }

  /** SQLite: releases a dead process's jobs (once per database); PostgreSQL: starts listening. */
  private async start(): Promise<void> {
    const db = await this.db;
    if (db.engine === "sqlite" && !released.has(db)) {
      released.add(db);
      const n = await releaseRunningJobs(db);
      if (n > 0) this.log(`released ${n} job(s) left running by a previous process`);
    }
    if (db.engine === "postgresql" && !this.stopped) {
      this.listener = listenForJobs({
        onKind: (kind) => this.wanted(kind) && void this.pump(kind),
        onReconnect: () => void this.pump(),
        log: this.log,
      });
    }
  }

  /**
   * One claim round over the kinds that may have due jobs and have free slots, repeated while
   * anything asks for more; resolves to the jobs claimed. `woken`: the kind that has new due jobs,
   * undefined for any kind (poll, reconnect, drain), null for none (a slot freed).
   */
  pump(woken?: string | null): Promise<number> {
    if (this.stopped) return Promise.resolve(0);
    if (woken === undefined) this.everyKind = true;
    else if (woken !== null) this.unclaimed.add(woken);
    if (this.pumping) {
      this.again = true;
      return this.pumping;
    }
    this.pumping = this.claimRounds().finally(() => (this.pumping = undefined));
    return this.pumping;
  }

  private async claimRounds(): Promise<number> {
    let claimed = 0;
    try {
      await this.ready;
      const db = await this.db;
      if (this.claimUnsure) await this.releaseOrphans(db);
      do {
        this.again = false;
        const kinds = this.kinds ?? registeredJobKinds();
        if (this.everyKind) {
          this.everyKind = false;
          for (const kind of kinds) this.unclaimed.add(kind);
        }
        for (const kind of kinds) if (this.unclaimed.has(kind)) claimed += await this.claimKind(db, kind);
      } while (this.again && !this.stopped);
    } catch (e) {
      // Which kinds were left unclaimed is unknown: the next round tries them all.
      this.everyKind = true;
      // A claim that failed with its connection may have committed: its jobs are this worker's
      // in the database, not in memory. The next round gives them back.
      if (isInfrastructureError(e)) {
        this.orphansCounted = (this.claimUnsure && this.orphansCounted) || !this.claimingAhead;
        this.claimUnsure = true;
      }
      if (!this.stopped) this.failed("claiming jobs", e);
    }
    return claimed;
  }

  private async releaseOrphans(db: Database): Promise<void> {
    const held = [...this.running.keys(), ...this.finished.ids(), ...this.allWaiting().map((j) => j.id)];
    const n = await releaseOrphanedClaims(db, this.id, held, { counted: this.orphansCounted });
    this.claimUnsure = false;
    if (n > 0) this.log(`gave back ${n} job(s) whose claim was committed but its answer lost with the connection`);
  }

  /**
   * Claims as many jobs of `kind` as it has free slots (at most MAX_BATCH) and launches them; a
   * kind with a claim-ahead claims that many more, which wait here for a slot (see `waiting`).
   */
  private async claimKind(db: Database, kind: string): Promise<number> {
    const def = jobKind(kind);
    if (!def || this.stopped) return 0;
    const concurrency = def.concurrency ?? DEFAULT_CONCURRENCY;
    const free =
      concurrency + (def.claimAhead ?? 0) - (this.runningByKind.get(kind) ?? 0) - this.waitingOf(kind).length;
    if (free <= 0) return 0; // it stays unclaimed: a freed slot claims it
    const limit = Math.min(free, MAX_BATCH);
    this.unclaimed.delete(kind);
    // Those that start now count their attempt in the claim; those that wait count it as they start.
    const startNow = Math.min(limit, Math.max(0, concurrency - (this.runningByKind.get(kind) ?? 0)));
    this.claimingAhead = false;
    const jobs = startNow > 0 ? await claimJobs(db, this.id, kind, startNow, this.leaseMs) : [];
    for (const job of jobs) this.launch(db, def, job);
    if (jobs.length === startNow && limit > startNow) {
      this.claimingAhead = true;
      const ahead = await claimJobs(db, this.id, kind, limit - startNow, this.leaseMs, { ahead: true });
      this.claimingAhead = false;
      this.waitingOf(kind).push(...ahead);
      jobs.push(...ahead);
      // Runs that ended while this claim was in flight freed slots that no waiting job took then
      // (there was none yet); left waiting, these would sit claimed with a slot free until some
      // other run ended, and a chain of runs each started by the last (a trigger) would never end.
      this.startWaiting(db, def, kind);
    }
    if (jobs.length === limit) {
      this.unclaimed.add(kind);
      this.again = true;
    }
    return jobs.length;
  }

  private waitingOf(kind: string): ClaimedJob[] {
    let list = this.waiting.get(kind);
    if (!list) this.waiting.set(kind, (list = []));
    return list;
  }

  private launch(db: Database, def: JobKind, job: ClaimedJob): void {
    this.runningByKind.set(job.kind, (this.runningByKind.get(job.kind) ?? 0) + 1);
    const abort = new AbortController();
    const done = this.attempt(db, def, job, abort.signal).finally(() => {
      this.running.delete(job.id);
      this.runningByKind.set(job.kind, (this.runningByKind.get(job.kind) ?? 1) - 1);
      if (this.stopped) return;
      // The freed slot goes to a job claimed ahead at once, without a claim round trip.
      this.startWaiting(db, def, job.kind);
      setImmediate(() => void this.pump(null));
    });
    this.running.set(job.id, { job, abort, done });
  }

  /** Starts jobs claimed ahead of `kind` while it has free slots. */
  private startWaiting(db: Database, def: JobKind, kind: string): void {
    if (this.stopped) return;
    const concurrency = def.concurrency ?? DEFAULT_CONCURRENCY;
    const waiting = this.waitingOf(kind);
    while (waiting.length > 0 && (this.runningByKind.get(kind) ?? 0) < concurrency)
      this.launch(db, def, waiting.shift()!);
  }

  /** The jobs claimed ahead and not started, of every kind. */
  private allWaiting(): ClaimedJob[] {
    return [...this.waiting.values()].flat();
  }

  /** One claim of a job: its handler, then whatever outcome the handler left to the worker. */
  private async attempt(db: Database, def: JobKind, job: ClaimedJob, signal: AbortSignal): Promise<void> {
    const startedAt = performance.now();
    if (job.uncounted) {
      let held: boolean;
      try {
        held = await startAttempt(db, job);
      } catch (e) {
        // Not started: back to the queue as it was (a failed release leaves it to its lease).
        if (!this.stopped) this.failed("starting a job claimed ahead", e);
        await releaseJob(db, job, "its start failed with the database", OUTAGE_RELEASE_MS, { uncounted: false }).catch(
          () => false,
        );
        return;
      }
      if (!held) return observeJob(job.kind, "lease_lost", startedAt);
    }
    observeJob(job.kind, await this.runAttempt(db, def, job, signal), startedAt);
  }

  private async runAttempt(db: Database, def: JobKind, job: ClaimedJob, signal: AbortSignal): Promise<JobOutcome> {
    // Claimed again after its last allowed attempt's lease expired: its worker died every time.
    if (job.attempts > job.maxAttempts)
      return this.deadLetter(db, job, new WorkerLost(job.id), signal).then(() => "dead_lettered");
    logger().debug({ job_id: job.id, kind: job.kind, attempt: job.attempts }, `job ${job.id} (${job.kind}) runs`);
    try {
      await inJobSpan(job, () => def.handler(job, this.helpers(job, signal)));
      if (!this.abandoned && !outcomeCommitted(job)) this.finished.add(job);
      return "succeeded";
    } catch (e) {
      if (this.abandoned) return "abandoned";
      if (e instanceof LeaseLost) return "lease_lost";
      if (outcomeCommitted(job)) return "succeeded";
      if (isInfrastructureError(e)) return this.giveBackAttempt(db, job, e, signal).then(() => "given_back");
      if (job.attempts >= job.maxAttempts) return this.deadLetter(db, job, e, signal).then(() => "dead_lettered");
      await this.retry(db, job, e, signal);
      return "retried";
    }
  }

  private helpers(job: ClaimedJob, signal: AbortSignal): JobHelpers {
    return {
      signal,
      log: this.log,
      commit: (fn) =>
        retryThroughOutage(fn, {
          signal,
          onRetry: (e) =>
            this.log(
              `job ${job.id} (${job.kind}): recording its outcome met an outage (${describeError(e)}); retrying`,
            ),
        }),
    };
  }

  /** The handler threw: the job is queued again after its backoff. */
  private async retry(db: Database, job: ClaimedJob, error: unknown, signal: AbortSignal): Promise<void> {
    try {
      await retryThroughOutage(() => db.writeTx((tx) => retryJob(tx, job, error)), { signal });
      this.log(
        `job ${job.id} (${job.kind}) attempt ${job.attempts} of ${job.maxAttempts} failed: ${describeError(error)}; will retry`,
      );
    } catch (e) {
      if (!(e instanceof LeaseLost) && !signal.aborted)
        this.log(`job ${job.id}: could not record its failure: ${describeError(e)}`);
    }
  }

  /**
   * Dead-letters a job with its kind's `onExhausted`, in one transaction. Should the hook itself
   * fail, the job is not dead-lettered without it (its domain row would stay in progress with no
   * job to end it): it waits a backoff and is claimed again, to be dead-lettered then.
   */
  private async deadLetter(db: Database, job: ClaimedJob, error: unknown, signal: AbortSignal): Promise<void> {
    try {
      await retryThroughOutage(() => db.writeTx((tx) => retryJob(tx, job, error, 0)), { signal });
      this.log(
        error instanceof WorkerLost
          ? `job ${job.id} (${job.kind}) dead-lettered: the worker of its last attempt was lost`
          : `job ${job.id} (${job.kind}) attempt ${job.attempts} of ${job.maxAttempts} failed: ${describeError(error)}; dead-lettered`,
      );
      return;
    } catch (e) {
      if (e instanceof LeaseLost || signal.aborted) return;
      this.log(
        `job ${job.id} (${job.kind}): its onExhausted failed (${describeError(e)}); it is tried again later, not dead-lettered without it`,
      );
      await this.release(db, job, `onExhausted failed: ${describeError(e)}`, backoffDelay(job.attempts), false, signal);
    }
  }

  /** The database failed, not the work: the job goes back to the queue with its attempt given back. */
  private async giveBackAttempt(db: Database, job: ClaimedJob, error: unknown, signal: AbortSignal): Promise<void> {
    noteOutage(error);
    await this.release(
      db,
      job,
      `the database failed during the attempt (not counted): ${describeError(error)}`,
      OUTAGE_RELEASE_MS,
      true,
      signal,
    );
  }

  private async release(
    db: Database,
    job: ClaimedJob,
    why: string,
    delayMs: number,
    uncounted: boolean,
    signal: AbortSignal,
  ): Promise<void> {
    try {
      await retryThroughOutage(() => releaseJob(db, job, why, delayMs, { uncounted }), { signal });
      setTimeout(() => void this.pump(job.kind), delayMs).unref();
    } catch (e) {
      if (!signal.aborted)
        this.log(
          `job ${job.id}: could not put it back in the queue: ${describeError(e)}; it is claimed again after its lease`,
        );
    }
  }

  /** Extends this worker's leases; a handler whose claim was taken over is told to stop. */
  private async heartbeat(): Promise<void> {
    const waiting = this.allWaiting();
    if (this.running.size === 0 && this.finished.size === 0 && waiting.length === 0) return;
    const held = [...this.running.values()];
    try {
      const leases = await extendLeases(await this.db, this.id, this.leaseMs);
      const holds = (job: ClaimedJob) => leases.has(`${job.id}:${job.leaseToken}`);
      for (const r of held) if (!holds(r.job) && !outcomeCommitted(r.job)) r.abort.abort(new LeaseLost(r.job.id));
      // A waiting job whose lease lapsed (the process was frozen) belongs to whoever took it over.
      for (const job of waiting)
        if (!holds(job)) this.waitingOf(job.kind).splice(this.waitingOf(job.kind).indexOf(job), 1);
    } catch (e) {
      if (!this.stopped || this.running.size > 0) this.failed("extending leases", e);
    }
  }

  /**
   * The poll: that a worker is alive (every WORKER_SEEN_EVERY_MS), expired leases back to the
   * queue, then a claim round (future runAt, missed notifications).
   */
  private async poll(): Promise<void> {
    beat(this.id);
    if (Date.now() - this.seenRecordedAt >= WORKER_SEEN_EVERY_MS) {
      this.seenRecordedAt = Date.now();
      try {
        await recordWorkerSeen(await this.db);
      } catch (e) {
        // The next poll tries again rather than waiting out the interval.
        this.seenRecordedAt = 0;
        if (!this.stopped) this.failed("recording that the worker is alive", e);
      }
    }
    try {
      await reclaimExpiredJobs(await this.db);
    } catch (e) {
      if (!this.stopped) this.failed("reclaiming expired leases", e);
    }
    void this.pump();
  }

  /** An outage is reported once for all of it (and ends in a claim round); anything else is logged. */
  private failed(what: string, error: unknown): void {
    if (!noteOutage(error)) this.log(`${what} failed: ${describeError(error)}`);
    else void outageEnded()?.then(() => void this.pump());
  }

  async drain(): Promise<void> {
    for (;;) {
      const claimed = await this.pump();
      if (claimed === 0 && this.running.size === 0 && this.allWaiting().length === 0 && !this.pumping) break;
      if (this.running.size > 0) await Promise.race([...this.running.values()].map((r) => r.done));
    }
    await this.finished.flushed();
  }

  async stop({ abandon = false } = {}): Promise<void> {
    this.stopped = true;
    forgetBeat(this.id);
    clearInterval(this.pollTimer);
    this.unsubscribe();
    const waiting = this.allWaiting();
    this.waiting.clear();
    if (abandon) {
      clearInterval(this.heartbeatTimer);
      this.abandoned = true;
      this.finished.abandon();
      for (const r of this.running.values()) r.abort.abort(new Error("the worker stopped"));
    } else {
      // Jobs claimed ahead and never started go back to the queue; their attempt was never counted.
      const db = await this.db;
      await Promise.all(
        waiting.map((job) =>
          releaseJob(db, job, "the worker stopped before starting it", 0, { uncounted: false }).catch(() => false),
        ),
      );
      // The heartbeat goes on until the handlers end: a lapsed lease would let another worker run them again.
      await Promise.all([...this.running.values()].map((r) => r.done));
      await this.finished.flushed();
      clearInterval(this.heartbeatTimer);
    }
    await this.pumping;
    await this.ready.catch(() => undefined);
    await this.listener?.end();
  }
}
