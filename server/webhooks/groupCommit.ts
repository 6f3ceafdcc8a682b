import type { Database, Db } from "../db/client";
import { processWide } from "../processWide";

interface Pending {
  apply(tx: Db): Promise<void>;
  resolve(): void;
  reject(e: unknown): void;
}

const queues = processWide("webhooks.outcomeQueues", () => new WeakMap<Database, { pending: Pending[]; flushing: boolean }>());
const MAX_BATCH = 64;

/**
 * Commits `apply`'s writes, in one write transaction with those of the deliveries finishing at the
 * same moment: on SQLite every write transaction waits for the one before, so one per delivery
 * caps throughput at the transaction rate. Each `apply` still commits all or nothing: when a batch
 * fails (one delivery's lease was lost, say), each of its members is tried again alone, and only
 * the failing one rejects. The same shape as the ledger's `appendProvenance`.
 */
export function commitGrouped(db: Database, apply: (tx: Db) => Promise<void>): Promise<void> {
  let queue = queues.get(db);
  if (!queue) queues.set(db, (queue = { pending: [], flushing: false }));
  const q = queue;
  return new Promise((resolve, reject) => {
    q.pending.push({ apply, resolve, reject });
    if (!q.flushing) {
      q.flushing = true;
      setImmediate(() => void flush(db, q));
    }
  });
}

async function flush(db: Database, queue: { pending: Pending[]; flushing: boolean }): Promise<void> {
  while (queue.pending.length > 0) {
    const batch = queue.pending.splice(0, MAX_BATCH);
    try {
      await db.writeTx(async (tx) => {
        for (const p of batch) await p.apply(tx);
      });
      for (const p of batch) p.resolve();
    } catch (e) {
      if (batch.length === 1) batch[0]!.reject(e);
      else
        for (const p of batch) {
          try {
            await db.writeTx((tx) => p.apply(tx));
            p.resolve();
          } catch (single) {
            p.reject(single);
          }
        }
    }
  }
  queue.flushing = false;
}
