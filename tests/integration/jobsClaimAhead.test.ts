import { afterEach, describe, expect, it } from "vitest";
import { database } from "@/server/db/client";
import { enqueue, registerJobKind, startJobWorker, type JobWorker } from "@/server/jobs";

/**
 * Claim-ahead (issue 15): a kind bound by a resource of its own claims a few jobs beyond its
 * concurrency; they wait in the worker, their leases kept by the heartbeat, and start the moment a
 * slot frees.
 */
const workers: JobWorker[] = [];
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop({ abandon: true })));
});

describe("claim-ahead", () => {
  it("claims two ahead of a full slot, keeps their leases while they wait, and starts the next as the slot frees", async () => {
    const db = await database();
    const started: string[] = [];
    const release = new Map<string, () => void>();
    registerJobKind("test.ahead", {
      concurrency: 1,
      claimAhead: 2,
      handler: (job) =>
        new Promise<void>((resolve) => {
          started.push(job.id);
          release.set(job.id, resolve);
        }),
    });
    const w = startJobWorker({ kinds: ["test.ahead"], leaseMs: 1000, pollMs: 100, log: () => undefined });
    workers.push(w);
    await w.ready;
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await db.writeTx((tx) => enqueue(tx, "test.ahead", { i })));
    const states = async () => (await db.read.job.findMany({ where: { id: { in: ids } } })).map((j) => j.state).sort();
    await expect.poll(states, { timeout: 5_000 }).toEqual(["queued", "running", "running", "running"]);
    expect(started).toHaveLength(1);
    const [first] = started;
    // Past the lease: the waiting jobs are still this worker's (the heartbeat kept them), not reclaimed.
    // Polled, not read once: a heartbeat that a loaded machine runs late leaves a moment when the
    // lease has just lapsed; without the heartbeat it stays lapsed (1 s after the claim) for good.
    await new Promise((r) => setTimeout(r, 1600));
    const waitingJobs = () =>
      db.read.job.findMany({ where: { id: { in: ids }, state: "running", NOT: { id: first } } });
    await expect
      .poll(async () => (await waitingJobs()).map((j) => [j.state, j.attempts, j.availableAt.getTime() > Date.now()]), {
        timeout: 5_000,
        interval: 50,
      })
      .toEqual([
        // Not started: no attempt spent yet (issue 27, item 5).
        ["running", 0, true],
        ["running", 0, true],
      ]);
    const waiting = await waitingJobs();
    expect(started).toEqual([first]);
    // The slot frees: the next starts at once, and the fourth is claimed to wait in its place.
    release.get(first!)!();
    await expect.poll(() => started.length, { timeout: 10_000, interval: 10 }).toBe(2);
    expect(waiting.map((j) => j.id)).toContain(started[1]);
    await expect.poll(states, { timeout: 5_000 }).toEqual(["running", "running", "running"]);
    for (let i = 1; i < ids.length; i++) {
      await expect.poll(() => started.length, { timeout: 5_000, interval: 10 }).toBeGreaterThan(i);
      release.get(started[i]!)!();
    }
    await w.drain();
    expect([...started].sort()).toEqual([...ids].sort());
    expect(await db.read.job.count({ where: { id: { in: ids } } })).toBe(0);
  });
  // A run that ended while the claim of jobs to wait was in flight freed its slot before they
  // arrived: they sat claimed with the slot free, and a chain of runs (each triggered by the last)
  // hung on PostgreSQL, where that claim takes a round trip.
  it("jobs claimed ahead start at once when the slot freed while they were being claimed", async () => {
    const db = await database();
    const ran: string[] = [];
    registerJobKind("test.ahead-quick", {
      concurrency: 1,
      claimAhead: 2,
      handler: async (job) => void ran.push(job.id),
    });
    const ids = await db.writeTx(async (tx) => {
      const out: string[] = [];
      for (let i = 0; i < 3; i++) out.push(await enqueue(tx, "test.ahead-quick", { i }));
      return out;
    });
    const w = startJobWorker({ kinds: ["test.ahead-quick"], leaseMs: 5000, pollMs: 100, log: () => undefined });
    workers.push(w);
    await w.ready;
    await expect.poll(() => ran.length, { timeout: 10_000, interval: 20 }).toBe(3);
    expect([...ran].sort()).toEqual([...ids].sort());
  });
  // Issue 27, item 5: a worker killed while holding jobs it had claimed ahead (never started) spent
  // an attempt of each: with max_attempts 1 they came back dead-lettered as "worker lost".
  it("a killed worker's jobs claimed ahead and never started keep their attempts", async () => {
    const db = await database();
    const firstWorker: string[] = [];
    registerJobKind("test.ahead-killed", {
      concurrency: 1,
      claimAhead: 2,
      handler: (job) => {
        firstWorker.push(job.id);
        return new Promise<void>(() => undefined); // never ends: its worker is killed
      },
    });
    const a = startJobWorker({ kinds: ["test.ahead-killed"], leaseMs: 600, pollMs: 100, log: () => undefined });
    workers.push(a);
    await a.ready;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push(await db.writeTx((tx) => enqueue(tx, "test.ahead-killed", { i }, { maxAttempts: 1 })));
    const rows = () => db.read.job.findMany({ where: { id: { in: ids } } });
    await expect.poll(async () => (await rows()).filter((j) => j.state === "running").length).toBe(3);
    expect(firstWorker).toHaveLength(1);
    // kill -9: nothing is released, the heartbeat stops; the leases lapse.
    await a.stop({ abandon: true });
    const started = firstWorker[0]!;
    const lost: string[] = [];
    const ran: string[] = [];
    registerJobKind("test.ahead-killed", {
      concurrency: 3,
      handler: async (job) => void ran.push(job.id),
      onExhausted: async (_tx, job) => void lost.push(job.id),
    });
    const b = startJobWorker({ kinds: ["test.ahead-killed"], leaseMs: 600, pollMs: 100, log: () => undefined });
    workers.push(b);
    await b.ready;
    // The one that had started used its only attempt (dead-lettered, kept as failed); the two that waited ran.
    await expect
      .poll(async () => (await rows()).map((j) => [j.id, j.state, j.attempts]), { timeout: 15_000 })
      .toEqual([[started, "failed", 2]]);
    expect(lost).toEqual([started]);
    expect(ran.sort()).toEqual(ids.filter((id) => id !== started).sort());
  });
});
