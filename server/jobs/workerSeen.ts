import type { Database, Db } from "../db/client";

/**
 * When a claim loop of any process last polled the queue, kept in `service_state` so that a web
 * process running no worker (SVC_IN_PROCESS_WORKER=0) can tell queued work that nobody will run
 * from work about to run. The in-memory heartbeat (heartbeat.ts) only knows this process's loops.
 */
const WORKER_SEEN_KEY = "jobs.worker_seen_at";

/**
 * How often a claim loop records that it is alive. The overview's question is "has a worker run in
 * the last minutes", so a write every 15 s per loop is plenty, where the poll ticks every second.
 */
export const WORKER_SEEN_EVERY_MS = 15_000;

/** A claim loop seen this long ago, or longer, is taken for gone (four missed records). */
export const WORKER_GONE_AFTER_MS = 4 * WORKER_SEEN_EVERY_MS;

/**
 * Records that a claim loop is alive at `now`. The time only moves forward: with several worker
 * processes, one whose clock or write lags never hides a later record of another.
 */
export async function recordWorkerSeen(db: Database, now = new Date()): Promise<void> {
  await db.writeLock(() =>
    db.raw.execute(
      `INSERT INTO "service_state" ("key","value","updated_at") VALUES ($1, $2, $3)
       ON CONFLICT ("key") DO UPDATE SET "value" = excluded."value", "updated_at" = excluded."updated_at"
       WHERE "service_state"."value" < excluded."value"`,
      // ISO 8601 in UTC with milliseconds: its text order is its time order, on both engines.
      [WORKER_SEEN_KEY, now.toISOString(), now],
    ),
  );
}

/** When a claim loop of any process was last seen, or null if none ever ran on this database. */
export async function workerLastSeen(db: Db): Promise<Date | null> {
  const row = await db.serviceState.findUnique({ where: { key: WORKER_SEEN_KEY } });
  return row ? new Date(row.value) : null;
}
