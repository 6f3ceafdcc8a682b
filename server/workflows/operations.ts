import { defineOperation } from "../http/operation";
import { cancelWorkflow } from "./cancelWorkflow";
import * as s from "./schemas";
import { linkWorkflowRecord, startWorkflow } from "./startWorkflow";
import { getWorkflow, listWorkflows } from "./workflows";

const tag = "Workflows";

export const listWorkflowsOp = defineOperation({
  id: "listWorkflows",
  method: "GET",
  path: "/v1/workflows",
  tag,
  summary: "List workflows",
  description:
    "Newest first, filtered by status and name; each with its stats (computed from its nodes) and root node.",
  capability: "svc_api:workflows:read",
  resourceType: "workflow",
  query: s.WorkflowListQuery,
  response: s.WorkflowList,
  successStatus: 200,
  handler: (ctx) => listWorkflows(ctx.db, ctx.principal, ctx.query, ctx.secret),
});

export const startWorkflowOp = defineOperation({
  id: "startWorkflow",
  method: "POST",
  path: "/v1/workflows",
  tag,
  summary: "Start a workflow from a definition",
  description:
    "Validates the graph (cycles, dangling edges, a join without its fork, a condition without both branches: 400 with `errors[]` naming the node or edge), then runs it: each node is a durable job. Nodes act under a delegation derived from the caller's.",
  capability: "svc_api:workflows:write",
  resourceType: "workflow",
  body: s.StartWorkflowBody,
  response: s.WorkflowDAG,
  successStatus: 201,
  async handler(ctx) {
    const workflow = await startWorkflow(ctx.db, ctx.principal, ctx.body);
    ctx.setResource(workflow.id);
    ctx.onRecord((tx, record) => linkWorkflowRecord(tx, workflow.id, record.id));
    return getWorkflow(ctx.db, ctx.principal, workflow.id);
  },
});

export const getWorkflowOp = defineOperation({
  id: "getWorkflow",
  method: "GET",
  path: "/v1/workflows/{id}",
  tag,
  summary: "Get a workflow as a DAG",
  capability: "svc_api:workflows:read",
  resourceType: "workflow",
  params: s.WorkflowIdParams,
  response: s.WorkflowDAG,
  successStatus: 200,
  handler: (ctx) => getWorkflow(ctx.db, ctx.principal, ctx.params.id),
});

export const cancelWorkflowOp = defineOperation({
  id: "cancelWorkflow",
  method: "POST",
  path: "/v1/workflows/{id}/cancel",
  tag,
  summary: "Cancel a running workflow",
  description:
    "Pending and waiting nodes become skipped, runs still going are cancelled (their nodes fail). A workflow that has ended is 409 naming both states.",
  capability: "svc_api:workflows:write",
  resourceType: "workflow",
  params: s.WorkflowIdParams,
  response: s.WorkflowDAG,
  successStatus: 200,
  problems: ["illegal_state_transition"],
  handler: (ctx) => cancelWorkflow(ctx.db, ctx.principal, ctx.params.id),
});

export const workflowOperations = [listWorkflowsOp, startWorkflowOp, getWorkflowOp, cancelWorkflowOp];
