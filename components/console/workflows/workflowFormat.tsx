import type { inferRouterOutputs } from "@trpc/server";
import { Badge } from "@/components/ui/primitives";
import type { AppRouter } from "@/server/appRouter";

export type WorkflowDag = inferRouterOutputs<AppRouter>["workflows"]["get"];
export type WorkflowNodeValue = WorkflowDag["nodes"][number];
export type WorkflowSummaryValue = inferRouterOutputs<AppRouter>["workflows"]["list"]["data"][number];

const WORKFLOW_TONES = { running: "primary", completed: "success", failed: "danger", cancelled: "warning" } as const;
export const NODE_TONES = {
  pending: "neutral",
  running: "primary",
  waiting_approval: "warning",
  completed: "success",
  failed: "danger",
  skipped: "neutral",
} as const;

export function WorkflowStatusBadge({ status }: { status: string | undefined }) {
  const tone = WORKFLOW_TONES[(status ?? "running") as keyof typeof WORKFLOW_TONES] ?? "neutral";
  return <Badge tone={tone}>{status ?? "running"}</Badge>;
}

export function NodeStatusBadge({ status }: { status: WorkflowNodeValue["status"] }) {
  return <Badge tone={NODE_TONES[status]}>{status.replace("_", " ")}</Badge>;
}

/** Completed of total, with the failed and running counts when there are any. */
export function StatsLine({ stats }: { stats: WorkflowDag["stats"] }) {
  return (
    <span className="whitespace-nowrap text-xs tabular-nums" data-testid="workflow-stats">
      {stats.completed}/{stats.total_nodes} done
      {stats.running ? <span className="text-primary"> · {stats.running} running</span> : null}
      {stats.failed ? <span className="text-destructive"> · {stats.failed} failed</span> : null}
      {stats.skipped ? <span className="text-muted-foreground"> · {stats.skipped} skipped</span> : null}
    </span>
  );
}

export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "—";
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}
