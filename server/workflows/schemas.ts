import { z } from "zod";
import { ApprovalCreate } from "../approvals/schemas";
import { ListQuery, PaginationInfo } from "../http/listSchemas";

// Pure zod: the console's Workflows pages import these.

const Timestamp = z.string().describe("ISO 8601 date-time");
const JsonObject = z.record(z.string(), z.unknown());

export const NODE_TYPES = ["agent", "svc", "approval", "fork", "join", "condition"] as const;
export const NodeType = z.enum(NODE_TYPES).describe('`svc` is the spec\'s "the service": one governed platform call.');
export const NODE_STATUSES = ["pending", "running", "completed", "failed", "skipped", "waiting_approval"] as const;
export const NodeStatus = z.enum(NODE_STATUSES);
export const EDGE_TYPES = [
  "sequence",
  "success",
  "failure",
  "condition_true",
  "condition_false",
  "fork",
  "join",
] as const;
export const EdgeType = z.enum(EDGE_TYPES);
export const WORKFLOW_STATUSES = ["running", "completed", "failed", "cancelled"] as const;
export const WorkflowStatus = z.enum(WORKFLOW_STATUSES);

/** Limits of a definition: enough for a 200-node fan-out, small enough to validate and store in one call. */
export const MAX_NODES = 500;
export const MAX_EDGES = 2000;

/**
 * The request an `approval` node files: `POST /v1/approvals`'s fields, the task defaulting to the
 * node (its id) and the agent to the workflow.
 */
export const ApprovalNodeFields = ApprovalCreate.extend({
  task_id: ApprovalCreate.shape.task_id.optional().describe("The task the action belongs to; default the node's id"),
  agent_id: ApprovalCreate.shape.agent_id.optional().describe("The agent that wants to act; default the workflow's id"),
}).describe("The approval request the node files; the node waits (`waiting_approval`) until it is decided.");

export const DefinitionNode = z
  .object({
    id: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/, "letters, digits, '_' or '-', at most 64")
      .describe("The caller's id, unique in the definition; answers prefix it with the workflow's id."),
    node_type: NodeType,
    node_name: z.string().min(1).max(200).optional(),
    agent_id: z.string().min(1).max(100).optional().describe("`agent` nodes: the agent invoked (an execution)."),
    input: JsonObject.optional().describe(
      "`agent`: the run's input (default: the outputs of its predecessors by node id). `svc`: the operation's path, query and body fields as one object.",
    ),
    operation: z
      .string()
      .min(1)
      .max(100)
      .optional()
      .describe("`svc` nodes: the operation id of the platform call (see /v1/openapi.json operationId)."),
    approval: ApprovalNodeFields.optional(),
    condition: z
      .unknown()
      .optional()
      .describe(
        "`condition` nodes: a JSON Logic rule over `{input, nodes: {<id>: {output}}}`; truthy takes `condition_true`.",
      ),
  })
  .strict();

export const DefinitionEdge = z
  .object({
    from_node_id: z.string().min(1).max(64),
    to_node_id: z.string().min(1).max(64),
    edge_type: EdgeType,
  })
  .strict();

export const StartWorkflowBody = z
  .object({
    name: z.string().min(1).max(200).optional(),
    input: JsonObject.optional().describe("The workflow's input, readable by conditions as `input`."),
    nodes: z.array(DefinitionNode).min(1).max(MAX_NODES),
    edges: z.array(DefinitionEdge).max(MAX_EDGES),
  })
  .strict()
  .meta({
    id: "WorkflowDefinition",
    example: {
      name: "refund review",
      input: { amount: 1250 },
      nodes: [
        { id: "start", node_type: "fork" },
        { id: "check", node_type: "condition", condition: { ">": [{ var: "input.amount" }, 1000] } },
        {
          id: "approve",
          node_type: "approval",
          approval: { action_description: "Refund over 1,000", risk_level: "high" },
        },
        { id: "notify", node_type: "svc", operation: "emitEvent", input: { type: "refund.reviewed" } },
        { id: "done", node_type: "join" },
      ],
      edges: [
        { from_node_id: "start", to_node_id: "check", edge_type: "fork" },
        { from_node_id: "start", to_node_id: "notify", edge_type: "fork" },
        { from_node_id: "check", to_node_id: "approve", edge_type: "condition_true" },
        { from_node_id: "check", to_node_id: "done", edge_type: "condition_false" },
        { from_node_id: "approve", to_node_id: "done", edge_type: "join" },
        { from_node_id: "notify", to_node_id: "done", edge_type: "join" },
      ],
    },
  });

export const WorkflowStats = z
  .object({
    total_nodes: z.number().int(),
    completed: z.number().int(),
    failed: z.number().int(),
    running: z.number().int().describe("Running nodes, waiting_approval included."),
    pending: z.number().int(),
    skipped: z.number().int().optional(),
    waiting_approval: z.number().int().optional(),
    total_duration_ms: z.number().int().nullable().optional().describe("Start to end; null while it runs."),
    avg_node_duration_ms: z.number().nullable().optional(),
  })
  .meta({ id: "WorkflowStats" });

export const WorkflowNode = z
  .object({
    id: z.string(),
    workflow_id: z.string(),
    node_type: NodeType,
    status: NodeStatus,
    created_at: Timestamp,
    parent_node_id: z.string().nullable().optional().describe("The first node with an edge into this one."),
    node_name: z.string().nullable().optional(),
    agent_id: z.string().nullable().optional(),
    agent_name: z.string().nullable().optional(),
    input: JsonObject.nullable().optional(),
    output: JsonObject.nullable().optional(),
    error: JsonObject.nullable().optional(),
    started_at: Timestamp.nullable().optional(),
    completed_at: Timestamp.nullable().optional(),
    duration_ms: z.number().int().nullable().optional(),
    visual_metadata: JsonObject.nullable().optional(),
    provenance_id: z.string().nullable().optional(),
    execution_id: z.string().nullable().optional(),
    approval_id: z.string().nullable().optional(),
    operation: z.string().nullable().optional().describe("`svc` nodes: the operation id called."),
  })
  .meta({ id: "WorkflowNode" });

export const WorkflowEdge = z
  .object({
    id: z.string(),
    from_node_id: z.string(),
    to_node_id: z.string(),
    edge_type: EdgeType,
    condition: z.string().nullable().optional(),
    metadata: JsonObject.nullable().optional(),
  })
  .meta({ id: "WorkflowEdge" });

const workflowFields = {
  name: z.string().nullable().optional(),
  status: WorkflowStatus.optional(),
  started_by: z.string().optional().describe("The actor who started it."),
  delegation_id: z.string().optional().describe("The workflow's own delegation, derived from the starter's."),
  error: JsonObject.nullable().optional(),
  created_at: Timestamp.optional(),
  completed_at: Timestamp.nullable().optional(),
};

export const WorkflowSummary = z
  .object({
    workflow_id: z.string(),
    stats: WorkflowStats,
    root_node: z.object({ id: z.string(), status: z.string(), created_at: Timestamp }).optional(),
    ...workflowFields,
  })
  .meta({ id: "WorkflowSummary" });

export const WorkflowDAG = z
  .object({
    workflow_id: z.string(),
    nodes: z.array(WorkflowNode),
    edges: z.array(WorkflowEdge),
    stats: WorkflowStats,
    root_node: WorkflowNode.optional(),
    ...workflowFields,
  })
  .meta({
    id: "WorkflowDAG",
    example: {
      workflow_id: "wfl_01m806mp6t2k9d8c7b6a5z4y3x",
      name: "refund review",
      status: "running",
      started_by: "did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK",
      created_at: "2026-11-21T09:30:00.000Z",
      completed_at: null,
      error: null,
      nodes: [
        {
          id: "wfl_01m806mp6t2k9d8c7b6a5z4y3x:check",
          workflow_id: "wfl_01m806mp6t2k9d8c7b6a5z4y3x",
          node_type: "svc",
          node_name: "check",
          status: "completed",
          operation: "emitEvent",
          created_at: "2026-11-21T09:30:00.000Z",
          started_at: "2026-11-21T09:30:00.010Z",
          completed_at: "2026-11-21T09:30:00.042Z",
          duration_ms: 32,
        },
        {
          id: "wfl_01m806mp6t2k9d8c7b6a5z4y3x:approve",
          workflow_id: "wfl_01m806mp6t2k9d8c7b6a5z4y3x",
          node_type: "approval",
          node_name: "approve",
          status: "waiting_approval",
          parent_node_id: "wfl_01m806mp6t2k9d8c7b6a5z4y3x:check",
          approval_id: "apr_01m806mp6t2k9d8c7b6a5z4y3x",
          created_at: "2026-11-21T09:30:00.000Z",
          started_at: "2026-11-21T09:30:00.050Z",
        },
      ],
      edges: [
        {
          id: "wfe_01m806mp6t2k9d8c7b6a5z4y3x",
          from_node_id: "wfl_01m806mp6t2k9d8c7b6a5z4y3x:check",
          to_node_id: "wfl_01m806mp6t2k9d8c7b6a5z4y3x:approve",
          edge_type: "success",
        },
      ],
      stats: { total_nodes: 2, completed: 1, failed: 0, running: 1, pending: 0, skipped: 0, waiting_approval: 1 },
    },
  });

export const WorkflowListQuery = ListQuery.extend({
  status: WorkflowStatus.optional().describe("Only workflows in this status"),
  name: z.string().min(1).max(200).optional().describe("Only workflows of this name"),
});

export const WorkflowList = z
  .object({ data: z.array(WorkflowSummary), pagination: PaginationInfo })
  .meta({ id: "WorkflowList", example: { data: [], pagination: { has_more: false, next_cursor: null } } });

export const WorkflowIdParams = z.object({ id: z.string().min(1).max(100) });

export type Definition = z.output<typeof StartWorkflowBody>;
export type WorkflowDAGValue = z.output<typeof WorkflowDAG>;
export type WorkflowNodeValue = z.output<typeof WorkflowNode>;
