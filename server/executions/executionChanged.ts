import { notifyChange, publish } from "../db/changes";
import type { Db } from "../db/client";

/** The change channel of executions (server/db/changes.ts), which the console's live views follow. */
export const EXECUTIONS_CHANNEL = "executions";

/** Tells the live views, once `tx` commits, that an execution's state, progress, logs or callback changed. */
export function executionChanged(tx: Db, e: { id: string; orgDid: string }): void {
  notifyChange(tx, { channel: EXECUTIONS_CHANNEL, org: e.orgDid, id: e.id });
}

/** The same for a write already committed outside a transaction (the run's raw start and telemetry). */
export function executionChangedNow(e: { id: string; orgDid: string }): void {
  publish({ channel: EXECUTIONS_CHANNEL, org: e.orgDid, id: e.id });
}
