import { config } from "../config";
import { database, type Database } from "../db/client";
import { newId } from "../ids";
import { claimJobs, deleteFinished, extendLeases, reclaimExpiredJobs, releaseRunningJobs } from "./claim";
import { describeError, outcomeCommitted, retryJob } from "./finishJob";
import { jobKind, registeredJobKinds, type JobKind } from "./registry";
import { LeaseLost, WorkerLost, type ClaimedJob } from "./types";
import { JOBS_CHANNEL, onJobEnqueued } from "./wake";
import { processWide } from "../processWide";

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
  if (!Number.isInteger(value) || value < 1000 || value > 3_600_000) throw new Error(`SVC_JOB_LEASE_MS must be an integer from 1000 to 3600000, got ${JSON.stringify(raw)}`);
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

interface Running {
  job: ClaimedJob;
  abort: AbortController;
  done: Promise<void>;
}

/**
 * The claim loop: claims runnable jobs of each kind up to its concurrency, runs their handlers,
 * keeps their leases alive every lease/3, and records what a handler did not record itself
 * (returned: finished; threw: retried with backoff or dead-lettered). Woken by NOTIFY on
 * PostgreSQL, by local commits on both engines, and by a poll.
 */
export function startJobWorker(opts: JobWorkerOptions = {}): JobWorker {
  const workerId = opts.id ?? newId("wrk");
  const leaseMs = opts.leaseMs ?? jobLeaseMs();
  const pollMs = opts.pollMs ?? 1000;
  const log = opts.log ?? ((line: string) => console.log(`svc-jobs: ${line}`));
  const wanted = (kind: string) => !opts.kinds || opts.kinds.includes(kind);
  const running = new Map<string, Running>();
  const runningByKind = new Map<string, number>();
  const finished: ClaimedJob[] = [];
  let stopped = false;
  let abandoned = false;
  let listener: { end(): Promise<void> } | undefined;
  let flushScheduled = false;
  let flushing = Promise.resolve();

  const dbReady = database();
  const ready = (async () => {
    const db = await dbReady;
    if (db.engine === "sqlite" && !released.has(db)) {
      released.add(db);
      const n = await releaseRunningJobs(db);
      if (n > 0) log(`released ${n} job(s) left running by a previous process`);
    }
    if (db.engine === "postgresql") await listen();
  })();

  async function listen(): Promise<void> {
    if (stopped) return;
    const { default: pg } = await import("pg");
    const client = new pg.Client({ connectionString: config().databaseUrl });
    let retried = false;
    const reconnect = (e?: Error) => {
      if (retried || stopped) return;
      retried = true;
      if (e) log(`the ${JOBS_CHANNEL} listener failed (${e.message}); polling until it is back`);
      client.end().catch(() => undefined);
      setTimeout(() => void listen().then(() => void pump()), 1000).unref();
    };
    client.on("error", reconnect);
    client.on("end", () => reconnect());
    client.on("notification", (n) => {
      if (n.payload && wanted(n.payload)) void pump();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${JOBS_CHANNEL}`);
    } catch (e) {
      reconnect(e as Error);
      return;
    }
    listener = { end: () => ((retried = true), client.end()) };
  }

  let pumping: Promise<number> | undefined;
  let again = false;
  /** One claim round over every kind with free slots, repeated while anything asks for more; resolves to the jobs claimed. */
  function pump(): Promise<number> {
    if (stopped) return Promise.resolve(0);
    if (pumping) {
      again = true;
      return pumping;
    }
    pumping = (async () => {
      let claimed = 0;
      try {
        await ready;
        const db = await dbReady;
        do {
          again = false;
          for (const kind of opts.kinds ?? registeredJobKinds()) {
            const def = jobKind(kind);
            if (!def || stopped) continue;
            const free = (def.concurrency ?? DEFAULT_CONCURRENCY) - (runningByKind.get(kind) ?? 0);
            if (free <= 0) continue;
            const limit = Math.min(free, MAX_BATCH);
            const jobs = await claimJobs(db, workerId, kind, limit, leaseMs);
            claimed += jobs.length;
            for (const job of jobs) launch(db, def, job);
            if (jobs.length === limit) again = true;
          }
        } while (again && !stopped);
      } catch (e) {
        if (!stopped) log(`claiming jobs failed: ${describeError(e)}`);
      } finally {
        pumping = undefined;
      }
      return claimed;
    })();
    return pumping;
  }

  function launch(db: Database, def: JobKind, job: ClaimedJob): void {
    runningByKind.set(job.kind, (runningByKind.get(job.kind) ?? 0) + 1);
    const abort = new AbortController();
    const done = (async () => {
      // Claimed again after its last allowed attempt's lease expired: its worker died every time.
      if (job.attempts > job.maxAttempts) {
        await deadLetter(db, job, new WorkerLost(job.id));
        log(`job ${job.id} (${job.kind}) dead-lettered: the worker of its last attempt was lost`);
        return;
      }
      try {
        await def.handler(job, { signal: abort.signal, log });
        if (!abandoned && !outcomeCommitted(job)) {
          finished.push(job);
          scheduleFlush(db);
        }
      } catch (e) {
        if (abandoned || e instanceof LeaseLost || outcomeCommitted(job)) return;
        if (job.attempts >= job.maxAttempts) {
          await deadLetter(db, job, e);
          log(`job ${job.id} (${job.kind}) attempt ${job.attempts} of ${job.maxAttempts} failed: ${describeError(e)}; dead-lettered`);
          return;
        }
        try {
          await db.writeTx((tx) => retryJob(tx, job, e));
          log(`job ${job.id} (${job.kind}) attempt ${job.attempts} of ${job.maxAttempts} failed: ${describeError(e)}; will retry`);
        } catch (e2) {
          if (!(e2 instanceof LeaseLost)) log(`job ${job.id}: could not record its failure: ${describeError(e2)}`);
        }
      }
    })().finally(() => {
      running.delete(job.id);
      runningByKind.set(job.kind, (runningByKind.get(job.kind) ?? 1) - 1);
      if (!stopped) setImmediate(() => void pump());
    });
    running.set(job.id, { job, abort, done });
  }

  /** Dead-letters a job with its kind's `onExhausted`; should that fail, without it, so the job cannot come back for ever. */
  async function deadLetter(db: Database, job: ClaimedJob, error: unknown): Promise<void> {
    try {
      await db.writeTx((tx) => retryJob(tx, job, error, 0));
      return;
    } catch (e) {
      if (e instanceof LeaseLost) return;
      log(`job ${job.id} (${job.kind}): its onExhausted failed, dead-lettered without it: ${describeError(e)}`);
    }
    await db.writeTx((tx) => retryJob(tx, job, error, 0, { exhaustedHook: false })).catch((e: unknown) => {
      if (!(e instanceof LeaseLost)) log(`job ${job.id}: could not dead-letter it: ${describeError(e)}`);
    });
  }

  function scheduleFlush(db: Database): void {
    if (flushScheduled) return;
    flushScheduled = true;
    setImmediate(() => {
      flushScheduled = false;
      const batch = finished.splice(0);
      flushing = flushing.then(() =>
        deleteFinished(db, batch).then(
          () => undefined,
          (e: unknown) => log(`could not delete ${batch.length} finished job(s); they run again after their lease: ${describeError(e)}`),
        ),
      );
    });
  }
  const flushed = async () => {
    while (flushScheduled) await new Promise((r) => setImmediate(r));
    await flushing;
  };

  const heartbeat = setInterval(async () => {
    if (running.size === 0) return;
    const held = [...running.values()];
    try {
      const leases = await extendLeases(await dbReady, workerId, leaseMs);
      for (const r of held) if (!leases.has(`${r.job.id}:${r.job.leaseToken}`) && !outcomeCommitted(r.job)) r.abort.abort(new LeaseLost(r.job.id));
    } catch (e) {
      if (!stopped) log(`extending leases failed: ${describeError(e)}`);
    }
  }, Math.max(100, Math.floor(leaseMs / 3)));
  // The poll: expired leases back to the queue, then a claim round (future runAt, missed notifications).
  const poll = setInterval(async () => {
    try {
      await reclaimExpiredJobs(await dbReady);
    } catch (e) {
      if (!stopped) log(`reclaiming expired leases failed: ${describeError(e)}`);
    }
    void pump();
  }, pollMs);
  const unsubscribe = onJobEnqueued((kind) => {
    if (wanted(kind)) void pump();
  });
  ready.then(
    () => void pump(),
    (e: unknown) => log(`the job worker could not start: ${describeError(e)}`),
  );

  return {
    id: workerId,
    ready,
    async drain() {
      for (;;) {
        const claimed = await pump();
        if (claimed === 0 && running.size === 0 && !pumping) break;
        if (running.size > 0) await Promise.race([...running.values()].map((r) => r.done));
      }
      await flushed();
    },
    async stop({ abandon = false } = {}) {
      stopped = true;
      clearInterval(poll);
      unsubscribe();
      if (abandon) {
        clearInterval(heartbeat);
        abandoned = true;
        for (const r of running.values()) r.abort.abort(new Error("the worker stopped"));
      } else {
        // The heartbeat goes on until the handlers end: a lapsed lease would let another worker run them again.
        await Promise.all([...running.values()].map((r) => r.done));
        clearInterval(heartbeat);
        await flushed();
      }
      await pumping;
      await ready.catch(() => undefined);
      await listener?.end().catch(() => undefined);
    },
  };
}
