import { cancelApprovalsOfRevokedDelegations } from "../approvals/cancelApproval";
import { config } from "../config";
import { afterCommit, sqlIn, type Db } from "../db/client";
import type { Workflow, WorkflowNode } from "../db/generated/sqlite/client";
import { subscriptionIndex } from "../events/matcher";
import { putPlatformEvent } from "../events/platformEvents";
import { sqliteTimestamp } from "../db/raw";
import { cancelExecutions } from "../executions/endExecution";
import { newId } from "../ids";
import { enqueueMany } from "../jobs";
import { CONTROL_NODE_TYPES, evaluateCondition, joinOutput, type NodeState } from "./controlNodes";
import { statsOf, workflowFields, type NodeConfig } from "./views";
import { edgesInto, edgesOut, forgetWorkflowGraph, workflowGraph, type GraphEdge } from "./workflowGraph";
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
  read?: WorkflowNode,
): Promise<boolean> {
  const workflowId = workflowIdOf(nodeId);
  const now = new Date();
  // Raw SQL in the caller's transaction (a fraction of Prisma's CPU: every settling node runs it).
  const engine = config().engine;
  const live = await sqlIn(tx, engine).execute(
    `UPDATE "workflow" SET "updated_at" = $1 WHERE "id" = $2 AND "status" = 'running'`,
    [engine === "sqlite" ? sqliteTimestamp(now) : now, workflowId],
  );
  // The row its job has just read need not be read again: the guarded update below decides
  // whether the node was still in a `from` state.
  const node = read ?? (await tx.workflowNode.findUnique({ where: { id: nodeId } }));
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
 *
 * Control nodes (`fork`, `join`, `condition`) that become ready settle here, in the same
 * transaction, instead of each costing a job (a claim, a commit and the reads of a run): a branch
 * that resolves a join settles the join, the fork behind it and queues the fork's branches in one
 * commit. Their fields are filled as their jobs would (started and completed at once).
 *
 * The edges come from the workflow's cached graph (immutable since its start). A node whose
 * sources are all known here (a fork's branches: their one source just ended) needs no counting;
 * a branch arriving at a join whose other branches still run costs one counting statement, and
 * the join's sources are read once, by the branch that resolves it. The states of all the nodes a
 * round looks at are read in one statement, and the nodes it queues are inserted in one.
 */
async function advance(tx: Db, workflowId: string, settled: NodeState): Promise<void> {
  const graph = await workflowGraph(tx, workflowId);
  const known = new Map<string, NodeState>([[settled.id, settled]]);
  const states = async (ids: Iterable<string>) => {
    const missing = [...new Set(ids)].filter((id) => !known.has(id));
    if (missing.length === 0) return;
    const rows = await tx.workflowNode.findMany({
      where: { id: { in: missing } },
      select: {
        id: true,
        status: true,
        nodeType: true,
        output: true,
        nodeName: true,
        key: true,
        orgDid: true,
        config: true,
      },
    });
    for (const r of rows) known.set(r.id, r);
  };
  const sourcesOf = (id: string) => [...new Set(edgesInto(graph, id).map((e) => e.fromNodeId))];
  /** Whether a source of `id` has not ended: from what is known here, else one counting statement. */
  const unended = async (id: string) => {
    const sources = sourcesOf(id);
    if (sources.every((s) => known.has(s))) return sources.some((s) => !FINAL_NODE_STATES.has(known.get(s)!.status));
    return (await unendedSources(tx, id)) > 0;
  };
  const taken = (e: GraphEdge) => {
    const from = known.get(e.fromNodeId)!;
    if (from.status === "failed") return e.edgeType === "failure";
    if (from.status !== "completed" || e.edgeType === "failure") return false;
    if (e.edgeType === "condition_true" || e.edgeType === "condition_false") {
      const result = (from.output as { result?: unknown } | null)?.result === true;
      return result === (e.edgeType === "condition_true");
    }
    return true;
  };

  const decided = new Set<string>();
  // Nodes found waiting for a source that had not ended (open nodes, unless decided later here).
  const waiting = new Set<string>();
  const toRun: string[] = [];
  // The nodes that ended in this transaction whose successors are still to be looked at.
  const ended: NodeState[] = [settled];
  while (ended.length > 0) {
    const node = ended.shift()!;
    const out = edgesOut(graph, node.id);
    if (node.status === "failed" && !out.some((e) => e.edgeType === "failure")) {
      const workflow = await tx.workflow.findUniqueOrThrow({ where: { id: workflowId } });
      await endWorkflow(tx, workflow, "failed", {
        code: "node_failed",
        message: `The node ${node.nodeName ?? node.key} failed and has no failure edge.`,
        node_id: node.id,
      });
      return;
    }
    let frontier = [...new Set(out.map((e) => e.toNodeId))];
    while (frontier.length > 0) {
      const resolved: string[] = [];
      for (const id of frontier) {
        if (decided.has(id)) continue;
        if (await unended(id)) waiting.add(id);
        else resolved.push(id);
      }
      await states([...resolved, ...resolved.flatMap(sourcesOf)]);
      const skipped: string[] = [];
      const next: string[] = [];
      for (const id of resolved) {
        const target = known.get(id);
        if (!target || target.status !== "pending" || decided.has(id)) continue;
        decided.add(id);
        if (!edgesInto(graph, id).some(taken)) {
          target.status = "skipped";
          skipped.push(id);
          next.push(...edgesOut(graph, id).map((e) => e.toNodeId));
        } else if (CONTROL_NODE_TYPES.has(target.nodeType)) {
          const done = await settleControlNode(
            tx,
            workflowId,
            target,
            sourcesOf(id).map((s) => known.get(s)!),
          );
          if (done) {
            known.set(id, done);
            ended.push(done);
          }
        } else toRun.push(id);
      }
      // Written before the next round: the nodes behind them count their unended sources in the database.
      if (skipped.length > 0)
        await tx.workflowNode.updateMany({
          where: { id: { in: skipped }, status: "pending" },
          data: { status: "skipped", completedAt: new Date() },
        });
      frontier = [...new Set(next)];
    }
  }
  await enqueueMany(
    tx,
    NODE_JOB,
    toRun.map((nodeId) => ({ nodeId })),
    { orgDid: settled.orgDid, maxAttempts: 5 },
  );
  if (toRun.length > 0 || [...waiting].some((id) => !decided.has(id))) return;
  const open = await tx.workflowNode.count({ where: { workflowId, status: { notIn: [...FINAL_NODE_STATES] } } });
  if (open === 0) {
    const workflow = await tx.workflow.findUniqueOrThrow({ where: { id: workflowId } });
    await endWorkflow(tx, workflow, "completed");
  }
}

/**
 * Settles a ready control node in the transaction that made it ready, as its job would have: a
 * fork completes, a join completes with its completed sources' outputs, a condition with its
 * rule's result (or fails). Returns its new state, or undefined when it was no longer pending.
 */
async function settleControlNode(
  tx: Db,
  workflowId: string,
  node: NodeState,
  sources: NodeState[],
): Promise<NodeState | undefined> {
  const now = new Date();
  let outcome: { status: "completed"; output?: object } | { status: "failed"; error: object };
  if (node.nodeType === "join") outcome = { status: "completed", output: joinOutput(sources) };
  else if (node.nodeType === "condition") {
    const workflow = await tx.workflow.findUniqueOrThrow({ where: { id: workflowId }, select: { input: true } });
    const rule = (node.config as NodeConfig | null)?.condition;
    outcome = await evaluateCondition(tx, workflowId, rule, workflow.input);
  } else outcome = { status: "completed" };
  const { count } = await tx.workflowNode.updateMany({
    where: { id: node.id, status: "pending" },
    data: {
      status: outcome.status,
      ...(outcome.status === "completed" ? { output: outcome.output } : { error: outcome.error }),
      startedAt: now,
      completedAt: now,
      durationMs: 0,
    },
  });
  if (count === 0) return undefined;
  workflowChanged(tx, { id: workflowId, orgDid: node.orgDid });
  return { ...node, status: outcome.status, output: outcome.status === "completed" ? (outcome.output ?? null) : null };
}

/** How many of the nodes with an edge into `nodeId` have not ended: one statement, whatever the fan-in. */
async function unendedSources(tx: Db, nodeId: string): Promise<number> {
  const final = [...FINAL_NODE_STATES].map((s) => `'${s}'`).join(", ");
  const rows = await sqlIn(tx, config().engine).query<{ n: unknown }>(
    `SELECT COUNT(*) AS "n" FROM "workflow_edge" e JOIN "workflow_node" s ON s."id" = e."from_node_id"
        WHERE e."to_node_id" = $1 AND s."status" NOT IN (${final})`,
    [nodeId],
  );
  return Number(rows[0]?.n ?? 0);
}

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
  // Nothing settles in it any more: its graph leaves the cache.
  afterCommit(tx, () => forgetWorkflowGraph(workflow.id));
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
