import { database } from "../db/client";
import { witnessLatestCheckpoint } from "../compliance/witnesses";
import { catchUp } from "../ledger/buildTree";

export interface Worker {
  stop(): Promise<void>;
}

interface Task {
  name: string;
  everyMs: number;
  run(): Promise<number>;
}

const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/** Periodic work shared by every worker process; each task is idempotent, so several workers may run it. */
const tasks: Task[] = [
  {
    name: "extend the ledger and sign a checkpoint",
    everyMs: Number(process.env.SVC_CHECKPOINT_INTERVAL_MS || 500),
    async run() {
      await catchUp(await database());
      return 0;
    },
  },
  {
    name: "send checkpoints to witnesses",
    everyMs: Number(process.env.SVC_WITNESS_INTERVAL_MS || 10_000),
    run: async () => witnessLatestCheckpoint(await database()),
  },
  {
    name: "purge spent and expired passkey challenges",
    everyMs: 10 * 60 * 1000,
    async run() {
      const db = await database();
      const { count } = await db.writeTx((tx) => tx.webAuthnChallenge.deleteMany({ where: { expiresAt: { lt: new Date() } } }));
      return count;
    },
  },
  {
    name: "expire idempotency keys",
    everyMs: 10 * 60 * 1000,
    async run() {
      const db = await database();
      const { count } = await db.writeTx((tx) => tx.idempotencyKey.deleteMany({ where: { createdAt: { lt: new Date(Date.now() - IDEMPOTENCY_TTL_MS) } } }));
      return count;
    },
  },
];

/**
 * The background worker: runs each task on its interval until stopped. Work is kept in the
 * database, so stopping or restarting a worker loses nothing.
 */
export function startWorker({ log }: { log: (line: string) => void }): Worker {
  let stopped = false;
  const running = new Set<Promise<unknown>>();
  const timers = tasks.map((task) => {
    let busy = false;
    const tick = () => {
      // A slow round is never overlapped by the next tick of the same task.
      if (stopped || busy) return;
      busy = true;
      const p = task
        .run()
        .then((n) => n > 0 && log(`worker: ${task.name}: ${n}`))
        .catch((e: unknown) => log(`worker: ${task.name} failed: ${e instanceof Error ? e.message : String(e)}`))
        .finally(() => {
          busy = false;
          running.delete(p);
        });
      running.add(p);
    };
    tick();
    return setInterval(tick, task.everyMs);
  });
  return {
    async stop() {
      stopped = true;
      timers.forEach(clearInterval);
      await Promise.all(running);
    },
  };
}
