import type { Workflow, WorkflowEdge, WorkflowNode } from "../db/generated/sqlite/client";
import { redactSealed } from "../signing/sealedFields";
import type { WorkflowNodeValue } from "./schemas";

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj | null => (v && typeof v === "object" && !Array.isArray(v) ? (v as Obj) : null);
const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** What the definition gave a node besides its input (kept in `config`). */
export interface NodeConfig {
  operation?: string;
  approval?: Obj;
  condition?: unknown;
}

/** A node as the API shows it. `parentOf` names the first node with an edge into it. */
export function nodeView(
  n: WorkflowNode,
  parentOf: ReadonlyMap<string, string>,
  agentNames: ReadonlyMap<string, string>,
): WorkflowNodeValue {
  const config = (obj(n.config) ?? {}) as NodeConfig;
  return {
    id: n.id,
    workflow_id: n.workflowId,
    node_type: n.nodeType as WorkflowNodeValue["node_type"],
    status: n.status as WorkflowNodeValue["status"],
    created_at: n.createdAt.toISOString(),
    parent_node_id: parentOf.get(n.id) ?? null,
    node_name: n.nodeName ?? n.key,
    agent_id: n.agentId,
    agent_name: n.agentId ? (agentNames.get(n.agentId) ?? null) : null,
    // Secrets an operation answered stay sealed in the row and are never shown (server/signing/sealedFields.ts).
    input: redactSealed(obj(n.input)),
    output: redactSealed(obj(n.output)),
    error: obj(n.error),
    started_at: iso(n.startedAt),
    completed_at: iso(n.completedAt),
    duration_ms: n.durationMs,
    visual_metadata: {
      key: n.key,
      position: n.position,
      ...(config.condition !== undefined ? { condition: config.condition } : {}),
      ...(config.approval ? { approval: config.approval } : {}),
    },
    provenance_id: n.provenanceId,
    execution_id: n.executionId,
    approval_id: n.approvalId,
    operation: config.operation ?? null,
  };
}

export function edgeView(e: WorkflowEdge) {
  return {
    id: e.id,
    from_node_id: e.fromNodeId,
    to_node_id: e.toNodeId,
    edge_type: e.edgeType as "sequence",
    condition: e.edgeType === "condition_true" ? "true" : e.edgeType === "condition_false" ? "false" : null,
    metadata: null,
  };
}

type StatNode = Pick<WorkflowNode, "status" | "durationMs">;

/**
 * WorkflowStats, computed from the nodes each time they are read (never stored beside them):
 * `running` counts the nodes waiting for an approval too, which are also given on their own.
 */
export function statsOf(w: Pick<Workflow, "createdAt" | "completedAt">, nodes: readonly StatNode[]) {
  const count = (s: string) => nodes.filter((n) => n.status === s).length;
  const durations = nodes.map((n) => n.durationMs).filter((d): d is number => d !== null);
  return {
    total_nodes: nodes.length,
    completed: count("completed"),
    failed: count("failed"),
    running: count("running") + count("waiting_approval"),
    pending: count("pending"),
    skipped: count("skipped"),
    waiting_approval: count("waiting_approval"),
    total_duration_ms: w.completedAt ? w.completedAt.getTime() - w.createdAt.getTime() : null,
    avg_node_duration_ms: durations.length
      ? Math.round((durations.reduce((a, b) => a + b, 0) / durations.length) * 10) / 10
      : null,
  };
}

export function workflowFields(w: Workflow) {
  return {
    name: w.name,
    status: w.status as "running",
    started_by: w.startedByDid,
    delegation_id: w.delegationId,
    error: obj(w.error),
    created_at: w.createdAt.toISOString(),
    completed_at: iso(w.completedAt),
  };
}
