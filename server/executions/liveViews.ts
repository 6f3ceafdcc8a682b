import { z } from "zod";
import { liveView } from "../trpc/live";
import { EXECUTIONS_CHANNEL } from "./executionChanged";
import { getExecution, listCallbackAttempts, listExecutionLogs, listExecutions } from "./executions";
import * as s from "./schemas";

/** The executions list's first page, live: a queued run appears, its bar moves, it ends. */
export const executionsLive = liveView({
  summary: "The executions list, live",
  channel: EXECUTIONS_CHANNEL,
  capability: "svc_api:executions:read",
  resourceType: "execution",
  input: s.ExecutionListQuery.omit({ cursor: true }),
  load: (ctx) => listExecutions(ctx.db, ctx.principal, ctx.input, ctx.secret),
});

/** One execution, live: its state and progress, the lines it logged, its callback's deliveries. */
export const executionLive = liveView({
  summary: "One execution, live",
  channel: EXECUTIONS_CHANNEL,
  capability: "svc_api:executions:read",
  resourceType: "execution",
  input: z.object({ id: s.ExecutionIdParams.shape.id }),
  concerns: (change, input) => change.id === input.id,
  resourceOf: (input) => input.id,
  async load(ctx) {
    const [execution, logs, callbackAttempts] = await Promise.all([
      getExecution(ctx.db, ctx.principal, ctx.input.id),
      listExecutionLogs(ctx.db, ctx.principal, ctx.input.id),
      listCallbackAttempts(ctx.db, ctx.principal, ctx.input.id),
    ]);
    return { execution, logs, callback_attempts: callbackAttempts };
  },
});
