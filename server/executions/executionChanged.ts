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

/**
 * The change channel a worker running an execution follows (server/executions/watchRunEnd.ts): the
 * execution was ended from outside while it may be running (a cancel, a revoked chain). Its own
 * channel, so that the run's telemetry, announced on EXECUTIONS_CHANNEL every flush, costs it no read.
 */
export const EXECUTION_STOPS_CHANNEL = "execution_stops";

/** Tells the worker running `e`, once `tx` commits and in whichever process, that it must stop. */
export function executionStopped(tx: Db, e: { id: string; orgDid: string }): void {
  notifyChange(tx, { channel: EXECUTION_STOPS_CHANNEL, org: e.orgDid, id: e.id });
}
