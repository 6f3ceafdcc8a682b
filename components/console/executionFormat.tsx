import type { inferRouterOutputs } from "@trpc/server";
import { Badge } from "@/components/ui/primitives";
import { Progress } from "@/components/ui/progress";
import { FINAL_EXECUTION_STATUSES } from "@/server/executions/schemas";
import type { AppRouter } from "@/server/trpc/root";

export type Execution = inferRouterOutputs<AppRouter>["executions"]["get"];

/** Polling period while something runs: fast enough for a bar to move, stopped once all have ended. */
export const LIVE_MS = 500;

export function isLive(status: string): boolean {
  return !(FINAL_EXECUTION_STATUSES as readonly string[]).includes(status);
}

const TONES = {
  queued: "neutral",
  processing: "primary",
  completed: "success",
  failed: "danger",
  cancelled: "warning",
} as const;

export function ExecutionStatusBadge({ status }: { status: Execution["status"] }) {
  return <Badge tone={TONES[status]}>{status}</Badge>;
}

/** The bar and its figure; a failed or cancelled run keeps the progress it reached, in its colour. */
export function ExecutionProgress({ execution, className }: { execution: Execution; className?: string }) {
  const value = execution.progress_percent ?? 0;
  const tone =
    execution.status === "completed"
      ? "success"
      : execution.status === "failed"
        ? "danger"
        : execution.status === "cancelled"
          ? "neutral"
          : "primary";
  return (
    <div className={className}>
      <div className="flex items-center gap-2">
        <Progress value={value} tone={tone} label={`Progress of ${execution.id}`} className="min-w-24 flex-1" />
        <span className="w-10 text-right text-xs tabular-nums" data-testid="progress-percent">
          {value} %
        </span>
      </div>
      {execution.progress_message ? (
        <div className="mt-0.5 truncate text-xs text-muted-foreground">{execution.progress_message}</div>
      ) : null}
    </div>
  );
}

/** Pretty-printed JSON in a box that scrolls itself (a long line never widens the page). */
export function JsonBlock({ value, label }: { value: unknown; label: string }) {
  return (
    <pre
      aria-label={label}
      tabIndex={0}
      className="max-h-72 overflow-auto rounded-md bg-muted p-3 font-mono text-xs focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring"
    >
      {JSON.stringify(value, null, 2)}
    </pre>
  );
}

export function when(iso: string | null | undefined): string {
  return iso ? new Date(iso).toLocaleString() : "—";
}
