import { afterEach, describe, expect, it } from "vitest";
import { database } from "@/server/db/client";
import { clearOutage } from "@/server/db/outage";
import { enqueue, finishJob, registerJobKind, startJobWorker, type JobWorker } from "@/server/jobs";

/**
 * The database failing is not the work failing (issue 21): a job whose attempt met a lost
 * connection gets it back, an outcome the handler reached is committed through the outage, and
 * nothing is dead-lettered without its kind's onExhausted.
 */
const quiet = () => undefined;
const workers: JobWorker[] = [];
function worker(kinds: string[]): JobWorker {
  const w = startJobWorker({ kinds, log: quiet, pollMs: 50 });
  workers.push(w);
  return w;
}
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop({ abandon: true })));
  clearOutage();
});

// As node-postgres throws it when an administrator terminates the connection.
const connectionLost = () =>
  Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" });

describe("jobs through a database outage", () => {
  it("gives the attempt back when the handler meets a lost connection: max_attempts 1 still runs to its end", async () => {
    const db = await database();
    let calls = 0;
    const exhausted: unknown[] = [];
    registerJobKind("test.outage.attempt", {
      handler: async () => {
        if (++calls === 1) throw connectionLost();
      },
      onExhausted: async (_tx, _job, error) => void exhausted.push(error),
    });
    worker(["test.outage.attempt"]);
    const id = await db.writeTx((tx) => enqueue(tx, "test.outage.attempt", {}, { maxAttempts: 1 }));
    await expect
      .poll(async () => (await db.read.job.findUnique({ where: { id } })) === null, { timeout: 10_000 })
      .toBe(true);
    expect(calls).toBe(2);
    expect(exhausted).toEqual([]);
  });

  it("commits an outcome through the outage, keeping what the handler reached, without spending an attempt", async () => {
    const db = await database();
    let runs = 0;
    let commits = 0;
    registerJobKind("test.outage.commit", {
      handler: async (job, helpers) => {
        runs++;
        await helpers.commit(async () => {
          if (++commits <= 3) throw connectionLost();
          await db.writeTx((tx) => finishJob(tx, job));
        });
      },
    });
    worker(["test.outage.commit"]);
    const id = await db.writeTx((tx) => enqueue(tx, "test.outage.commit", {}, { maxAttempts: 1 }));
    await expect
      .poll(async () => (await db.read.job.findUnique({ where: { id } })) === null, { timeout: 10_000 })
      .toBe(true);
    expect(runs).toBe(1);
    expect(commits).toBe(4);
  });

  it("never dead-letters without onExhausted: a hook that fails is tried again later", async () => {
    const db = await database();
    let hookCalls = 0;
    registerJobKind("test.outage.hook", {
      retryDelay: () => 10,
      handler: async () => {
        throw new Error("the work failed");
      },
      onExhausted: async () => {
        if (++hookCalls === 1) throw new Error("the hook failed once");
      },
    });
    worker(["test.outage.hook"]);
    const id = await db.writeTx((tx) => enqueue(tx, "test.outage.hook", {}, { maxAttempts: 1 }));
    await expect
      .poll(async () => (await db.read.job.findUnique({ where: { id } }))?.state, { timeout: 15_000, interval: 100 })
      .toBe("failed");
    expect(hookCalls).toBe(2);
  });
});
