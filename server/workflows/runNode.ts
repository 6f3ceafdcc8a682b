import { database, type Database, type Db } from "../db/client";
import type { WorkflowNode } from "../db/generated/sqlite/client";
import { commitGrouped } from "../db/groupCommit";
import type { ClaimedJob } from "../jobs";
import { settleNode } from "./advanceWorkflow";
import { evaluateCondition } from "./controlNodes";
import { callOperation, type CallOutcome } from "./callOperation";
import { startApprovalNode } from "./approvalNodes";
import { nodeOperation } from "./nodeOperations";
import { openNodeValues, sealNodeOutput } from "./sealedOutputs";
import type { NodeConfig } from "./views";
import { workflowChanged } from "./workflowChanged";

type Obj = Record<string, unknown>;

/**
 * The `workflow.node` job: runs one node whose incoming edges have resolved. `fork`, `join` and
 * `condition` settle at once; `svc` makes its one governed call and settles in that call's
 * transaction; `agent` invokes the agent (a governed call too) and waits for the run's end
 * (runEndHook); `approval` files its request and waits for the decision (the approval waiter).
 * A node that is no longer pending, or whose workflow has ended, is left alone: the job may run
 * again after a restart and must change nothing twice.
 */
export async function runNodeJob(job: ClaimedJob<{ nodeId: string }>): Promise<void> {
  const db = await database();
  const node = await db.read.workflowNode.findUnique({ where: { id: job.payload.nodeId } });
  if (!node || node.status !== "pending") return;
  const workflow = await db.read.workflow.findUnique({ where: { id: node.workflowId } });
  if (!workflow || workflow.status !== "running") return;
  const startedAt = new Date();
  const config = (node.config ?? {}) as NodeConfig;
  switch (node.nodeType) {
    case "fork":
      await commitGrouped(db, (tx) => settleNode(tx, node.id, { status: "completed", startedAt }, ["pending"]));
      return;
    case "join": {
      const output = { branches: await predecessorOutputs(db.read, node) };
      await commitGrouped(db, (tx) => settleNode(tx, node.id, { status: "completed", output, startedAt }, ["pending"]));
      return;
    }
    case "condition": {
      const outcome = await evaluateCondition(db.read, node.workflowId, config.condition, workflow.input);
      await commitGrouped(db, (tx) => settleNode(tx, node.id, { ...outcome, startedAt }, ["pending"]));
      return;
    }
    case "svc": {
      const op = nodeOperation(config.operation ?? "");
      const input = (node.input ?? {}) as Obj;
      if (!op) {
        await commitGrouped(db, (tx) =>
          settleNode(
            tx,
            node.id,
            { status: "failed", error: { code: "unknown_operation", message: `No operation ${config.operation}.` } },
            ["pending"],
          ),
        );
        return;
      }
      await callOperation(op, workflow, input, async (tx, outcome) => {
        const settled = nodeOutcome(outcome);
        // Stored and shown to readers without the secrets the operation answers (a minted token).
        if (settled.status === "completed") settled.output = await sealNodeOutput(op, settled.output, workflow.id);
        await settleNode(tx, node.id, { ...settled, startedAt }, ["pending"], node);
      });
      return;
    }
    case "agent":
      await startAgentNode(db, node, workflow);
      return;
    case "approval":
      await commitGrouped(db, (tx) => startApprovalNode(tx, node, workflow));
      return;
  }
}

/** What a governed call came to, as the node's outcome. */
function nodeOutcome(outcome: CallOutcome) {
  if (outcome.ok) {
    const value = outcome.value;
    const output = value && typeof value === "object" && !Array.isArray(value) ? (value as Obj) : { value };
    return { status: "completed" as const, output, provenanceId: outcome.recordId };
  }
  return { status: "failed" as const, error: outcome.error, provenanceId: outcome.recordId };
}

/**
 * An agent node: the agent is invoked by a governed call of `invokeAgent` under the workflow's
 * delegation (its record is the node's), with the node's input or else its predecessors'
 * outputs; the node runs until the execution ends (runEndHook settles it).
 */
async function startAgentNode(
  db: Database,
  node: WorkflowNode,
  workflow: { orgDid: string; delegationId: string; id: string },
): Promise<void> {
  const op = nodeOperation("invokeAgent")!;
  // Kept as read (secrets sealed) on the node; the run gets the real values.
  const input = (node.input as Obj | null) ?? (await predecessorOutputs(db.read, node));
  const opened = await openNodeValues(input, workflow.id);
  const startedAt = new Date();
  await callOperation(op, workflow, { id: node.agentId, input: opened, max_attempts: 1 }, async (tx, outcome) => {
    if (!outcome.ok) {
      await settleNode(tx, node.id, { ...nodeOutcome(outcome), startedAt }, ["pending"]);
      return;
    }
    const execution = outcome.value as { id: string };
    const { count } = await tx.workflowNode.updateMany({
      where: { id: node.id, status: "pending" },
      data: {
        status: "running",
        executionId: execution.id,
        provenanceId: outcome.recordId,
        startedAt,
        input: input as object,
      },
    });
    if (count > 0) workflowChanged(tx, workflow);
  });
}

/** The outputs of the nodes with an edge into `node` that completed, by their ids in the definition. */
async function predecessorOutputs(db: Db, node: WorkflowNode): Promise<Obj> {
  const edges = await db.workflowEdge.findMany({ where: { workflowId: node.workflowId, toNodeId: node.id } });
  const from = await db.workflowNode.findMany({
    where: { id: { in: edges.map((e) => e.fromNodeId) }, status: "completed" },
    select: { key: true, output: true },
  });
  return Object.fromEntries(from.map((n) => [n.key, n.output ?? null]));
}
