import { registerJobKind } from "../jobs";
import { defaultPoolSize } from "../sandbox/pool";
import type { Task } from "../worker/registry";
import { deliverCallbackJob } from "./deliverCallback";
import { CALLBACK_JOB } from "./endExecution";
import "./executions";
import { failExhaustedRun, RUN_JOB, runExecutionJob } from "./runExecution";

// The executions area's background work: runs (one per sandbox thread at a time, and one claimed
// ahead, whose reads and start overlap the run in the sandbox and whose bundle is queued to start
// the moment the thread frees; its lease is kept while it waits) and their callbacks. One, not
// more: a run waiting for a thread is `processing`, and a cancel reaches it through its own poll.
registerJobKind<{ executionId: string }>(RUN_JOB, { concurrency: defaultPoolSize(), claimAhead: 1, handler: runExecutionJob, onExhausted: failExhaustedRun });
registerJobKind<{ executionId: string }>(CALLBACK_JOB, {
  concurrency: 10,
  handler: (job) => deliverCallbackJob(job),
  // A callback whose attempts ran out without an answer recorded has failed.
  onExhausted: async (tx, job) => void (await tx.asyncExecution.updateMany({ where: { id: job.payload.executionId, callbackUrl: { not: null }, callbackSuccess: null }, data: { callbackSuccess: false } })),
});

export const executionTasks: Task[] = [];
