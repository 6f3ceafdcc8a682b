import { mutationFrom, queryFrom } from "../trpc/procedures";
import { router } from "../trpc/init";
import { executionLive, executionsLive } from "./liveViews";
import * as op from "./operations";

/** The console's execution procedures, built from the /v1 operations. */
export const executionsRouter = router({
  list: queryFrom(op.listExecutionsOp),
  get: queryFrom(op.getExecutionOp),
  cancel: mutationFrom(op.cancelExecutionOp),
  callbackAttempts: queryFrom(op.callbackAttemptsOp),
  logs: queryFrom(op.executionLogsOp),
  callbackSecret: queryFrom(op.callbackSecretOp),
  rotateCallbackSecret: mutationFrom(op.rotateCallbackSecretOp),
  listLive: executionsLive,
  live: executionLive,
});
