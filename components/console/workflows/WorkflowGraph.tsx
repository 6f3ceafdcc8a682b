"use client";

import dagre from "@dagrejs/dagre";
import {
  Background,
  Controls,
  Handle,
  MarkerType,
  Position,
  ReactFlow,
  type Edge,
  type Node,
  type NodeProps,
} from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import { useTheme } from "next-themes";
import { useMemo } from "react";
import { cn } from "@/components/ui/cn";
import type { WorkflowDag, WorkflowNodeValue } from "./workflowFormat";

const NODE_W = 184;
const NODE_H = 60;

/** Node colours by status: the border and a tint, so a glance tells what ran, what waits and what failed. */
const STATUS_STYLE: Record<WorkflowNodeValue["status"], string> = {
  pending: "border-border bg-card text-foreground",
  running: "border-primary bg-primary/10 text-foreground ring-2 ring-primary/40",
  waiting_approval: "border-warning bg-warning/15 text-foreground ring-2 ring-warning/40",
  completed: "border-success bg-success/10 text-foreground",
  failed: "border-destructive bg-destructive/10 text-foreground",
  skipped: "border-dashed border-border bg-muted text-muted-foreground",
};

/** Edges by type: the flow in grey, failure paths red and dashed, condition branches green / amber, fork and join blue. */
function edgeStyle(type: string): { stroke: string; strokeDasharray?: string } {
  switch (type) {
    case "failure":
      return { stroke: "var(--destructive)", strokeDasharray: "6 4" };
    case "condition_true":
      return { stroke: "var(--success)" };
    case "condition_false":
      return { stroke: "var(--warning)", strokeDasharray: "2 3" };
    case "fork":
    case "join":
      return { stroke: "var(--primary)" };
    default:
      return { stroke: "var(--muted-foreground)" };
  }
}

const EDGE_LABELS: Record<string, string | undefined> = {
  failure: "on failure",
  condition_true: "true",
  condition_false: "false",
  success: "on success",
};

type DagNode = Node<{ node: WorkflowNodeValue; selected: boolean }, "dag">;

function DagNodeView({ data }: NodeProps<DagNode>) {
  const { node, selected } = data;
  return (
    <div
      data-testid={`dag-node-${node.node_name}`}
      data-status={node.status}
      className={cn(
        "flex h-[60px] w-[184px] flex-col justify-center rounded-md border-2 px-3 text-left shadow-sm",
        STATUS_STYLE[node.status],
        selected && "outline outline-2 outline-offset-2 outline-ring",
      )}
    >
      <Handle type="target" position={Position.Top} className="!bg-muted-foreground" />
      <div className="truncate text-sm font-medium">{node.node_name}</div>
      <div className="flex items-center justify-between gap-2 text-[11px]">
        <span className="font-mono">{node.node_type}</span>
        <span className={node.status === "failed" ? "text-destructive" : undefined}>
          {node.status.replace("_", " ")}
        </span>
      </div>
      <Handle type="source" position={Position.Bottom} className="!bg-muted-foreground" />
    </div>
  );
}

const nodeTypes = { dag: DagNodeView };

/** Positions from dagre (top to bottom), computed once per shape: status changes do not move nodes. */
function layout(dag: WorkflowDag): Map<string, { x: number; y: number }> {
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: "TB", nodesep: 28, ranksep: 56 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of dag.nodes) g.setNode(n.id, { width: NODE_W, height: NODE_H });
  for (const e of dag.edges) g.setEdge(e.from_node_id, e.to_node_id);
  dagre.layout(g);
  return new Map(dag.nodes.map((n) => [n.id, { x: g.node(n.id).x - NODE_W / 2, y: g.node(n.id).y - NODE_H / 2 }]));
}

/**
 * The workflow's DAG on React Flow, laid out by dagre: nodes coloured by status, edges styled by
 * type. Clicking a node selects it (the panel beside shows what it did and under whose authority).
 */
export function WorkflowGraph({
  dag,
  selectedId,
  onSelect,
}: {
  dag: WorkflowDag;
  selectedId: string | null;
  onSelect(id: string): void;
}) {
  const { resolvedTheme } = useTheme();
  const shape = `${dag.nodes.map((n) => n.id).join(",")}|${dag.edges.map((e) => e.id).join(",")}`;
  // The layout depends on the shape only: a status change does not move the nodes.
  const positions = useMemo(() => layout(dag), [shape]);
  const nodes: DagNode[] = dag.nodes.map((n) => ({
    id: n.id,
    type: "dag",
    position: positions.get(n.id) ?? { x: 0, y: 0 },
    data: { node: n, selected: n.id === selectedId },
    draggable: false,
    ariaLabel: `${n.node_name} (${n.node_type}): ${n.status}`,
  }));
  const edges: Edge[] = dag.edges.map((e) => {
    const style = edgeStyle(e.edge_type);
    return {
      id: e.id,
      source: e.from_node_id,
      target: e.to_node_id,
      label: EDGE_LABELS[e.edge_type],
      style: { ...style, strokeWidth: 1.5 },
      markerEnd: { type: MarkerType.ArrowClosed, color: style.stroke },
      labelStyle: { fontSize: 11, fill: "var(--foreground)" },
      labelBgStyle: { fill: "var(--card)" },
      animated: dag.nodes.find((n) => n.id === e.to_node_id)?.status === "running",
    };
  });
  return (
    <div className="h-[520px] w-full overflow-hidden rounded-lg border border-border bg-card" data-testid="dag">
      <ReactFlow
        nodes={nodes}
        edges={edges}
        nodeTypes={nodeTypes}
        onNodeClick={(_, n) => onSelect(n.id)}
        fitView
        fitViewOptions={{ padding: 0.15 }}
        minZoom={0.1}
        nodesConnectable={false}
        colorMode={resolvedTheme === "dark" ? "dark" : "light"}
      >
        <Background gap={20} />
        <Controls showInteractive={false} />
      </ReactFlow>
    </div>
  );
}
