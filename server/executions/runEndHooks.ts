import type { Db } from "../db/client";
import { processWide } from "../processWide";

/** How a run ended, as a hook sees it (read the execution itself for its result). */
export interface RunEnd {
  id: string;
  orgDid: string;
  status: "completed" | "failed" | "cancelled";
}

/**
 * What another area does, in the transaction that records a run's end, when a run ends (a
 * workflow's `agent` node settles and its workflow moves on). Executions never import those
 * areas: the composition root (server/areas.ts, `Area.runEndHooks`) registers them here. A hook
 * that ignores runs it did not start should cost one indexed read.
 */
export type RunEndHook = (tx: Db, run: RunEnd) => Promise<void>;

// Shared by every copy of this module in the process (Next.js's bundle and the server's own modules).
const hooks = processWide("executions.runEndHooks", () => new Map<string, RunEndHook>());

/** Registers (or, with the same name, replaces) a hook run at the end of every run. */
export function onRunEnded(name: string, hook: RunEndHook): void {
  hooks.set(name, hook);
}

export async function runRunEndHooks(tx: Db, run: RunEnd): Promise<void> {
  for (const hook of hooks.values()) await hook(tx, run);
}
