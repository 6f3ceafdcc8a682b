import type { Db } from "../db/client";
import type { ClaimedJob, JobKind } from "../jobs";
import { NODE_JOB, settleNode } from "./advanceWorkflow";
import { runNodeJob } from "./runNode";

// A node job whose attempts ran out (its calls kept hitting the rate limit or a failure of the
// service, or its worker was lost) fails its node, so the workflow follows the failure edge or
// fails instead of waiting for ever.
const nodeJob: JobKind<{ nodeId: string }> = {
  concurrency: 16,
  handler: (job) => runNodeJob(job),
  onExhausted: async (tx: Db, job: ClaimedJob<{ nodeId: string }>, error: unknown) =>
    void (await settleNode(
      tx,
      job.payload.nodeId,
      {
        status: "failed",
        error: {
          code: "node_attempts_exhausted",
          message: `The node could not be run: ${error instanceof Error ? error.message : String(error)}`,
        },
      },
      ["pending"],
    )),
};

export const workflowJobKinds = { [NODE_JOB]: nodeJob as JobKind };
