import type { Task } from "../worker/registry";
import { catchUp } from "./buildTree";
import { integratePending, vacuumPending } from "./integrate";

/**
 * The ledger's background work: give pending records their positions (the durable backstop for
 * records no caller waited for, or left pending by a crash), keep the pending table free of dead
 * rows (PostgreSQL), then extend the Merkle tree and sign a checkpoint of the new size.
 */
export const ledgerTasks: Task[] = [
  {
    name: "extend the ledger and sign a checkpoint",
    everyMs: Number(process.env.SVC_CHECKPOINT_INTERVAL_MS || 500),
    async run(db) {
      const integrated = await integratePending(db);
      await vacuumPending(db);
      await catchUp(db);
      return integrated;
    },
  },
];
