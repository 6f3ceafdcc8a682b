import type { Database } from "../db/client";
import type { BridgeHandler } from "../sandbox/bridge";
import type { Task } from "../worker/registry";
import { reasonFromRun } from "./reasonFromRun";
import { reasoningSettings } from "./settings";

/** Where runs happen, their bundles get `ctx.reason`. */
export const reasoningBridgeEntries: Record<string, BridgeHandler> = { reason: reasonFromRun };

/**
 * A call whose process died between admission and its outcome stays `pending` with its budget
 * reservation open. Past every attempt's time limit (and a minute more) it cannot still be
 * running: it is marked failed and its reservations settled at their worst case, since what the
 * provider billed is unknown (the safe side of a budget).
 */
export const reasoningTasks: Task[] = [
  {
    name: "settle stale reasoning calls",
    everyMs: 60_000,
    async run(db: Database) {
      const s = reasoningSettings();
      const before = new Date(Date.now() - s.attemptTimeoutMs * s.maxAttempts - 60_000);
      return db.writeTx(async (tx) => {
        const stale = await tx.reasoningCall.findMany({
          where: { status: "pending", createdAt: { lt: before } },
          select: { id: true },
          take: 500,
        });
        if (stale.length === 0) return 0;
        const ids = stale.map((c) => c.id);
        await tx.reasoningCall.updateMany({
          where: { id: { in: ids }, status: "pending" },
          data: {
            status: "failed",
            errorCode: "abandoned",
            errorMessage:
              "The process making the call ended before its outcome was recorded; its reservation was kept.",
            completedAt: new Date(),
          },
        });
        await tx.budgetCharge.updateMany({
          where: { callId: { in: ids }, state: "reserved" },
          data: { state: "settled", settledAt: new Date() },
        });
        return ids.length;
      });
    },
  },
];
