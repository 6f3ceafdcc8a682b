import type { SandboxRun } from "../sandbox/pool";
import { processWide } from "../processWide";

/**
 * The sandbox runs of this process, by execution id, so that a cancel or a revocation committed
 * here stops its run at once. Runs held by other processes notice within POLL_MS (runExecution).
 */
export const localRuns = processWide("executions.localRuns", () => new Map<string, SandboxRun>());

export function stopLocalRun(executionId: string, code: string): void {
  localRuns.get(executionId)?.cancel(code);
}
