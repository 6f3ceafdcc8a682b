import type { Task } from "../worker/registry";
import { cancelApprovalsOfEndedRuns, escalateDueApprovals, expireDueApprovals } from "./expireApprovals";

/** How often the worker looks for due expiries and escalations (ms). */
const SWEEP_MS = Number(process.env.SVC_APPROVAL_SWEEP_MS || 1000);

/** The approvals area's background work: requests expire and escalate without anyone asking. */
export const approvalTasks: Task[] = [
  {
    name: "expire and escalate approval requests",
    everyMs: SWEEP_MS,
    async run(db) {
      const escalated = await escalateDueApprovals(db);
      const expired = await expireDueApprovals(db);
      const cancelled = await cancelApprovalsOfEndedRuns(db);
      return escalated + expired + cancelled;
    },
  },
];
