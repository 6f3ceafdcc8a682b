import type { JobKind } from "../jobs";
import { defaultPoolSize } from "../sandbox/pool";
import { deliverCallbackJob } from "./deliverCallback";
import { CALLBACK_JOB } from "./endExecution";
import { closeExhaustedAttempts } from "./attempts";
import { failExhaustedRun, RUN_JOB, runExecutionJob } from "./runExecution";

// The executions area's background work: runs (one per sandbox thread at a time, so a claimed
// run never waits for a slot while its lease ticks; two more claimed ahead wait in the worker, still
// queued, and start the moment a thread frees, while the run before writes its outcome) and their callbacks.
const runJob: JobKind<{ executionId: string }> = {
  concurrency: defaultPoolSize(),
  claimAhead: 2,
  handler: runExecutionJob,
  // The last attempt's worker was lost (or it threw): its attempt says why before the run fails.
  onExhausted: async (tx, job, error) => {
    await closeExhaustedAttempts(tx, job, error);
    await failExhaustedRun(tx, job, error);
  },
};
const callbackJob: JobKind<{ executionId: string }> = {
  concurrency: 10,
  handler: (job) => deliverCallbackJob(job),
  // A callback whose attempts ran out without an answer recorded has failed.
  onExhausted: async (tx, job) =>
    void (await tx.asyncExecution.updateMany({
      where: { id: job.payload.executionId, callbackUrl: { not: null }, callbackSuccess: null },
      data: { callbackSuccess: false },
    })),
};

export const executionJobKinds = { [RUN_JOB]: runJob as JobKind, [CALLBACK_JOB]: callbackJob as JobKind };
