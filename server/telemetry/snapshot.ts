import { database } from "../db/client";
import { processWide } from "../processWide";

/**
 * What the database-derived gauges show, read at scrape time by a few aggregate queries over the
 * raw driver (read-only; one GROUP BY per table, or an indexed MAX / ORDER BY … LIMIT 1) and kept
 * `SNAPSHOT_TTL_MS`, so that several scrapers, or a scrape every second, cost the database one
 * round of queries per TTL. The areas' services stay the only writers of these tables: this module
 * only counts, the way the ledger's export reads the records.
 *
 * Deployment-wide: with several processes on PostgreSQL every one reports the same values.
 */
export interface DatabaseSnapshot {
  jobs: { kind: string; state: string; count: number }[];
  oldestDue: { kind: string; ageSeconds: number }[];
  executions: { status: string; count: number }[];
  approvalsPending: number;
  spend: { provider: string; usd: number }[];
  ledgerRecords: number;
  checkpoint: { treeSize: number; ageSeconds: number } | undefined;
  /** This process's connections (not cached). */
  pool: { total: number; idle: number; waiting: number };
}

export const SNAPSHOT_TTL_MS = 5000;
const SNAPSHOT_WAIT_MS = 2000;

const cache = processWide("telemetry.databaseSnapshot", () => ({
  at: 0,
  pending: undefined as Promise<Omit<DatabaseSnapshot, "pool"> | undefined> | undefined,
}));

/** The snapshot, at most `SNAPSHOT_TTL_MS` old; undefined while the database does not answer. */
export async function databaseSnapshot(): Promise<DatabaseSnapshot | undefined> {
  const now = Date.now();
  if (!cache.pending || now - cache.at >= SNAPSHOT_TTL_MS) {
    cache.at = now;
    // A database that does not answer must not hold the scrape (the process's own counters still
    // answer): after SNAPSHOT_WAIT_MS the database gauges are left out and svc_database_up is 0.
    cache.pending = Promise.race([
      readSnapshot(),
      new Promise<undefined>((resolve) => setTimeout(resolve, SNAPSHOT_WAIT_MS, undefined).unref()),
    ]).catch(() => undefined);
  }
  const counted = await cache.pending;
  if (!counted) return undefined;
  return { ...counted, pool: (await database()).connections() };
}

/** Forget the cached snapshot (tests that make a change and scrape at once). */
export function forgetSnapshot(): void {
  cache.pending = undefined;
}

async function readSnapshot(): Promise<Omit<DatabaseSnapshot, "pool">> {
  const db = await database();
  const now = new Date();
  const q = db.raw;
  const [jobs, executions, approvals, spend, ledger, checkpoint] = await Promise.all([
    q.query<{ kind: string; state: string; n: number | string; oldest: string | Date | null }>(
      `SELECT "kind", "state", COUNT(*) AS "n",
         MIN(CASE WHEN "state" = 'queued' AND "available_at" <= $1 THEN "available_at" END) AS "oldest"
       FROM "job" GROUP BY "kind", "state"`,
      [now],
    ),
    q.query<{ status: string; n: number | string }>(
      `SELECT "status", COUNT(*) AS "n" FROM "async_execution" GROUP BY "status"`,
    ),
    q.query<{ n: number | string }>(`SELECT COUNT(*) AS "n" FROM "approval_request" WHERE "status" = 'pending'`),
    q.query<{ provider: string | null; usd: number | string | null }>(
      `SELECT "provider", SUM("cost_usd") AS "usd" FROM "reasoning_call" GROUP BY "provider"`,
    ),
    q.query<{ seq: number | string | null }>(`SELECT MAX("seq") AS "seq" FROM "provenance_record"`),
    q.query<{ tree_size: number | string; created_at: string | Date }>(
      `SELECT "tree_size", "created_at" FROM "ledger_checkpoint" ORDER BY "tree_size" DESC LIMIT 1`,
    ),
  ]);
  const ageOf = (t: string | Date) => Math.max(0, (now.getTime() - new Date(t).getTime()) / 1000);
  const kinds = [...new Set(jobs.map((j) => j.kind))];
  return {
    jobs: jobs.map((j) => ({ kind: j.kind, state: j.state, count: Number(j.n) })),
    oldestDue: kinds.map((kind) => {
      const oldest = jobs.find((j) => j.kind === kind && j.oldest !== null)?.oldest;
      return { kind, ageSeconds: oldest ? ageOf(oldest) : 0 };
    }),
    executions: executions.map((e) => ({ status: e.status, count: Number(e.n) })),
    approvalsPending: Number(approvals[0]?.n ?? 0),
    spend: spend.map((s) => ({ provider: s.provider ?? "none", usd: Number(s.usd ?? 0) })),
    ledgerRecords: ledger[0]?.seq === null || ledger[0]?.seq === undefined ? 0 : Number(ledger[0].seq) + 1,
    checkpoint: checkpoint[0] && {
      treeSize: Number(checkpoint[0].tree_size),
      ageSeconds: ageOf(checkpoint[0].created_at),
    },
  };
}
