import { mutationFrom, queryFrom } from "../trpc/procedures";
import { router } from "../trpc/init";
import { workflowLive, workflowsLive } from "./liveViews";
import * as op from "./operations";

/** The console's workflow procedures, built from the /v1 operations. */
export const workflowsRouter = router({
  list: queryFrom(op.listWorkflowsOp),
  get: queryFrom(op.getWorkflowOp),
  start: mutationFrom(op.startWorkflowOp),
  cancel: mutationFrom(op.cancelWorkflowOp),
  listLive: workflowsLive,
  live: workflowLive,
});
