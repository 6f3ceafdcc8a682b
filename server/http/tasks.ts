import type { Task } from "../worker/registry";

/** Idempotency keys are kept 24 hours (README, API conventions); older ones are deleted here. */
const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

export const idempotencyTasks: Task[] = [
  {
    name: "expire idempotency keys",
    everyMs: 10 * 60 * 1000,
    async run(db) {
      const { count } = await db.writeTx((tx) =>
        tx.idempotencyKey.deleteMany({ where: { createdAt: { lt: new Date(Date.now() - IDEMPOTENCY_TTL_MS) } } }),
      );
      return count;
    },
  },
];
