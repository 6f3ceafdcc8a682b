import { database } from "../db/client";
import { currentOutage, outageKind, reportOutage } from "../db/outage";
import { processWide } from "../processWide";
import type { Task } from "../worker/registry";
/**
 * Fixed one-minute windows per key (credential or client address, and route).
 *
 * PostgreSQL: one budget whichever process serves the call. Every process on the database counts
 * in the same row per (key, window), with one statement (INSERT … ON CONFLICT DO UPDATE …
 * RETURNING count) in an UNLOGGED table: no lock is held beyond that row's update, nothing sits
 * between the processes, and a crash at worst restarts a window's count.
 *
 * SQLite: counted in process memory, one set of windows per process whichever copy of this
 * module counts (the /v1 fast path and Next.js's bundle share them). SQLite serves one process (one
 * writer per database file, README: scaling out), so memory is exact there, and a write per call
 * would queue every call, reads included, behind the single write lock.
 */
export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Unix seconds when the window resets. */
  reset: number;
  allowed: boolean;
}

const windows = processWide("http.rateLimitWindows", () => new Map<string, { start: number; count: number }>());
const WINDOW_MS = 60_000;

/** Counts one call against `key`'s budget of `limit` a minute; `allowed` is false once it is spent. */
export async function takeToken(key: string, limit: number, now = Date.now()): Promise<RateLimitState> {
  const start = now - (now % WINDOW_MS);
  const db = await database();
  const count =
    db.engine === "postgresql" ? await countSharedOrHere(db.raw, key, start, limit) : countInMemory(key, start, limit);
  return {
    limit,
    remaining: Math.max(0, limit - count),
    reset: Math.ceil((start + WINDOW_MS) / 1000),
    allowed: count <= limit,
  };
}

/**
 * The shared count, or this process's own while the database does not answer (an outage under
 * way, or the statement fails): the public documents (/v1/health above all, which load balancers
 * poll to learn of the outage) must still answer in their own format, and a call that needs the
 * database meets the outage's 503 further on anyway. The budget is per process for that while.
 */
async function countSharedOrHere(
  raw: { query<T>(sql: string, params?: unknown[]): Promise<T[]> },
  key: string,
  start: number,
  limit: number,
): Promise<number> {
  if (currentOutage()) return countInMemory(key, start, limit);
  try {
    return await countShared(raw, key, start);
  } catch (e) {
    const kind = outageKind(e);
    if (!kind) throw e;
    reportOutage(kind, e);
    return countInMemory(key, start, limit);
  }
}

/** The call's place in its window, this one included (past the limit it goes on counting: refused calls count too). */
async function countShared(
  raw: { query<T>(sql: string, params?: unknown[]): Promise<T[]> },
  key: string,
  start: number,
): Promise<number> {
  const rows = await raw.query<{ count: number }>(
    `INSERT INTO "rate_limit_window" ("key","window_start","count") VALUES ($1,$2,1)
     ON CONFLICT ("key","window_start") DO UPDATE SET "count" = "rate_limit_window"."count" + 1
     RETURNING "count"`,
    [key, start],
  );
  return Number(rows[0]!.count);
}

/** The same count in memory; a refused call is not counted (the window's count stays at the limit). */
function countInMemory(key: string, start: number, limit: number): number {
  let w = windows.get(key);
  if (!w || w.start !== start) {
    if (windows.size > 100_000) for (const [k, v] of windows) if (v.start !== start) windows.delete(k);
    w = { start, count: 0 };
    windows.set(key, w);
  }
  if (w.count < limit) return ++w.count;
  return limit + 1;
}

/** The worker's sweep of PostgreSQL's past windows (the current and the previous minute stay). */
export const rateLimitSweep: Task = {
  name: "http.rateLimitSweep",
  everyMs: WINDOW_MS,
  async run(db) {
    if (db.engine !== "postgresql") return 0;
    await db.raw.execute(`DELETE FROM "rate_limit_window" WHERE "window_start" < $1`, [Date.now() - 2 * WINDOW_MS]);
    // Not logged: the rows are counters, not work.
    return 0;
  },
};

export function rateLimitHeaders(s: RateLimitState): Record<string, string> {
  return {
    "X-RateLimit-Limit": String(s.limit),
    "X-RateLimit-Remaining": String(s.remaining),
    "X-RateLimit-Reset": String(s.reset),
  };
}
