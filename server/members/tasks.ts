import type { Task } from "../worker/registry";

/**
 * The members area's background work. A passkey challenge is single-use and expires after five
 * minutes; spent ones are deleted when used, expired ones here, so the table stays small.
 */
export const memberTasks: Task[] = [
  {
    name: "purge spent and expired passkey challenges",
    everyMs: 10 * 60 * 1000,
    async run(db) {
      const { count } = await db.writeTx((tx) =>
        tx.webAuthnChallenge.deleteMany({ where: { expiresAt: { lt: new Date() } } }),
      );
      return count;
    },
  },
];
