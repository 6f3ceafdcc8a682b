import type { inferRouterOutputs } from "@trpc/server";
import { cn } from "@/components/ui/cn";
import { Badge } from "@/components/ui/primitives";
import { Progress } from "@/components/ui/progress";
import { FINAL_EXECUTION_STATUSES } from "@/server/executions/schemas";
import type { AppRouter } from "@/server/appRouter";

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

/**
 * "attempt n/m" as the run's retry budget: a pause for an approval ends an attempt but spends none
 * (the server raises `max_attempts` by one per pause, server/executions/pauseRun.ts), so paused
 * attempts count on neither side.
 */
export function attemptOfBudget(execution: Execution): { attempt: number; max: number | null; pauses: number } {
  const pauses = (execution.attempts ?? []).filter((a) => a.status === "paused").length;
  const current = execution.current_attempt ?? 0;
  // While paused, the current attempt is the paused one: it is the attempt the run goes on with.
  const spent = Math.max(0, current - pauses + (current > 0 && lastIsPaused(execution) ? 1 : 0));
  return { attempt: spent, max: execution.max_attempts == null ? null : execution.max_attempts - pauses, pauses };
}

function lastIsPaused(execution: Execution): boolean {
  const last = execution.attempts?.at(-1);
  return last?.status === "paused" && last.attempt === execution.current_attempt;
}

/**
 * Pretty-printed JSON in a box that scrolls itself (a long line never widens the page); `wrap`
 * breaks long values instead, for a narrow panel where sideways scrolling hides them.
 */
export function JsonBlock({ value, label, wrap }: { value: unknown; label: string; wrap?: boolean }) {
  return (
    <pre
      aria-label={label}
      tabIndex={0}
      className={cn(
        "max-h-72 overflow-auto rounded-md bg-muted p-3 font-mono text-xs focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring",
        wrap && "whitespace-pre-wrap [overflow-wrap:anywhere]",
      )}
    >
      {JSON.stringify(value, null, 2)}
    </pre>
  );
}

export function when(iso: string | null | undefined): string {
  return iso ? new Date(iso).toLocaleString() : "—";
}
