import type { Db } from "../db/client";
import { applyLogic, LogicLimitExceeded, logicTruthy } from "./jsonLogic";
import { openNodeValues } from "./sealedOutputs";

type Obj = Record<string, unknown>;

/** The node types that run no work of their own: they settle as soon as their incoming edges resolve. */
export const CONTROL_NODE_TYPES = new Set(["fork", "join", "condition"]);

/** A settled node as the advance of its workflow sees it. */
export interface NodeState {
  id: string;
  status: string;
  nodeType: string;
  output: unknown;
  nodeName: string | null;
  key: string;
  orgDid: string;
  config?: unknown;
}

/** A `join`'s output: the outputs of its sources that completed, by their ids in the definition. */
export function joinOutput(sources: readonly Pick<NodeState, "key" | "output" | "status">[]): { branches: Obj } {
  return {
    branches: Object.fromEntries(sources.filter((n) => n.status === "completed").map((n) => [n.key, n.output ?? null])),
  };
}

/**
 * A condition node's JSON Logic rule over `{input, nodes: {<id>: {output}}}` (every node of the
 * workflow that has completed so far, read in `db`'s transaction); its output is `{result}` and the
 * edge of that branch is taken. The rule is evaluated within server/workflows/jsonLogic.ts's bounds:
 * a rule that hits one on this data (`condition_limit`) or throws (`condition_error`) fails the
 * node, never the process.
 */
export async function evaluateCondition(db: Db, workflowId: string, rule: unknown, input: unknown) {
  const done = await db.workflowNode.findMany({
    where: { workflowId, status: "completed" },
    select: { key: true, output: true },
  });
  // A rule may test a secret a node answered (its value never leaves: the output is `{result}`).
  const data = await openNodeValues(
    { input: input ?? {}, nodes: Object.fromEntries(done.map((n) => [n.key, { output: n.output ?? null }])) },
    workflowId,
  );
  try {
    const result = logicTruthy(applyLogic(rule, data));
    return { status: "completed" as const, output: { result } };
  } catch (e) {
    return {
      status: "failed" as const,
      error: {
        code: e instanceof LogicLimitExceeded ? "condition_limit" : "condition_error",
        message: e instanceof Error ? e.message : String(e),
      },
    };
  }
}
