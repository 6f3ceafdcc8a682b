import type { Task } from "../worker/registry";
import { witnessLatestCheckpoint } from "./witnesses";

/** Compliance's background work: have the configured witnesses cosign the newest checkpoint. */
export const complianceTasks: Task[] = [
  {
    name: "send checkpoints to witnesses",
    everyMs: Number(process.env.SVC_WITNESS_INTERVAL_MS || 10_000),
    run: (db) => witnessLatestCheckpoint(db),
  },
];
