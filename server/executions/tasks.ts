import { registerJobKind } from "../jobs";
import { defaultPoolSize } from "../sandbox/pool";
import type { Task } from "../worker/registry";
import { deliverCallbackJob } from "./deliverCallback";
import { CALLBACK_JOB } from "./endExecution";
import "./executions";
import { failExhaustedRun, RUN_JOB, runExecutionJob } from "./runExecution";

// The executions area's background work: runs (one per sandbox thread at a time, so a started run
// never waits for a thread while its wall clock ticks; two more claimed ahead wait in the worker,
// still queued, and start the moment a thread frees, while the run before writes its outcome) and
// their callbacks.
registerJobKind<{ executionId: string }>(RUN_JOB, { concurrency: defaultPoolSize(), claimAhead: 2, handler: runExecutionJob, onExhausted: failExhaustedRun });
registerJobKind<{ executionId: string }>(CALLBACK_JOB, {
  concurrency: 10,
  handler: (job) => deliverCallbackJob(job),
  // A callback whose attempts ran out without an answer recorded has failed.
  onExhausted: async (tx, job) => void (await tx.asyncExecution.updateMany({ where: { id: job.payload.executionId, callbackUrl: { not: null }, callbackSuccess: null }, data: { callbackSuccess: false } })),
});

export const executionTasks: Task[] = [];
