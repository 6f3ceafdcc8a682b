import { afterEach, describe, expect, it } from "vitest";
import pg from "pg";
import { config } from "@/server/config";
import { closeDatabase, database } from "@/server/db/client";
import { countStatements } from "@/server/db/statements";
import { newId } from "@/server/ids";
import {
  enqueue,
  finishJob,
  LeaseLost,
  registerJobKind,
  standaloneWorkerRefusal,
  startJobWorker,
  WorkerLost,
  type ClaimedJob,
  type JobWorker,
} from "@/server/jobs";

// Engine-specific tests are not registered at all on the other engine: a skipped test fails CI.
const itNever = (..._args: unknown[]) => undefined;
const describeNever = (..._args: unknown[]) => undefined;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const quiet = () => undefined;
const workers: JobWorker[] = [];
function worker(kinds: string[], opts: { leaseMs?: number; pollMs?: number } = {}): JobWorker {
  const w = startJobWorker({ kinds, log: quiet, ...opts });
  workers.push(w);
  return w;
}
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop({ abandon: true })));
});

/** A row the handler writes in its own transaction, standing for a domain write. */
const domainWrite = (tx: Parameters<Parameters<Awaited<ReturnType<typeof database>>["writeTx"]>[0]>[0], key: string) =>
  tx.idempotencyKey.create({ data: { scope: "jobs-test", key, requestHash: "-", status: 200, body: "{}" } });
const domainRows = async (key: string) =>
  (await database()).read.idempotencyKey.count({ where: { scope: "jobs-test", key } });

describe("the durable job queue", () => {
  it("keeps no job from a transaction that rolls back, and keeps the one that commits", async () => {
    const db = await database();
    let rolledBack = "";
    await expect(
      db.writeTx(async (tx) => {
        rolledBack = await enqueue(tx, "test.rollback", { n: 1 });
        throw new Error("the call failed");
      }),
    ).rejects.toThrow("the call failed");
    const committed = await db.writeTx((tx) => enqueue(tx, "test.rollback", { n: 2 }, { orgDid: "did:example:org" }));
    expect(await db.read.job.findUnique({ where: { id: rolledBack } })).toBeNull();
    expect(await db.read.job.findUnique({ where: { id: committed } })).toMatchObject({
      kind: "test.rollback",
      state: "queued",
      attempts: 0,
      orgDid: "did:example:org",
      payload: '{"n":2}',
    });
  });

  it("runs a committed job exactly once and deletes it, woken at commit rather than by the poll", async () => {
    const db = await database();
    const runs: Array<{ id: string; payload: unknown; at: number }> = [];
    registerJobKind("test.once", {
      handler: async (job) => void runs.push({ id: job.id, payload: job.payload, at: Date.now() }),
    });
    const w = worker(["test.once"], { pollMs: 60_000 });
    await w.ready;
    const id = await db.writeTx((tx) => enqueue(tx, "test.once", { hello: "world" }));
    const committed = Date.now();
    await expect.poll(() => runs.length, { timeout: 15_000, interval: 10 }).toBe(1);
    // Woken by the commit, not by the poll (a minute away): tens of milliseconds on a quiet machine.
    // Measured from the commit (the run may even precede the end of writeTx) and bounded well under
    // the poll, so that a loaded machine's scheduling does not count against the wake-up.
    expect(runs[0]!.at - committed).toBeLessThan(3_000);
    await sleep(300);
    expect(runs).toEqual([{ id, payload: { hello: "world" }, at: runs[0]!.at }]);
    await w.drain();
    expect(await db.read.job.findUnique({ where: { id } })).toBeNull();
  });

  it("retries a failing handler with backoff, counting attempts, until it succeeds", async () => {
    const db = await database();
    const seen: Array<{ attempt: number; at: number }> = [];
    registerJobKind("test.flaky", {
      retryDelay: (attempt) => 150 * attempt,
      handler: async (job) => {
        seen.push({ attempt: job.attempts, at: Date.now() });
        if (job.attempts < 3) throw new Error(`flaky ${job.attempts}`);
        await db.writeTx(async (tx) => {
          await domainWrite(tx, job.id);
          await finishJob(tx, job);
        });
      },
    });
    worker(["test.flaky"], { pollMs: 50 });
    const id = await db.writeTx((tx) => enqueue(tx, "test.flaky", {}, { maxAttempts: 5 }));
    await expect.poll(() => domainRows(id), { timeout: 10_000 }).toBe(1);
    expect(seen.map((s) => s.attempt)).toEqual([1, 2, 3]);
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(140);
    expect(seen[2]!.at - seen[1]!.at).toBeGreaterThanOrEqual(290);
    expect(await db.read.job.findUnique({ where: { id } })).toBeNull();
  });

  it("dead-letters a job as failed with its last error once its attempts are spent", async () => {
    const db = await database();
    let calls = 0;
    registerJobKind("test.doomed", {
      retryDelay: () => 20,
      handler: async (job) => {
        calls++;
        throw new Error(`boom on attempt ${job.attempts}`);
      },
    });
    worker(["test.doomed"], { pollMs: 50 });
    const id = await db.writeTx((tx) => enqueue(tx, "test.doomed", {}, { maxAttempts: 2 }));
    await expect
      .poll(async () => (await db.read.job.findUnique({ where: { id } }))?.state, { timeout: 10_000 })
      .toBe("failed");
    const job = await db.read.job.findUniqueOrThrow({ where: { id } });
    expect(job).toMatchObject({ attempts: 2, lastError: "Error: boom on attempt 2", leaseToken: null, lockedBy: null });
    await sleep(300);
    expect(calls).toBe(2);
  });

  it("gives a dead worker's job to another worker after the lease, and fences the first one out", async () => {
    const db = await database();
    const claims: Array<{ attempt: number; worker: string; at: number }> = [];
    let wakeFirst!: () => void;
    let wakeSecond!: () => void;
    const firstMayGoOn = new Promise<void>((r) => (wakeFirst = r));
    const secondMayGoOn = new Promise<void>((r) => (wakeSecond = r));
    let firstOutcome: unknown;
    registerJobKind("test.lease", {
      handler: async (job) => {
        claims.push({ attempt: job.attempts, worker: job.workerId, at: Date.now() });
        if (job.attempts === 1) {
          await firstMayGoOn; // the first worker "hangs", then wakes while the second holds the job
          firstOutcome = await db
            .writeTx(async (tx) => {
              await domainWrite(tx, `${job.id}:first`);
              await finishJob(tx, job);
            })
            .catch((e: unknown) => e);
          return;
        }
        await secondMayGoOn;
        await db.writeTx(async (tx) => {
          await domainWrite(tx, `${job.id}:second`);
          await finishJob(tx, job);
        });
      },
    });
    const first = worker(["test.lease"], { leaseMs: 1200, pollMs: 100 });
    await first.ready;
    const id = await db.writeTx((tx) => enqueue(tx, "test.lease", {}));
    await expect.poll(() => claims.length, { timeout: 5_000, interval: 10 }).toBe(1);
    await first.stop({ abandon: true }); // dies holding the claim: no heartbeat, no outcome
    const second = worker(["test.lease"], { leaseMs: 1200, pollMs: 100 });
    await expect.poll(() => claims.length, { timeout: 10_000, interval: 10 }).toBe(2);
    expect(claims.map((c) => c.attempt)).toEqual([1, 2]);
    expect(claims[1]!.worker).toBe(second.id);
    expect(claims[1]!.at - claims[0]!.at).toBeGreaterThanOrEqual(1100);
    wakeFirst();
    await expect.poll(() => firstOutcome, { timeout: 5_000 }).toBeInstanceOf(LeaseLost);
    expect(await domainRows(`${id}:first`)).toBe(0);
    expect(await db.read.job.findUnique({ where: { id } })).toMatchObject({
      state: "running",
      attempts: 2,
      lockedBy: second.id,
    });
    wakeSecond();
    await expect.poll(() => domainRows(`${id}:second`), { timeout: 5_000 }).toBe(1);
    expect(await db.read.job.findUnique({ where: { id } })).toBeNull();
  });

  it("runs the kind's onExhausted in the transaction that dead-letters a job whose last attempt threw", async () => {
    const db = await database();
    const exhausted: unknown[] = [];
    registerJobKind("test.exhausted", {
      retryDelay: () => 20,
      handler: async () => {
        throw new Error("always");
      },
      onExhausted: async (tx, job, error) => {
        exhausted.push(error);
        await domainWrite(tx, `${job.id}:exhausted`);
      },
    });
    worker(["test.exhausted"], { pollMs: 50 });
    const id = await db.writeTx((tx) => enqueue(tx, "test.exhausted", {}, { maxAttempts: 2 }));
    await expect.poll(() => domainRows(`${id}:exhausted`), { timeout: 10_000 }).toBe(1);
    expect(await db.read.job.findUnique({ where: { id } })).toMatchObject({ state: "failed", attempts: 2 });
    expect(exhausted).toHaveLength(1);
    expect(String(exhausted[0])).toMatch(/always/);
  });

  it("dead-letters a job whose last attempt's worker was lost with onExhausted(WorkerLost), without running the handler again", async () => {
    const db = await database();
    const claims: number[] = [];
    const exhausted: unknown[] = [];
    registerJobKind("test.lost", {
      handler: async (job) => {
        claims.push(job.attempts);
        await sleep(60_000);
      },
      onExhausted: async (tx, job, error) => {
        exhausted.push(error);
        await domainWrite(tx, `${job.id}:lost`);
      },
    });
    const first = worker(["test.lost"], { leaseMs: 1000, pollMs: 100 });
    await first.ready;
    const id = await db.writeTx((tx) => enqueue(tx, "test.lost", {}, { maxAttempts: 1 }));
    await expect.poll(() => claims.length, { timeout: 5_000, interval: 10 }).toBe(1);
    await first.stop({ abandon: true });
    worker(["test.lost"], { leaseMs: 1000, pollMs: 100 });
    await expect.poll(() => domainRows(`${id}:lost`), { timeout: 10_000 }).toBe(1);
    expect(exhausted[0]).toBeInstanceOf(WorkerLost);
    expect(claims).toEqual([1]);
    expect(await db.read.job.findUnique({ where: { id } })).toMatchObject({ state: "failed" });
  });

  it("a graceful stop keeps the running handlers' leases alive until they end", async () => {
    const db = await database();
    const claims: number[] = [];
    registerJobKind("test.graceful", {
      handler: async (job) => {
        claims.push(job.attempts);
        await sleep(2_500);
        await db.writeTx(async (tx) => {
          await domainWrite(tx, `${job.id}:graceful`);
          await finishJob(tx, job);
        });
      },
    });
    const first = worker(["test.graceful"], { leaseMs: 1000, pollMs: 100 });
    await first.ready;
    const id = await db.writeTx((tx) => enqueue(tx, "test.graceful", {}));
    await expect.poll(() => claims.length, { timeout: 5_000, interval: 10 }).toBe(1);
    const stopping = first.stop();
    worker(["test.graceful"], { leaseMs: 1000, pollMs: 100 }); // would take the job over if its lease lapsed
    await stopping;
    await sleep(500);
    expect(claims).toEqual([1]);
    expect(await domainRows(`${id}:graceful`)).toBe(1);
    expect(await db.read.job.findUnique({ where: { id } })).toBeNull();
  });

  it("keeps a live worker's lease with its heartbeat, however long the handler runs", async () => {
    const db = await database();
    const attempts: number[] = [];
    registerJobKind("test.slow", {
      handler: async (job) => {
        attempts.push(job.attempts);
        await sleep(2_500);
      },
    });
    const a = worker(["test.slow"], { leaseMs: 1000, pollMs: 100 });
    await a.ready;
    const id = await db.writeTx((tx) => enqueue(tx, "test.slow", {}));
    worker(["test.slow"], { leaseMs: 1000, pollMs: 100 }); // would steal it if the lease lapsed
    await expect.poll(async () => db.read.job.findUnique({ where: { id } }), { timeout: 10_000 }).toBeNull();
    expect(attempts).toEqual([1]);
  });

  it("honours a future runAt", async () => {
    const db = await database();
    const ran: number[] = [];
    registerJobKind("test.later", { handler: async () => void ran.push(Date.now()) });
    worker(["test.later"], { pollMs: 100 });
    const runAt = new Date(Date.now() + 1_200);
    await db.writeTx((tx) => enqueue(tx, "test.later", {}, { runAt }));
    // Not before its time: checked on the run's own clock rather than by looking after a fixed sleep
    // (on a loaded machine the sleep can outlast runAt, and the job may rightly have run).
    await expect.poll(() => ran.length, { timeout: 10_000 }).toBe(1);
    expect(ran[0]!).toBeGreaterThanOrEqual(runAt.getTime());
    await sleep(300);
    expect(ran).toHaveLength(1);
  });

  it("claims only the kinds that may have due jobs: a job's end claims no idle kind", async () => {
    const db = await database();
    const kinds = ["test.busy", "test.idle.a", "test.idle.b", "test.idle.c"];
    let ran = 0;
    for (const kind of kinds) registerJobKind(kind, { concurrency: 4, handler: async () => void ran++ });
    const w = worker(kinds, { pollMs: 60_000 });
    await w.ready;
    await w.drain(); // the first round, which claims every kind, is over (waited for, not slept on)
    const jobs = 20;
    const { count } = await countStatements(async () => {
      await db.writeTx(async (tx) => {
        for (let i = 0; i < jobs; i++) await enqueue(tx, "test.busy", { i });
      });
      await expect.poll(() => ran, { timeout: 10_000, interval: 10 }).toBe(jobs);
      await expect.poll(async () => db.read.job.count({ where: { kind: "test.busy" } }), { timeout: 10_000 }).toBe(0);
    }).then(({ statements }) => ({ count: statements.filter((s) => s.startsWith("WITH RECURSIVE orgs")).length }));
    // One claim when they commit, then one per freed slot while jobs remain, and one that finds the
    // queue empty. Claiming every registered kind at every job's end made it 4 claims per end.
    expect(count).toBeLessThanOrEqual(jobs);
  });

  it("refuses a standalone worker process on SQLite only", () => {
    expect(standaloneWorkerRefusal() !== undefined).toBe(config().engine === "sqlite");
  });

  (process.env.SVC_TEST_ENGINE === "sqlite" ? it : itNever)(
    "on SQLite, a restarted process runs at once the jobs its predecessor left running",
    async () => {
      let db = await database();
      const id = await db.writeTx((tx) => enqueue(tx, "test.restart", {}));
      // As a process killed mid-job leaves it: running, its lease far from expired.
      await db.writeTx((tx) =>
        tx.job.update({
          where: { id },
          data: {
            state: "running",
            attempts: 1,
            leaseToken: "dead",
            lockedBy: "wrk_dead",
            availableAt: new Date(Date.now() + 3_600_000),
          },
        }),
      );
      await closeDatabase();
      db = await database();
      const ran: number[] = [];
      registerJobKind("test.restart", { handler: async (job) => void ran.push(job.attempts) });
      worker(["test.restart"], { pollMs: 100 });
      await expect.poll(() => ran, { timeout: 5_000 }).toEqual([2]);
    },
  );

  (process.env.SVC_TEST_ENGINE === "postgres" ? describe : describeNever)("on PostgreSQL", () => {
    it("shares 200 jobs between two workers without running any twice", async () => {
      const db = await database();
      const runs = new Map<string, string[]>();
      registerJobKind("test.shared", {
        concurrency: 8,
        handler: async (job: ClaimedJob) => {
          runs.set(job.id, [...(runs.get(job.id) ?? []), job.workerId]);
          await sleep(5);
        },
      });
      const a = worker(["test.shared"], { pollMs: 100 });
      const b = worker(["test.shared"], { pollMs: 100 });
      await Promise.all([a.ready, b.ready]);
      const ids = await db.writeTx(async (tx) => {
        const out: string[] = [];
        for (let i = 0; i < 200; i++) out.push(await enqueue(tx, "test.shared", { i }));
        return out;
      });
      await expect.poll(async () => db.read.job.count({ where: { kind: "test.shared" } }), { timeout: 20_000 }).toBe(0);
      expect([...runs.keys()].sort()).toEqual([...ids].sort());
      expect([...runs.values()].filter((w) => w.length !== 1)).toEqual([]);
      const byWorker = [...runs.values()].flat();
      expect(byWorker.filter((w) => w === a.id).length).toBeGreaterThan(0);
      expect(byWorker.filter((w) => w === b.id).length).toBeGreaterThan(0);
    });

    it("is woken by NOTIFY from another connection well before its poll", async () => {
      const started: number[] = [];
      registerJobKind("test.notify", { handler: async () => void started.push(Date.now()) });
      const w = worker(["test.notify"], { pollMs: 60_000 });
      await w.ready;
      await w.drain(); // the first claim round has come back empty
      // Another process's enqueue: its own connection, so no in-process wake-up can help.
      const other = new pg.Client({ connectionString: config().databaseUrl });
      await other.connect();
      try {
        await other.query("BEGIN");
        await other.query(
          `INSERT INTO "job" ("id", "kind", "payload", "available_at", "updated_at") VALUES ($1, 'test.notify', '{}', $2, $2)`,
          [newId("job"), new Date().toISOString()],
        );
        await other.query(`SELECT pg_notify('svc_jobs', 'test.notify')`);
        await sleep(300);
        expect(started).toEqual([]); // nothing is delivered before COMMIT
        const t0 = Date.now();
        await other.query("COMMIT");
        await expect.poll(() => started.length, { timeout: 15_000, interval: 5 }).toBe(1);
        // Woken by the NOTIFY, not the poll (a minute away): tens of milliseconds on a quiet machine,
        // bounded well under the poll so that a loaded machine's scheduling does not fail it.
        expect(started[0]! - t0).toBeLessThan(3_000);
      } finally {
        await other.end();
      }
    });
  });
});
