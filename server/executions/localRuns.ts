import type { SandboxRun } from "../sandbox/pool";

/**
 * The sandbox runs of this process, by execution id, so that a cancel or a revocation committed
 * here stops its run at once. Runs held by other processes notice within POLL_MS (runExecution).
 */
const slot = globalThis as typeof globalThis & { __svcExecutionRuns?: Map<string, SandboxRun> };
export const localRuns = (slot.__svcExecutionRuns ??= new Map());

export function stopLocalRun(executionId: string, code: string): void {
  localRuns.get(executionId)?.cancel(code);
}
