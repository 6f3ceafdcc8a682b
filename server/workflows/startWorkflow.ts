import { afterCommit, type Db } from "../db/client";
import { ValidationFailed } from "../errors";
import type { Principal } from "../governance/principal";
import { deriveDelegation } from "../identity/issueDelegation";
import { newId } from "../ids";
import { enqueue } from "../jobs";
import { nodeOperations } from "./nodeOperations";
import { NODE_JOB } from "./advanceWorkflow";
import type { Definition } from "./schemas";
import { validateDefinition } from "./validateDefinition";
import { workflowChanged } from "./workflowChanged";
import { rememberWorkflowGraph } from "./workflowGraph";

/** How long a workflow's own delegation lasts at most (never beyond the starter's). */
const WORKFLOW_DELEGATION_SECONDS = 7 * 86_400;

/**
 * Starts a workflow from a definition: validates its graph (every problem at once, naming the
 * node or edge), then writes the workflow, its nodes (pending) and edges, and queues the root
 * node's job, all in the caller's transaction. The workflow acts under a delegation derived from
 * the starter's (same capabilities, bounded in time): its nodes' records answer "who allowed it"
 * with the starter, and revoking the starter's delegation cancels the workflow.
 */
export async function startWorkflow(tx: Db, principal: Principal, def: Definition) {
  const problems = validateDefinition(def, nodeOperations());
  if (problems.length > 0) throw ValidationFailed(problems, "The workflow definition is not a runnable DAG.");
  const issued = await deriveDelegation(tx, principal, {
    kind: "workflow",
    delegateDid: principal.actorDid,
    capabilities: principal.capabilities,
    defaultSeconds: WORKFLOW_DELEGATION_SECONDS,
    name: `workflow ${def.name ?? ""}`.trim(),
  });
  const id = newId("wf");
  const now = new Date();
  const nodeId = (key: string) => `${id}:${key}`;
  const workflow = await tx.workflow.create({
    data: {
      id,
      orgDid: principal.orgDid,
      name: def.name ?? null,
      input: def.input === undefined ? undefined : (def.input as object),
      status: "running",
      startedByDid: principal.actorDid,
      delegationId: issued.row.id,
      createdAt: now,
    },
  });
  await tx.workflowNode.createMany({
    data: def.nodes.map((n, position) => ({
      id: nodeId(n.id),
      workflowId: id,
      orgDid: principal.orgDid,
      key: n.id,
      nodeType: n.node_type,
      nodeName: n.node_name ?? null,
      status: "pending",
      position,
      config: {
        ...(n.operation !== undefined ? { operation: n.operation } : {}),
        ...(n.approval !== undefined ? { approval: n.approval } : {}),
        ...(n.condition !== undefined ? { condition: n.condition as object } : {}),
      } as object,
      input: n.input === undefined ? undefined : (n.input as object),
      agentId: n.agent_id ?? null,
      createdAt: now,
    })),
  });
  const edges = def.edges.map((e, position) => ({
    id: `${id}:e${position}`,
    workflowId: id,
    fromNodeId: nodeId(e.from_node_id),
    toNodeId: nodeId(e.to_node_id),
    edgeType: e.edge_type,
    position,
  }));
  await tx.workflowEdge.createMany({ data: edges });
  // Its nodes settle in this process first: they find its graph here instead of reading it.
  afterCommit(tx, () => rememberWorkflowGraph(id, edges));
  const targets = new Set(def.edges.map((e) => e.to_node_id));
  const root = def.nodes.find((n) => !targets.has(n.id))!;
  await enqueue(tx, NODE_JOB, { nodeId: nodeId(root.id) }, { orgDid: principal.orgDid, maxAttempts: 5 });
  workflowChanged(tx, workflow);
  return workflow;
}

/** Points a started workflow at the record of the call that started it, in that call's transaction. */
export async function linkWorkflowRecord(tx: Db, workflowId: string, recordId: string): Promise<void> {
  await tx.workflow.update({ where: { id: workflowId }, data: { provenanceId: recordId } });
}
