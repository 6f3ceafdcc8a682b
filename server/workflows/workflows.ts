import type { z } from "zod";
import type { Db } from "../db/client";
import type { Workflow } from "../db/generated/sqlite/client";
import { NotFound } from "../errors";
import type { Principal } from "../governance/principal";
import { keyset, olderThan } from "../http/cursor";
import type { WorkflowListQuery } from "./schemas";
import { edgeView, nodeView, statsOf, workflowFields } from "./views";

/** The organization's workflows, newest first, by status and name; each with its stats and root node. */
export async function listWorkflows(
  db: Db,
  principal: Principal,
  query: z.output<typeof WorkflowListQuery>,
  secret: Buffer,
) {
  const { after, take, page } = keyset<Workflow>(secret, "workflows", query, (last) => [
    last.createdAt.toISOString(),
    last.id,
  ]);
  const rows = await db.workflow.findMany({
    where: {
      orgDid: principal.orgDid,
      ...(query.status ? { status: query.status } : {}),
      ...(query.name ? { name: query.name } : {}),
      ...olderThan(after, "createdAt", "id"),
    },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take,
  });
  const { items, pagination } = page(rows);
  // One read for the nodes of the whole page: stats are computed from them, never stored.
  const nodes = await db.workflowNode.findMany({
    where: { workflowId: { in: items.map((w) => w.id) } },
    select: { workflowId: true, id: true, status: true, durationMs: true, position: true, createdAt: true },
    orderBy: { position: "asc" },
  });
  const edgesInto = await db.workflowEdge.findMany({
    where: { workflowId: { in: items.map((w) => w.id) } },
    select: { toNodeId: true },
  });
  const targets = new Set(edgesInto.map((e) => e.toNodeId));
  const data = items.map((w) => {
    const own = nodes.filter((n) => n.workflowId === w.id);
    const root = own.find((n) => !targets.has(n.id));
    return {
      workflow_id: w.id,
      ...workflowFields(w),
      stats: statsOf(w, own),
      ...(root ? { root_node: { id: root.id, status: root.status, created_at: root.createdAt.toISOString() } } : {}),
    };
  });
  return { data, pagination };
}

/** One workflow as a DAG: its nodes (in the definition's order) and edges, its stats and its root. */
export async function getWorkflow(db: Db, principal: Principal, id: string) {
  const w = await db.workflow.findFirst({ where: { id, orgDid: principal.orgDid } });
  if (!w) throw NotFound("workflow", id);
  const nodes = await db.workflowNode.findMany({ where: { workflowId: id }, orderBy: { position: "asc" } });
  const edges = await db.workflowEdge.findMany({ where: { workflowId: id }, orderBy: { position: "asc" } });
  const agentIds = [...new Set(nodes.map((n) => n.agentId).filter((a): a is string => a !== null))];
  const agents = agentIds.length
    ? await db.agent.findMany({
        where: { id: { in: agentIds }, orgDid: principal.orgDid },
        select: { id: true, name: true },
      })
    : [];
  const agentNames = new Map(agents.map((a) => [a.id, a.name]));
  const parentOf = new Map<string, string>();
  for (const e of edges) if (!parentOf.has(e.toNodeId)) parentOf.set(e.toNodeId, e.fromNodeId);
  const views = nodes.map((n) => nodeView(n, parentOf, agentNames));
  const root = views.find((n) => !parentOf.has(n.id));
  return {
    workflow_id: w.id,
    ...workflowFields(w),
    nodes: views,
    edges: edges.map(edgeView),
    stats: statsOf(w, nodes),
    ...(root ? { root_node: root } : {}),
  };
}
