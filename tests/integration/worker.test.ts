import { describe, expect, it } from "vitest";
import { database } from "@/server/db/client";
import { newId } from "@/server/ids";
import { latestCheckpoint } from "@/server/ledger/proofs";
import { startWorker } from "@/server/worker/worker";
import { apiKey } from "./harness";

describe("the background worker", () => {
  it("checkpoints new records and purges expired challenges and idempotency keys, and stops cleanly", async () => {
    const db = await database();
    await apiKey(); // leaves a provenance record to checkpoint
    const stale = new Date(Date.now() - 2 * 86_400_000);
    await db.writeTx(async (tx) => {
      await tx.webAuthnChallenge.create({ data: { id: newId("chl"), challenge: newId("c"), purpose: "authenticate", expiresAt: stale } });
      await tx.idempotencyKey.create({ data: { scope: "s", key: newId("k"), requestHash: "h", status: 201, body: "{}", createdAt: stale } });
    });
    const worker = startWorker({ log: () => undefined });
    try {
      await expect.poll(async () => (await latestCheckpoint(db))?.treeSize ?? 0, { timeout: 5_000 }).toBeGreaterThan(0);
      await expect.poll(async () => (await db.read.webAuthnChallenge.count({ where: { expiresAt: { lt: new Date() } } })) + (await db.read.idempotencyKey.count({ where: { createdAt: stale } })), { timeout: 5_000 }).toBe(0);
    } finally {
      await worker.stop();
    }
  });
});
