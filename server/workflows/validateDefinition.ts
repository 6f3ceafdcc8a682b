import type { FieldError } from "../errors";
import { applyLogic, LogicLimitExceeded, LogicMeter, ruleProblem } from "./jsonLogic";
import type { Definition } from "./schemas";

/** Operations a `svc` node may not call: starting a workflow from a workflow would let one definition grow without bound. */
const NOT_FROM_NODES = new Set(["startWorkflow", "cancelWorkflow"]);

/** What validation needs to know of the platform's operations (the registry in platformOperations.ts). */
export interface KnownOperation {
  id: string;
  json: boolean;
}

/**
 * Checks a definition's graph beyond its schema and returns every problem, each naming the node
 * or edge (`nodes[2].condition`, `edges[4].to_node_id`): duplicate ids, fields a node type needs,
 * dangling edges, edge types that do not fit their ends, cycles, a root that is not exactly one
 * node, a `join` none of whose forks reaches all its branches, and a `condition` without both
 * branches or with a rule JSON Logic does not know. Conditions are JSON Logic data, never code.
 */
export function validateDefinition(def: Definition, operations: ReadonlyMap<string, KnownOperation>): FieldError[] {
  const errors: FieldError[] = [];
  const err = (field: string, code: string, message: string) => errors.push({ field, code, message });
  const index = new Map<string, number>();
  // The trial evaluations of all the definition's conditions share one evaluation's bounds.
  const meter = new LogicMeter();
  def.nodes.forEach((n, i) => {
    if (index.has(n.id)) err(`nodes[${i}].id`, "DUPLICATE_NODE_ID", `The node id ${n.id} is used twice.`);
    else index.set(n.id, i);
    const need = (field: keyof typeof n, what: string) => {
      if (n[field] === undefined)
        err(`nodes[${i}].${field}`, "REQUIRED_FIELD_MISSING", `A ${n.node_type} node needs ${what}.`);
    };
    if (n.node_type === "agent") need("agent_id", "agent_id");
    if (n.node_type === "approval") need("approval", "the approval request's fields");
    if (n.node_type === "condition") {
      need("condition", "a JSON Logic condition");
      if (n.condition !== undefined) {
        const problem = conditionProblem(n.condition, meter);
        if (problem) err(`nodes[${i}].condition`, "INVALID_CONDITION", problem);
      }
    }
    if (n.node_type === "svc") {
      need("operation", "the operation id it calls");
      if (n.operation !== undefined) {
        const op = operations.get(n.operation);
        if (!op || !op.json || NOT_FROM_NODES.has(n.operation))
          err(`nodes[${i}].operation`, "UNKNOWN_OPERATION", `No platform operation ${n.operation} a node can call.`);
      }
    }
    for (const field of ["agent_id", "operation", "approval", "condition"] as const) {
      const owner = { agent_id: "agent", operation: "svc", approval: "approval", condition: "condition" }[field];
      if (n[field] !== undefined && n.node_type !== owner)
        err(`nodes[${i}].${field}`, "UNKNOWN_FIELD", `${field} belongs to ${owner} nodes, not ${n.node_type}.`);
    }
  });

  const out = new Map<string, { type: string; to: string }[]>();
  const inn = new Map<string, string[]>();
  const seen = new Set<string>();
  def.edges.forEach((e, i) => {
    let dangling = false;
    for (const end of ["from_node_id", "to_node_id"] as const) {
      if (!index.has(e[end])) {
        err(`edges[${i}].${end}`, "DANGLING_EDGE", `No node ${e[end]} in the definition.`);
        dangling = true;
      }
    }
    if (dangling) return;
    const key = `${e.from_node_id}>${e.to_node_id}`;
    if (seen.has(key))
      err(`edges[${i}]`, "DUPLICATE_EDGE", `There is already an edge from ${e.from_node_id} to ${e.to_node_id}.`);
    seen.add(key);
    const from = def.nodes[index.get(e.from_node_id)!]!;
    const to = def.nodes[index.get(e.to_node_id)!]!;
    const fits =
      (e.edge_type.startsWith("condition_") ? from.node_type === "condition" : from.node_type !== "condition") &&
      (e.edge_type === "fork") === (from.node_type === "fork") &&
      (e.edge_type !== "join" || to.node_type === "join") &&
      (e.edge_type !== "failure" || ["agent", "svc", "approval"].includes(from.node_type));
    if (!fits)
      err(
        `edges[${i}].edge_type`,
        "INVALID_EDGE_TYPE",
        `A ${e.edge_type} edge cannot go from a ${from.node_type} node to a ${to.node_type} node (fork edges leave forks, condition_* edges leave conditions, join edges enter joins, failure edges leave agent, svc and approval nodes).`,
      );
    out.set(e.from_node_id, [...(out.get(e.from_node_id) ?? []), { type: e.edge_type, to: e.to_node_id }]);
    inn.set(e.to_node_id, [...(inn.get(e.to_node_id) ?? []), e.from_node_id]);
  });

  // Cycles (Kahn): whatever cannot be ordered lies on or behind a cycle.
  const order: string[] = [];
  const indegree = new Map([...index.keys()].map((id) => [id, inn.get(id)?.length ?? 0]));
  const ready = [...indegree].filter(([, d]) => d === 0).map(([id]) => id);
  while (ready.length > 0) {
    const id = ready.pop()!;
    order.push(id);
    for (const { to } of out.get(id) ?? []) {
      const d = indegree.get(to)! - 1;
      indegree.set(to, d);
      if (d === 0) ready.push(to);
    }
  }
  if (order.length < index.size) {
    const cyclic = [...indegree].filter(([, d]) => d > 0).map(([id]) => id);
    for (const id of cyclic)
      err(`nodes[${index.get(id)}]`, "WORKFLOW_CYCLE", `The node ${id} is on a cycle (with ${cyclic.join(", ")}).`);
    return errors;
  }

  const roots = def.nodes.filter((n) => !inn.has(n.id));
  if (roots.length !== 1 && index.size === def.nodes.length)
    for (const r of roots.slice(1))
      err(
        `nodes[${index.get(r.id)}]`,
        "MULTIPLE_ROOTS",
        `A workflow has one root; ${roots.map((n) => n.id).join(", ")} have no edge into them (start them from a fork).`,
      );

  def.nodes.forEach((n, i) => {
    const edges = out.get(n.id) ?? [];
    if (n.node_type === "condition") {
      for (const branch of ["condition_true", "condition_false"])
        if (!edges.some((e) => e.type === branch))
          err(
            `nodes[${i}]`,
            "CONDITION_BRANCHES",
            `The condition ${n.id} has no ${branch} edge; it needs both branches.`,
          );
    }
    if (n.node_type === "fork" && edges.length < 2)
      err(`nodes[${i}]`, "FORK_BRANCHES", `The fork ${n.id} needs at least two fork edges.`);
  });

  // A join waits for the branches of a fork: some fork must reach every one of its predecessors.
  const ancestors = new Map<string, Set<string>>();
  for (const id of order) {
    const set = new Set<string>();
    for (const p of inn.get(id) ?? []) {
      set.add(p);
      for (const a of ancestors.get(p)!) set.add(a);
    }
    ancestors.set(id, set);
  }
  def.nodes.forEach((n, i) => {
    if (n.node_type !== "join") return;
    const preds = inn.get(n.id) ?? [];
    const forks = [...ancestors.get(n.id)!].filter((a) => def.nodes[index.get(a)!]!.node_type === "fork");
    const closing = forks.some((f) => preds.every((p) => p === f || ancestors.get(p)!.has(f)));
    if (preds.length < 2 || !closing)
      err(
        `nodes[${i}]`,
        "JOIN_WITHOUT_FORK",
        `The join ${n.id} needs at least two incoming branches that all start from one fork before it.`,
      );
  });
  return errors;
}

/**
 * Why a JSON Logic rule cannot be used, or undefined: it must be a rule (or a constant) using only
 * the operations svc evaluates (server/workflows/jsonLogic.ts: no `log`, no method calls), within
 * its size and depth, and a trial over empty data (`{input: {}, nodes: {}}`) must stay within its
 * bounds of work, size and time (shared by the definition's conditions): a rule that already
 * exhausts them on constants is refused here.
 */
function conditionProblem(rule: unknown, meter: LogicMeter): string | undefined {
  if (typeof rule === "string" && rule.length > 0)
    return 'A condition is a JSON Logic rule (an object such as {"==": [{"var": "nodes.check.output.ok"}, true]}), not code or text.';
  const problem = ruleProblem(rule);
  if (problem) return problem;
  try {
    applyLogic(rule, { input: {}, nodes: {} }, meter);
    return undefined;
  } catch (e) {
    if (e instanceof LogicLimitExceeded) return `${e.message} (evaluated over empty input).`;
    return `JSON Logic refuses the rule: ${e instanceof Error ? e.message : String(e)}`;
  }
}
