"use client";

import dagre from "@dagrejs/dagre";
import {
  Background,
  BaseEdge,
  Controls,
  Handle,
  MarkerType,
  Position,
  ReactFlow,
  useReactFlow,
  useStore,
  type Edge,
  type EdgeProps,
  type Node,
  type NodeProps,
} from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import { useTheme } from "next-themes";
import { useEffect, useMemo } from "react";
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

type Point = { x: number; y: number };
type DagEdge = Edge<{ points: Point[]; labelAt: Point | null; from: string; to: string }, "routed">;

/**
 * A path through dagre's points: straight to the first midpoint, then quadratic curves with each
 * bend point as control and the midpoints as ends (a B-spline of degree 2), so the curve stays
 * inside the polyline's hull and goes around the nodes dagre routed it around.
 */
function pathThrough(points: Point[]): string {
  if (points.length < 2) return "";
  const [first, ...rest] = points;
  if (rest.length === 1) return `M${first!.x},${first!.y} L${rest[0]!.x},${rest[0]!.y}`;
  const mid = (a: Point, b: Point) => ({ x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 });
  let d = `M${first!.x},${first!.y}`;
  let m = mid(first!, rest[0]!);
  d += ` L${m.x},${m.y}`;
  for (let i = 0; i < rest.length - 1; i++) {
    m = mid(rest[i]!, rest[i + 1]!);
    d += ` Q${rest[i]!.x},${rest[i]!.y} ${m.x},${m.y}`;
  }
  const last = rest.at(-1)!;
  return `${d} L${last.x},${last.y}`;
}

/** An edge drawn where dagre routed it (around the nodes), its label where dagre made room for it. */
function RoutedEdge({ id, data, style, markerEnd, label, labelStyle, labelBgStyle }: EdgeProps<DagEdge>) {
  if (!data) return null;
  return (
    <g data-testid="dag-edge" data-from={data.from} data-to={data.to}>
      <BaseEdge
        id={id}
        path={pathThrough(data.points)}
        style={style}
        markerEnd={markerEnd}
        label={label}
        labelX={data.labelAt?.x}
        labelY={data.labelAt?.y}
        labelStyle={labelStyle}
        labelShowBg
        labelBgStyle={labelBgStyle}
        labelBgPadding={[4, 2]}
        labelBgBorderRadius={3}
      />
    </g>
  );
}

const edgeTypes = { routed: RoutedEdge };

/** A label's box as dagre reserves it: 11 px text, about 6.5 px a character, with its padding. */
const labelSize = (text: string | undefined) =>
  text ? { width: Math.ceil(text.length * 6.5) + 10, height: 18, labelpos: "c" } : { width: 0, height: 0 };

interface Layout {
  nodes: Map<string, Point>;
  edges: Map<string, { points: Point[]; labelAt: Point | null }>;
}

/**
 * Positions from dagre (top to bottom), computed once per shape: status changes do not move
 * nodes. Edges keep dagre's route (its points go around nodes: a long edge passes the ranks
 * between through space dagre keeps free), and labelled edges get a box of their own to sit in.
 */
function layout(dag: WorkflowDag): Layout {
  const g = new dagre.graphlib.Graph({ multigraph: true });
  g.setGraph({ rankdir: "TB", nodesep: 36, ranksep: 56, edgesep: 16 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of dag.nodes) g.setNode(n.id, { width: NODE_W, height: NODE_H });
  for (const e of dag.edges) g.setEdge(e.from_node_id, e.to_node_id, labelSize(EDGE_LABELS[e.edge_type]), e.id);
  dagre.layout(g);
  const nodes = new Map(
    dag.nodes.map((n) => [n.id, { x: g.node(n.id).x - NODE_W / 2, y: g.node(n.id).y - NODE_H / 2 }]),
  );
  const edges = new Map(
    dag.edges.map((e) => {
      const routed = g.edge({ v: e.from_node_id, w: e.to_node_id, name: e.id }) as {
        points?: Point[];
        x?: number;
        y?: number;
      };
      const labelAt = EDGE_LABELS[e.edge_type] && routed.x !== undefined ? { x: routed.x, y: routed.y! } : null;
      return [e.id, { points: routed.points ?? [], labelAt }];
    }),
  );
  return { nodes, edges };
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
  const laid = useMemo(() => layout(dag), [shape]);
  const nodes: DagNode[] = dag.nodes.map((n) => ({
    id: n.id,
    type: "dag",
    position: laid.nodes.get(n.id) ?? { x: 0, y: 0 },
    data: { node: n, selected: n.id === selectedId },
    draggable: false,
    ariaLabel: `${n.node_name} (${n.node_type}): ${n.status}`,
  }));
  const nameOf = (id: string) => dag.nodes.find((n) => n.id === id)?.node_name ?? id;
  const edges: DagEdge[] = dag.edges.map((e) => {
    const style = edgeStyle(e.edge_type);
    const route = laid.edges.get(e.id);
    return {
      id: e.id,
      type: "routed",
      source: e.from_node_id,
      target: e.to_node_id,
      data: {
        points: route?.points ?? [],
        labelAt: route?.labelAt ?? null,
        from: nameOf(e.from_node_id),
        to: nameOf(e.to_node_id),
      },
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
        edgeTypes={edgeTypes}
        onNodeClick={(_, n) => onSelect(n.id)}
        fitView
        fitViewOptions={FIT_VIEW}
        minZoom={0.1}
        nodesConnectable={false}
        colorMode={resolvedTheme === "dark" ? "dark" : "light"}
      >
        <Background gap={20} />
        <Controls showInteractive={false} />
        <RefitOnResize />
      </ReactFlow>
    </div>
  );
}

const FIT_VIEW = { padding: 0.15 };

/**
 * `fitView` fits the graph once, at the first render: a pane that changes size afterwards (a phone
 * turned, a window narrowed to 390 px, the sidebar closing) kept the old zoom and cut the graph
 * off. The pane's size is in React Flow's store; each change fits the whole graph again.
 */
function RefitOnResize() {
  const { fitView } = useReactFlow();
  const width = useStore((s) => s.width);
  const height = useStore((s) => s.height);
  useEffect(() => {
    if (width > 0 && height > 0) void fitView(FIT_VIEW);
  }, [width, height, fitView]);
  return null;
}
