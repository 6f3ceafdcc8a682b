import type { Db } from "../db/client";
import { processWide } from "../processWide";

/** An edge of a started workflow, by its nodes' row ids. */
export interface GraphEdge {
  fromNodeId: string;
  toNodeId: string;
  edgeType: string;
}

/** A workflow's edges, both ways: written once at its start and never changed after. */
export interface WorkflowGraph {
  /** The edges leaving each node, in the definition's order. */
  out: ReadonlyMap<string, readonly GraphEdge[]>;
  /** The edges into each node, in the definition's order. */
  into: ReadonlyMap<string, readonly GraphEdge[]>;
  size: number;
}

// not state: the empty answer, frozen, never written to
const NONE: readonly GraphEdge[] = Object.freeze([]);
export const edgesOut = (g: WorkflowGraph, id: string) => g.out.get(id) ?? NONE;
export const edgesInto = (g: WorkflowGraph, id: string) => g.into.get(id) ?? NONE;

/**
 * Edges kept in the process at most (oldest workflow first out). A workflow's graph is immutable,
 * so a cached one is never stale: keeping it spares each settling node the reads of the edges
 * around it (two to three statements per node of a 200-node workflow). Bounded by edges, not
 * workflows: a few hundred bytes each, so the cache stays within a few MiB.
 */
const MAX_EDGES = 20_000;

interface Cache {
  graphs: Map<string, WorkflowGraph>;
  edges: number;
}
const cache = processWide<Cache>("workflows.graphs", () => ({ graphs: new Map(), edges: 0 }));

function build(edges: readonly GraphEdge[]): WorkflowGraph {
  const out = new Map<string, GraphEdge[]>();
  const into = new Map<string, GraphEdge[]>();
  for (const e of edges) {
    const edge = { fromNodeId: e.fromNodeId, toNodeId: e.toNodeId, edgeType: e.edgeType };
    (out.get(e.fromNodeId) ?? out.set(e.fromNodeId, []).get(e.fromNodeId)!).push(edge);
    (into.get(e.toNodeId) ?? into.set(e.toNodeId, []).get(e.toNodeId)!).push(edge);
  }
  return { out, into, size: edges.length };
}

/** Keeps a workflow's graph (its start, once committed, hands it over so the first node reads nothing). */
export function rememberWorkflowGraph(workflowId: string, edges: readonly GraphEdge[]): WorkflowGraph {
  const graph = build(edges);
  forgetWorkflowGraph(workflowId);
  cache.graphs.set(workflowId, graph);
  cache.edges += graph.size;
  for (const [id, g] of cache.graphs) {
    if (cache.edges <= MAX_EDGES || id === workflowId) break;
    cache.graphs.delete(id);
    cache.edges -= g.size;
  }
  return graph;
}

/** Drops a workflow's graph (it ended: nothing settles in it any more). */
export function forgetWorkflowGraph(workflowId: string): void {
  const g = cache.graphs.get(workflowId);
  if (!g) return;
  cache.graphs.delete(workflowId);
  cache.edges -= g.size;
}

/** A started workflow's graph: from the process's cache, else one read of its edges. */
export async function workflowGraph(db: Db, workflowId: string): Promise<WorkflowGraph> {
  const hit = cache.graphs.get(workflowId);
  if (hit) {
    // Most recently used last: the oldest go first.
    cache.graphs.delete(workflowId);
    cache.graphs.set(workflowId, hit);
    return hit;
  }
  const edges = await db.workflowEdge.findMany({
    where: { workflowId },
    select: { fromNodeId: true, toNodeId: true, edgeType: true },
    orderBy: { position: "asc" },
  });
  return rememberWorkflowGraph(workflowId, edges);
}
