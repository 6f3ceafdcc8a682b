import { cancelApprovalsOfRevokedDelegations } from "../approvals/cancelApproval";
import { config } from "../config";
import type { Db } from "../db/client";
import type { Workflow, WorkflowEdge } from "../db/generated/sqlite/client";
import { subscriptionIndex } from "../events/matcher";
import { putPlatformEvent } from "../events/platformEvents";
import { forEngine } from "../db/raw";
import { cancelExecutions } from "../executions/endExecution";
import { newId } from "../ids";
import { enqueue } from "../jobs";
import { statsOf, workflowFields } from "./views";
import { workflowChanged } from "./workflowChanged";

export const NODE_JOB = "workflow.node";
/** Node states that never change again. */
export const FINAL_NODE_STATES = new Set(["completed", "failed", "skipped"]);

export type NodeOutcome =
  | { status: "completed"; output?: object | null; provenanceId?: string | null; startedAt?: Date }
  | { status: "failed"; error: object; provenanceId?: string | null; startedAt?: Date };

/** The workflow a node belongs to: node ids are `<workflow id>:<the caller's id>`. */
export const workflowIdOf = (nodeId: string) => nodeId.slice(0, nodeId.indexOf(":"));

/**
 * Records how a node ended and moves its workflow on, in the caller's transaction (the one that
 * also holds the node's own work: the governed call, the run's end, the approval's decision), so
 * a restart finds either both or neither. The workflow's row is written first: on PostgreSQL that
 * row lock serializes the nodes of one workflow settling at the same moment, so exactly one of
 * two branches arriving at a join sees both ended and queues it. Returns false when the node was
 * not in one of the `from` states (a repeat: settled already).
 */
export async function settleNode(
  tx: Db,
  nodeId: string,
  outcome: NodeOutcome,
  from: readonly string[] = ["running", "waiting_approval"],
): Promise<boolean> {
  const workflowId = workflowIdOf(nodeId);
  const now = new Date();
  const { count: live } = await tx.workflow.updateMany({
    where: { id: workflowId, status: "running" },
    data: { updatedAt: now },
  });
  const node = await tx.workflowNode.findUnique({ where: { id: nodeId } });
  if (!node || !from.includes(node.status)) return false;
  const startedAt = node.startedAt ?? outcome.startedAt ?? now;
  const moved = await tx.workflowNode.updateMany({
    where: { id: nodeId, status: { in: [...from] } },
    data: {
      status: outcome.status,
      ...(outcome.status === "completed" ? { output: outcome.output ?? undefined } : { error: outcome.error }),
      ...(outcome.provenanceId ? { provenanceId: outcome.provenanceId } : {}),
      startedAt,
      completedAt: now,
      durationMs: Math.max(0, now.getTime() - startedAt.getTime()),
    },
  });
  if (moved.count === 0) return false;
  workflowChanged(tx, { id: workflowId, orgDid: node.orgDid });
  if (live > 0)
    await advance(tx, workflowId, {
      ...node,
      status: outcome.status,
      output: outcome.status === "completed" ? (outcome.output ?? null) : node.output,
    });
  return true;
}

/**
 * After `settled` ended: queues every node whose incoming edges have all resolved with at least
 * one taken, skips those with none taken (and what lies only behind them), fails the workflow
 * when a node failed without a `failure` edge, and completes it when no node is left to run.
 * It reads only the edges around the nodes it looks at, not the whole graph: a fan-out of 50
 * settles 50 times, and a branch arriving at a join whose other branches still run costs one
 * counting statement (not the join's 50 edges and their 50 sources each time: that was 50² rows
 * per join); the join's edges and sources are read once, by the branch that resolves it.
 */
async function advance(tx: Db, workflowId: string, settled: NodeState): Promise<void> {
  const settledId = settled.id;
  const known = new Map<string, NodeState>([[settledId, settled]]);
  const states = async (ids: string[]) => {
    const missing = ids.filter((id) => !known.has(id));
    if (missing.length > 0) {
      const rows = await tx.workflowNode.findMany({
        where: { id: { in: missing } },
        select: { id: true, status: true, nodeType: true, output: true, nodeName: true, key: true, orgDid: true },
      });
      for (const r of rows) known.set(r.id, r);
    }
    return ids.map((id) => known.get(id)!);
  };
  const outOf = (id: string) => tx.workflowEdge.findMany({ where: { workflowId, fromNodeId: id } });
  const out = await outOf(settledId);

  if (settled.status === "failed" && !out.some((e) => e.edgeType === "failure")) {
    const workflow = await tx.workflow.findUniqueOrThrow({ where: { id: workflowId } });
    await endWorkflow(tx, workflow, "failed", {
      code: "node_failed",
      message: `The node ${settled.nodeName ?? settled.key} failed and has no failure edge.`,
      node_id: settledId,
    });
    return;
  }

  const taken = (e: WorkflowEdge) => {
    const from = known.get(e.fromNodeId)!;
    if (from.status === "failed") return e.edgeType === "failure";
    if (from.status !== "completed" || e.edgeType === "failure") return false;
    if (e.edgeType === "condition_true" || e.edgeType === "condition_false") {
      const result = (from.output as { result?: unknown } | null)?.result === true;
      return result === (e.edgeType === "condition_true");
    }
    return true;
  };
  const ready: string[] = [];
  // A node still waiting for a source that has not ended: the workflow has open nodes.
  let waiting = false;
  const work = out.map((e) => e.toNodeId);
  while (work.length > 0) {
    const id = work.pop()!;
    if (ready.includes(id)) continue;
    if ((await unendedSources(tx, id)) > 0) {
      waiting = true;
      continue;
    }
    const [target] = await states([id]);
    if (target!.status !== "pending") continue;
    const incoming = await tx.workflowEdge.findMany({ where: { workflowId, toNodeId: id } });
    await states(incoming.map((e) => e.fromNodeId));
    if (incoming.some(taken)) ready.push(id);
    else {
      // Written at once: the nodes behind it count their unended sources in the database.
      target!.status = "skipped";
      await tx.workflowNode.updateMany({
        where: { id, status: "pending" },
        data: { status: "skipped", completedAt: new Date() },
      });
      work.push(...(await outOf(id)).map((e) => e.toNodeId));
    }
  }
  for (const id of ready) await enqueue(tx, NODE_JOB, { nodeId: id }, { orgDid: settled.orgDid, maxAttempts: 5 });
  if (ready.length > 0 || waiting) return;
  const open = await tx.workflowNode.count({ where: { workflowId, status: { notIn: [...FINAL_NODE_STATES] } } });
  if (open === 0) {
    const workflow = await tx.workflow.findUniqueOrThrow({ where: { id: workflowId } });
    await endWorkflow(tx, workflow, "completed");
  }
}

/** How many of the nodes with an edge into `nodeId` have not ended: one statement, whatever the fan-in. */
async function unendedSources(tx: Db, nodeId: string): Promise<number> {
  const final = [...FINAL_NODE_STATES].map((s) => `'${s}'`).join(", ");
  const rows = await tx.$queryRawUnsafe<Array<{ n: unknown }>>(
    ...forEngine(
      config().engine,
      `SELECT COUNT(*) AS "n" FROM "workflow_edge" e JOIN "workflow_node" s ON s."id" = e."from_node_id"
        WHERE e."to_node_id" = $1 AND s."status" NOT IN (${final})`,
      [nodeId],
    ),
  );
  return Number(rows[0]?.n ?? 0);
}

type NodeState = {
  id: string;
  status: string;
  nodeType: string;
  output: unknown;
  nodeName: string | null;
  key: string;
  orgDid: string;
};

/**
 * Ends a running workflow: `completed`, `failed` (a node failed without a failure edge) or
 * `cancelled` (a caller, or the revocation of the delegation it acts under). What had not run is
 * skipped, runs still going are cancelled (their nodes then fail), open approval requests of its
 * nodes are cancelled, its delegation ends with it (revoked, reason `workflow_ended`), and `workflow.completed` / `workflow.failed` go on the bus
 * when something subscribes to them. Returns false when it had already ended.
 */
export async function endWorkflow(
  tx: Db,
  workflow: Workflow,
  status: "completed" | "failed" | "cancelled",
  error?: { code: string; message: string } & Record<string, unknown>,
): Promise<boolean> {
  const now = new Date();
  const { count } = await tx.workflow.updateMany({
    where: { id: workflow.id, status: "running" },
    data: { status, completedAt: now, ...(error ? { error: error as object } : {}) },
  });
  if (count === 0) return false;
  workflowChanged(tx, workflow);
  if (status !== "completed") {
    await tx.workflowNode.updateMany({
      where: { workflowId: workflow.id, status: { in: ["pending", "waiting_approval"] } },
      data: { status: "skipped", completedAt: now },
    });
    const runs = await tx.workflowNode.findMany({
      where: { workflowId: workflow.id, status: "running", executionId: { not: null } },
      select: { executionId: true },
    });
    if (runs.length > 0) {
      const executions = await tx.asyncExecution.findMany({
        where: { id: { in: runs.map((r) => r.executionId!) }, status: { in: ["queued", "processing"] } },
      });
      await cancelExecutions(tx, executions, {
        code: "workflow_ended",
        message: `The workflow ${workflow.id} ended (${status}) while this run was going on.`,
        workflow_id: workflow.id,
      });
    }
  }
  await endWorkflowDelegation(tx, workflow, now);
  // Requests its approval nodes filed cannot be acted on any more: cancelled with the delegation's end.
  if (status !== "completed") await cancelApprovalsOfRevokedDelegations(tx, [workflow.delegationId]);
  if (status === "cancelled") return true;
  const type = `workflow.${status}`;
  const engine = config().engine;
  await subscriptionIndex.refresh(tx, engine);
  if (subscriptionIndex.match(workflow.orgDid, type).length === 0) return true;
  const nodes = await tx.workflowNode.findMany({
    where: { workflowId: workflow.id },
    select: { status: true, durationMs: true },
  });
  const ended = { ...workflow, status, completedAt: now, error: (error ?? null) as Workflow["error"] };
  await putPlatformEvent(tx, engine, workflow.orgDid, {
    type,
    payload: { workflow_id: workflow.id, ...workflowFields(ended), stats: statsOf(ended, nodes) },
  });
  return true;
}

/** The workflow's own delegation ends with it: revoked with reason `workflow_ended`, in the same transaction. */
async function endWorkflowDelegation(tx: Db, workflow: Workflow, revokedAt: Date): Promise<void> {
  const { count } = await tx.delegation.updateMany({
    where: { id: workflow.delegationId, kind: "workflow", revokedAt: null },
    data: { revokedAt },
  });
  if (count === 0) return;
  await tx.revocation.create({
    data: {
      id: newId("rev"),
      delegationId: workflow.delegationId,
      orgDid: workflow.orgDid,
      revokedBy: workflow.orgDid,
      revokedAt,
      reason: "workflow_ended",
      metadata: { workflow_id: workflow.id },
    },
  });
}
