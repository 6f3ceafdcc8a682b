import { config } from "../config";
import { sqlIn, type Db } from "../db/client";
import type { RunEnd } from "../executions/runEndHooks";
import { endWorkflow, settleNode, workflowIdOf } from "./advanceWorkflow";
import { cancelledByRevocation } from "./cancelWorkflow";

/**
 * The run-end hook (registered through server/areas.ts): when a run an `agent` node started
 * ends, the node settles with the run's result (completed) or its error (failed, cancelled) in
 * the transaction that records the run's end, and its workflow moves on. Runs no node started
 * cost one indexed read.
 */
export async function settleAgentNode(tx: Db, run: RunEnd): Promise<void> {
  const [node] = await sqlIn(tx, config().engine).query<{ id: string }>(
    `SELECT "id" FROM "workflow_node" WHERE "execution_id" = $1 AND "status" = 'running' LIMIT 1`,
    [run.id],
  );
  if (!node) return;
  const execution = await tx.asyncExecution.findUniqueOrThrow({
    where: { id: run.id },
    select: { resultJson: true, errorJson: true },
  });
  if (run.status === "completed") {
    const result = execution.resultJson;
    const output = result && typeof result === "object" && !Array.isArray(result) ? result : { result: result ?? null };
    await settleNode(tx, node.id, { status: "completed", output }, ["running"]);
  } else {
    // A revocation reaches the run before the workflow (the executions' hook runs first): the
    // workflow is cancelled for it, rather than failed by its node.
    const code = (execution.errorJson as { code?: unknown } | null)?.code;
    if (code === "delegation_revoked") {
      const workflow = await tx.workflow.findUniqueOrThrow({ where: { id: workflowIdOf(node.id) } });
      const delegation = await tx.delegation.findUnique({
        where: { id: workflow.delegationId },
        select: { revokedAt: true },
      });
      if (delegation?.revokedAt) await endWorkflow(tx, workflow, "cancelled", cancelledByRevocation);
    }
    const error = (execution.errorJson as object | null) ?? { code: run.status, message: `The run ${run.status}.` };
    await settleNode(tx, node.id, { status: "failed", error: { ...error, execution_status: run.status } }, ["running"]);
  }
}
