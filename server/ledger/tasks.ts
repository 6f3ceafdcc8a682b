import type { Task } from "../worker/registry";
import { catchUp } from "./buildTree";

/** The ledger's background work: extend the Merkle tree and sign a checkpoint of the new size. */
export const ledgerTasks: Task[] = [
  {
    name: "extend the ledger and sign a checkpoint",
    everyMs: Number(process.env.SVC_CHECKPOINT_INTERVAL_MS || 500),
    async run(db) {
      await catchUp(db);
      return 0;
    },
  },
];
