import { statfsSync } from "node:fs";
import { logger } from "../telemetry/log";

/**
 * Database outages: telling a failure of the database (it went away, refuses connections, is
 * full) from a bug of svc, and keeping track of one while it lasts.
 *
 * Such an error is not svc's fault and says nothing about the call that met it: /v1 answers it
 * 503 (`database_unavailable`, `storage_full`) with `Retry-After`, a job that met it is tried
 * again without spending an attempt, and the outage is logged once when it starts and once when
 * it ends instead of as an incident per request.
 */
export type OutageKind = "database_unavailable" | "storage_full";

// PostgreSQL SQLSTATEs: class 08 (connection exception) and 57P01–57P03 (admin shutdown, crash
// shutdown, cannot connect now), 53300 (too many connections), 55000 when the database does not
// accept connections (ALTER DATABASE … ALLOW_CONNECTIONS false); 53100 is a full disk.
const UNAVAILABLE_STATES = new Set(["57P01", "57P02", "57P03", "53300"]);
const FULL_STATES = new Set(["53100", "SQLITE_FULL"]);
// Node's socket errors and SQLite's busy database (another process holding the write lock past the timeout).
const UNAVAILABLE_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "EPIPE",
  "ETIMEDOUT",
  "ENOTFOUND",
  "EHOSTUNREACH",
  "SQLITE_BUSY",
  "SQLITE_BUSY_SNAPSHOT",
  "SQLITE_BUSY_RECOVERY",
  "SQLITE_IOERR",
  "SQLITE_CANTOPEN",
]);
// Prisma's own codes for an unreachable or lost server and an exhausted pool.
const PRISMA_UNAVAILABLE = new Set(["P1001", "P1002", "P1008", "P1017", "P2024"]);
// What node-postgres and Prisma's adapters say, without a code, about a connection they lost.
const UNAVAILABLE_MESSAGES =
  /Connection terminated|not queryable|Client was closed|connection error|terminating connection|server closed the connection|not currently accepting connections|the database system is (starting up|shutting down|in recovery mode)|timeout exceeded when trying to connect|Can't reach database server|database is locked|SQLITE_BUSY/i;
const FULL_MESSAGES = /SQLITE_FULL|database or disk is full|No space left on device|could not extend file/i;

/** Whether `error` (or what it wraps) is a database outage, and which: undefined for anything else. */
export function outageKind(error: unknown): OutageKind | undefined {
  const seen = new Set<unknown>();
  const visit = (e: unknown, depth: number): OutageKind | undefined => {
    if (e === null || typeof e !== "object" || seen.has(e) || depth > 6) return undefined;
    seen.add(e);
    const o = e as {
      code?: unknown;
      originalCode?: unknown;
      message?: unknown;
      cause?: unknown;
      meta?: { driverAdapterError?: unknown };
      kind?: unknown;
    };
    for (const c of [o.code, o.originalCode]) {
      if (typeof c !== "string") continue;
      if (FULL_STATES.has(c) || c.startsWith("SQLITE_FULL")) return "storage_full";
      if (c.startsWith("08") && c.length === 5) return "database_unavailable";
      if (UNAVAILABLE_STATES.has(c) || UNAVAILABLE_CODES.has(c) || PRISMA_UNAVAILABLE.has(c))
        return "database_unavailable";
    }
    if (typeof o.message === "string") {
      if (FULL_MESSAGES.test(o.message)) return "storage_full";
      if (UNAVAILABLE_MESSAGES.test(o.message)) return "database_unavailable";
    }
    return visit(o.cause, depth + 1) ?? visit(o.meta?.driverAdapterError, depth + 1);
  };
  return visit(error, 0);
}

/** An infrastructure error: the database, not the work, failed. Retried, never counted against the work. */
export const isInfrastructureError = (error: unknown): boolean => outageKind(error) !== undefined;

/** How long a client is asked to wait (`Retry-After`, seconds) during each kind of outage. */
export const RETRY_AFTER_SECONDS: Record<OutageKind, number> = { database_unavailable: 1, storage_full: 5 };

interface OutageState {
  kind: OutageKind;
  since: number;
  refused: number;
  probe?: NodeJS.Timeout;
  ended: Promise<void>;
  end: () => void;
}

/**
 * Failures met this soon after an outage ended belong to it: calls that failed before the end was
 * noticed and are answered after it. They are counted, not logged as a new outage.
 */
const TAIL_MS = 1000;

// One outage per process, whichever copy of this module (Next.js's bundle, the server's) meets it.
const slot = globalThis as typeof globalThis & {
  __svcOutage?: {
    current?: OutageState;
    last?: { kind: OutageKind; endedAt: number; state: OutageState };
    log: (line: string) => void;
  };
};
const state = (slot.__svcOutage ??= { log: (line) => logger().warn(line) });

/** Resolves when the outage under way ends (undefined when there is none): work waiting to retry goes at once. */
export function outageEnded(): Promise<void> | undefined {
  return state.current?.ended;
}

/** The outage under way, if any. */
export function currentOutage(): { kind: OutageKind; sinceMs: number } | undefined {
  return state.current && { kind: state.current.kind, sinceMs: state.current.since };
}

/**
 * Notes that a call met an outage of `kind`. The first one starts the outage (logged once) and a
 * probe that ends it (logged once) as soon as the database answers again; the rest are counted.
 */
export function reportOutage(kind: OutageKind, error: unknown): void {
  const now = state.current;
  if (now) {
    now.refused++;
    // A full disk can follow a lost connection (or the reverse): the later kind is what callers meet.
    if (now.kind !== kind) {
      state.log(`database outage: now ${kind} (was ${now.kind})`);
      now.kind = kind;
    }
    return;
  }
  if (state.last && state.last.kind === kind && Date.now() - state.last.endedAt < TAIL_MS) {
    state.last.state.refused++;
    return;
  }
  const message = error instanceof Error ? error.message.trim().split("\n").pop()!.slice(0, 300) : String(error);
  let end!: () => void;
  const ended = new Promise<void>((resolve) => (end = resolve));
  const current: OutageState = { kind, since: Date.now(), refused: 1, ended, end };
  state.current = current;
  state.log(`database outage started (${kind}): ${message}; calls are answered 503 until it ends`);
  let probing = false;
  current.probe = setInterval(() => {
    if (probing || state.current !== current) return;
    probing = true;
    void probeDatabase(current.kind)
      .then(() => endOutage(current))
      .catch(() => undefined)
      .finally(() => (probing = false));
  }, 250);
  current.probe.unref();
}

function endOutage(current: OutageState): void {
  if (state.current !== current) return;
  clearInterval(current.probe);
  state.current = undefined;
  state.last = { kind: current.kind, endedAt: Date.now(), state: current };
  current.end();
  const seconds = ((Date.now() - current.since) / 1000).toFixed(1);
  state.log(`database outage ended after ${seconds} s (${current.kind}; ${current.refused} call(s) met it)`);
}

/** Ends the outage at once (a test, or a process that knows better); a no-op when there is none. */
export function clearOutage(): void {
  if (state.current) endOutage(state.current);
}

/** Where outage lines go (default stderr); returns the previous sink. For tests. */
export function setOutageLog(log: (line: string) => void): (line: string) => void {
  const previous = state.log;
  state.log = log;
  return previous;
}

/**
 * Resolves when the database answers again: a query for a lost connection; for a full disk, a
 * write that needs a new page (rolled back) and room on the file system.
 */
async function probeDatabase(kind: OutageKind): Promise<void> {
  const { database } = await import("./client");
  const db = await database();
  if (kind === "database_unavailable") {
    await db.raw.query("SELECT 1");
    return;
  }
  const rollback = new Error("probe rolled back");
  try {
    await db.raw.transaction(async (q) => {
      await q.execute(`CREATE TABLE "_svc_storage_probe" ("x" TEXT)`);
      await q.execute(`INSERT INTO "_svc_storage_probe" ("x") VALUES ($1)`, ["x".repeat(16_384)]);
      throw rollback;
    });
  } catch (e) {
    if (e !== rollback) throw e;
  }
  if (db.engine === "sqlite") {
    // Room for more than the probe (its size limit, the free pages), so that the outage does not
    // end on the few pages a delete just freed and start again at the next insert.
    const pragma = async (name: string) => Number(Object.values((await db.raw.query(`PRAGMA ${name}`))[0] ?? {})[0]);
    const room = (await pragma("max_page_count")) - (await pragma("page_count")) + (await pragma("freelist_count"));
    if (room < 64) throw new Error(`only ${room} page(s) of room left`);
    const { config } = await import("../config");
    const fs = statfsSync(config().dataDir);
    if (fs.bavail * fs.bsize < 1 << 20) throw new Error("less than 1 MiB free on the database's file system");
  }
}
