import { router } from "../trpc/init";
import { mutationFrom, queryFrom } from "../trpc/procedures";
import * as op from "./operations";

/** The console's prompt registry: the /v1 operations, through the same gate. */
export const promptsRouter = router({
  list: queryFrom(op.listPromptsOp),
  get: queryFrom(op.getPromptOp),
  versions: queryFrom(op.listPromptVersionsOp),
  version: queryFrom(op.getPromptVersionOp),
  publish: mutationFrom(op.publishPromptVersionOp),
  render: mutationFrom(op.renderPromptOp),
  setActiveVersion: mutationFrom(op.setActiveVersionOp),
  deprecate: mutationFrom(op.deprecatePromptVersionOp),
  history: queryFrom(op.listPromptHistoryOp),
  performance: queryFrom(op.getPromptPerformanceOp),
  affinity: queryFrom(op.listPromptAffinityOp),
});
