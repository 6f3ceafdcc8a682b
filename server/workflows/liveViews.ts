import { z } from "zod";
import { liveView } from "../trpc/live";
import * as s from "./schemas";
import { WORKFLOWS_CHANNEL } from "./workflowChanged";
import { getWorkflow, listWorkflows } from "./workflows";

/** The workflows list's first page, live: stats move as nodes settle. */
export const workflowsLive = liveView({
  summary: "The workflows list, live",
  channel: WORKFLOWS_CHANNEL,
  capability: "svc_api:workflows:read",
  resourceType: "workflow",
  input: s.WorkflowListQuery.omit({ cursor: true }),
  load: (ctx) => listWorkflows(ctx.db, ctx.principal, ctx.input, ctx.secret),
});

/** One workflow's DAG, live: nodes change colour as they run. */
export const workflowLive = liveView({
  summary: "One workflow, live",
  channel: WORKFLOWS_CHANNEL,
  capability: "svc_api:workflows:read",
  resourceType: "workflow",
  input: z.object({ id: s.WorkflowIdParams.shape.id }),
  concerns: (change, input) => change.id === input.id,
  resourceOf: (input) => input.id,
  load: (ctx) => getWorkflow(ctx.db, ctx.principal, ctx.input.id),
});
