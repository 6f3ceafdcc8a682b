import type { Database } from "../db/client";
import { appendProvenance, awaitIntegrated } from "../provenance/appendProvenance";
import type { ProvenanceEntry } from "../provenance/record";
import { processWide } from "../processWide";
import { logger } from "../telemetry/log";

/**
 * Refusals of callers nobody authenticated (no token, a bad one, an unknown path, a pre-sign-in
 * call refused) are provable without letting anyone on the internet grow the ledger by sending
 * requests. Per window of a minute and per (route class, status): the first refusal gets its own
 * record, as every call does; the others are counted, and once the window has closed one record
 * says how many there were: `resource_type` `refusal_window`, `resource_id`
 * `<window start, ISO 8601>/<refusals in the window, the first included>`, `request_id` the last
 * one's. The ledger thus grows by at most two records a minute per route class and status, however
 * many requests arrive. Counts are per process, kept in memory until the window closes: a process
 * that stops loses the count of its last window (its first refusal is recorded).
 */
const WINDOW_MS = 60_000;

interface Window {
  start: number;
  count: number;
  last: ProvenanceEntry;
}

const state = processWide("governance.anonymousRefusals", () => ({
  windows: new Map<string, Window>(),
  timer: undefined as NodeJS.Timeout | undefined,
  database: undefined as Database | undefined,
}));

/**
 * Records (or counts) a refusal without an authenticated caller. `routeClass` names what the
 * count is kept for when the entry's `operation` carries what the caller chose (an unknown path).
 */
export async function recordAnonymousRefusal(
  db: Database,
  entry: ProvenanceEntry,
  routeClass = entry.operation,
  now = Date.now(),
): Promise<void> {
  const start = now - (now % WINDOW_MS);
  const key = `${routeClass}\n${entry.status}`;
  const open = state.windows.get(key);
  state.database = db;
  if (open && open.start === start) {
    open.count++;
    open.last = { ...entry, operation: routeClass };
    return;
  }
  if (open) await closeWindow(db, key, open);
  state.windows.set(key, { start, count: 1, last: { ...entry, operation: routeClass } });
  state.timer ??= setInterval(() => void flushClosedWindows().catch(() => undefined), WINDOW_MS).unref();
  await appendAndPlace(db, entry);
}

/**
 * Appends a record and waits for its position, as every call's answer does (a few a minute per
 * kind of refusal: the rest are counted in memory). A wait that times out leaves the record
 * committed, to be integrated by the next round.
 */
async function appendAndPlace(db: Database, entry: ProvenanceEntry): Promise<void> {
  const record = await appendProvenance(db, entry);
  await awaitIntegrated(db, [record.id]).catch(() => undefined);
}

/** Appends the count record of every window that has closed (the periodic flush, and tests). */
export async function flushClosedWindows(now = Date.now()): Promise<number> {
  const db = state.database;
  if (!db) return 0;
  const current = now - (now % WINDOW_MS);
  let written = 0;
  for (const [key, window] of [...state.windows]) {
    if (window.start >= current) continue;
    if (await closeWindow(db, key, window)) written++;
  }
  return written;
}

async function closeWindow(db: Database, key: string, window: Window): Promise<boolean> {
  if (state.windows.get(key) === window) state.windows.delete(key);
  if (window.count <= 1) return false;
  // The count record carries no one request's trace.
  const { trace_id: _trace, ...last } = window.last;
  try {
    await appendAndPlace(db, {
      ...last,
      actor_did: null,
      delegation_id: null,
      grantor_did: null,
      resource_type: "refusal_window",
      resource_id: `${new Date(window.start).toISOString()}/${window.count}`,
      decision: "denied",
    });
    return true;
  } catch (e) {
    logger().error({ err: e }, "the count of refusals without a caller could not be recorded");
    return false;
  }
}
