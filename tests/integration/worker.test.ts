import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { database } from "@/server/db/client";
import { newId } from "@/server/ids";
import { latestCheckpoint } from "@/server/ledger/proofs";
import { registeredTasks } from "@/server/worker/registry";
import { startWorker } from "@/server/worker/worker";
import { apiKey } from "./harness";

describe("the background worker", () => {
  it("checkpoints new records and purges expired challenges and idempotency keys, and stops cleanly", async () => {
    const db = await database();
    await apiKey(); // leaves a provenance record to checkpoint
    const stale = new Date(Date.now() - 2 * 86_400_000);
    await db.writeTx(async (tx) => {
      await tx.webAuthnChallenge.create({
        data: { id: newId("chl"), challenge: newId("c"), purpose: "authenticate", expiresAt: stale },
      });
      await tx.idempotencyKey.create({
        data: { scope: "s", key: newId("k"), requestHash: "h", status: 201, body: "{}", createdAt: stale },
      });
    });
    const worker = startWorker({ log: () => undefined });
    try {
      // Within a second or so (its task runs every 500 ms); the wait is longer because a loaded
      // machine ran past 5 s here.
      await expect
        .poll(async () => (await latestCheckpoint(db))?.treeSize ?? 0, { timeout: 20_000 })
        .toBeGreaterThan(0);
      await expect
        .poll(
          async () =>
            (await db.read.webAuthnChallenge.count({ where: { expiresAt: { lt: new Date() } } })) +
            (await db.read.idempotencyKey.count({ where: { createdAt: stale } })),
          { timeout: 20_000 },
        )
        .toBe(0);
    } finally {
      await worker.stop();
    }
  });

  it("only schedules: each area's own tasks.ts does the writing, the worker holds no queries", async () => {
    const workerDir = join(process.cwd(), "server/worker");
    for (const file of readdirSync(workerDir).filter((f) => f.endsWith(".ts"))) {
      const source = readFileSync(join(workerDir, file), "utf8");
      expect(source, file).not.toMatch(
        /\btx\.|\.read\.|\.raw\.|\$queryRaw|\$executeRaw|deleteMany|catchUp\(|witness[A-Z]\w*\(/,
      );
    }
    const tasks = registeredTasks();
    expect(new Set(tasks.map((t) => t.name)).size).toBe(tasks.length);
    expect(tasks.map((t) => t.name)).toEqual(
      expect.arrayContaining([
        "extend the ledger and sign a checkpoint",
        "send checkpoints to witnesses",
        "purge spent and expired passkey challenges",
        "expire idempotency keys",
      ]),
    );
    // A registered task gets the process's database and its count is logged.
    const db = await database();
    const lines: string[] = [];
    let given: unknown;
    const worker = startWorker({
      log: (l) => lines.push(l),
      tasks: [{ name: "count to three", everyMs: 60_000, run: async (d) => ((given = d), 3) }],
    });
    // The first round runs at start; polled longer than vitest's 1 s default, which a loaded machine can outlast.
    await expect.poll(() => lines, { timeout: 10_000 }).toContain("worker: count to three: 3");
    await worker.stop();
    expect(given).toBe(db);
  });
});
