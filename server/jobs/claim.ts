import type { Database } from "../db/client";
import type { ClaimedJob } from "./types";

// The engine-specific statements of the queue. Times are the application's clock, bound as
// parameters, so SQLite compares the same ISO strings Prisma writes; on PostgreSQL the workers
// of one deployment are assumed to share a clock (NTP) to well within a lease.

interface ClaimedRow {
  id: string;
  kind: string;
  org_did: string | null;
  payload: string;
  attempts: number;
  max_attempts: number;
  lease_token: string;
  traceparent: string | null;
}

/**
 * The ids of the queued jobs of kind `$4` due at `$5` that a claim of `limit` takes, fairest first:
 * an organization's k-th oldest job ranks k + (its jobs of that kind running now, on any worker),
 * ties by age. One organization that floods the queue therefore gets one job per turn like any
 * other, and one already holding many running jobs waits behind those holding fewer.
 *
 * Cheap whatever the backlog: the organizations with due jobs are found by a loose index scan
 * (one index seek per organization on (state, kind, org_did, available_at)), and only each one's
 * `limit` oldest are ranked, so a claim reads organizations × limit rows, not the queue. Jobs with no
 * organization (platform work) form one group of their own. On PostgreSQL the candidates are locked
 * with SKIP LOCKED, so concurrent workers rank what the others have not taken.
 */
function fairClaimSql(pg: boolean, limit: number): string {
  const due = `"state" = 'queued' AND "kind" = $4 AND "available_at" <= $5`;
  const orgs = `orgs("o") AS (
      SELECT (SELECT "org_did" FROM "job" WHERE ${due} AND "org_did" IS NOT NULL ORDER BY "org_did" LIMIT 1)
      UNION ALL
      SELECT (SELECT "org_did" FROM "job" WHERE ${due} AND "org_did" > orgs."o" ORDER BY "org_did" LIMIT 1)
        FROM orgs WHERE orgs."o" IS NOT NULL)`;
  const candidates = pg
    ? `candidates AS (
      SELECT c."id", c."org_did", c."available_at" FROM orgs CROSS JOIN LATERAL (
        SELECT "id", "org_did", "available_at" FROM "job" WHERE ${due} AND "org_did" = orgs."o"
        ORDER BY "available_at" LIMIT $L FOR UPDATE SKIP LOCKED) c
      UNION ALL
      SELECT * FROM (SELECT "id", "org_did", "available_at" FROM "job" WHERE ${due} AND "org_did" IS NULL
        ORDER BY "available_at" LIMIT $L FOR UPDATE SKIP LOCKED) n)`
    : // SQLite has no LATERAL, and `JOIN "job" c ON c."id" IN (correlated subquery)` scans the
      // whole table once per claim (~0.1 ms per 1,000 jobs of every kind, on every claim of every
      // kind, empty ones too). Instead each organization's `limit`-th oldest due job bounds an index
      // range: one seek for the bound, one range read (ties at the bound may add rows: ranked away).
      `upto AS MATERIALIZED (
      SELECT orgs."o", COALESCE((SELECT "available_at" FROM "job" WHERE ${due} AND "org_did" = orgs."o"
        ORDER BY "available_at" LIMIT 1 OFFSET $L - 1), $5) AS "t"
      FROM orgs WHERE orgs."o" IS NOT NULL),
    candidates AS (
      SELECT c."id", c."org_did", c."available_at" FROM upto CROSS JOIN "job" c
        ON c."state" = 'queued' AND c."kind" = $4 AND c."org_did" = upto."o" AND c."available_at" <= upto."t"
      UNION ALL
      SELECT * FROM (SELECT "id", "org_did", "available_at" FROM "job" WHERE ${due} AND "org_did" IS NULL
        ORDER BY "available_at" LIMIT $L))`;
  return `WITH RECURSIVE ${orgs},
    ${candidates},
    running AS (SELECT "org_did", COUNT(*) AS "n" FROM "job" WHERE "state" = 'running' AND "kind" = $4 GROUP BY "org_did"),
    ranked AS (
      SELECT c."id", c."available_at",
        ROW_NUMBER() OVER (PARTITION BY c."org_did" ORDER BY c."available_at")
          + COALESCE((SELECT r."n" FROM running r WHERE r."org_did" = c."org_did"), 0) AS "share"
      FROM candidates c),
    picked AS (SELECT "id" FROM ranked ORDER BY "share", "available_at" LIMIT $L)`.replaceAll("$L", withLimit(limit));
}

/**
 * The claim's limit as a literal, not a bound parameter: SQLite (built with STAT4, as
 * better-sqlite3 is) lets the value bound to a LIMIT inside a compound query shape the plan, and
 * then prepares the whole statement again at every execution whose bindings changed, which is
 * every claim: about 0.3 ms of CPU each, several times what running the claim costs. A literal
 * keeps one prepared statement per limit (a worker claims at most MAX_BATCH at once).
 */
function withLimit(limit: number): string {
  if (!Number.isSafeInteger(limit) || limit < 1)
    throw new RangeError(`a claim's limit must be a positive integer, got ${limit}`);
  return String(limit);
}

/**
 * Claims up to `limit` queued jobs of `kind` whose time has come, the organizations with fewer
 * running jobs first (see `fairClaimSql`), then oldest first. Each gets a fresh lease token and a
 * lease `leaseMs` long; PostgreSQL skips rows another worker is claiming at the same moment.
 *
 * An attempt counts when the run starts, not when it is claimed: jobs claimed to start now get one
 * more attempt here, jobs claimed ahead of a free slot (`ahead`) get theirs from `startAttempt`
 * when they start. A worker killed while holding jobs it had not started spends none of theirs.
 */
export async function claimJobs(
  db: Database,
  workerId: string,
  kind: string,
  limit: number,
  leaseMs: number,
  { ahead = false }: { ahead?: boolean } = {},
): Promise<Array<ClaimedJob>> {
  const now = new Date();
  const pg = db.engine === "postgresql";
  const sql = `${fairClaimSql(pg, limit)}
    UPDATE "job" SET "state" = 'running', "attempts" = "attempts" + $6, "locked_by" = $1,
      "lease_token" = ${pg ? `md5(random()::text || "id")` : "lower(hex(randomblob(16)))"}, "available_at" = $2, "updated_at" = $3
    WHERE "id" IN (SELECT "id" FROM picked)
    RETURNING "id", "kind", "org_did", "payload", "attempts", "max_attempts", "lease_token", "traceparent"`;
  const params = [workerId, new Date(now.getTime() + leaseMs), now, kind, now, ahead ? 0 : 1];
  const rows = await db.writeLock(() => db.raw.query<ClaimedRow>(sql, params));
  return rows.map((r) => ({
    id: r.id,
    kind: r.kind,
    orgDid: r.org_did,
    payload: JSON.parse(r.payload) as unknown,
    attempts: Number(r.attempts),
    maxAttempts: Number(r.max_attempts),
    leaseToken: r.lease_token,
    workerId,
    traceparent: r.traceparent,
    ...(ahead ? { uncounted: true } : {}),
  }));
}

/**
 * Counts the attempt of a job claimed ahead, as it starts; fenced by its lease token. Returns
 * false when the claim is no longer this worker's.
 */
export async function startAttempt(db: Database, job: ClaimedJob): Promise<boolean> {
  const n = await db.writeLock(() =>
    db.raw.execute(
      `UPDATE "job" SET "attempts" = "attempts" + 1, "updated_at" = $1 WHERE "id" = $2 AND "lease_token" = $3`,
      [new Date(), job.id, job.leaseToken],
    ),
  );
  if (n === 0) return false;
  job.attempts += 1;
  delete job.uncounted;
  return true;
}

/** Extends the leases this worker still holds; returns the `id:token` pairs it still holds. */
export async function extendLeases(db: Database, workerId: string, leaseMs: number): Promise<Set<string>> {
  const now = new Date();
  const rows = await db.writeLock(() =>
    db.raw.query<{ id: string; lease_token: string }>(
      `UPDATE "job" SET "available_at" = $1, "updated_at" = $2 WHERE "locked_by" = $3 AND "state" = 'running' RETURNING "id", "lease_token"`,
      [new Date(now.getTime() + leaseMs), now, workerId],
    ),
  );
  return new Set(rows.map((r) => `${r.id}:${r.lease_token}`));
}

/** Deletes jobs whose handlers returned, each only while its claim is still current. */
export async function deleteFinished(db: Database, jobs: ClaimedJob[]): Promise<number> {
  if (jobs.length === 0) return 0;
  if (db.engine === "postgresql") {
    return db.raw.execute(
      `DELETE FROM "job" WHERE ("id", "lease_token") IN (SELECT * FROM unnest($1::text[], $2::text[]))`,
      [jobs.map((j) => j.id), jobs.map((j) => j.leaseToken)],
    );
  }
  // One statement per 400 jobs (row values: SQLite ≥ 3.15), not one per job.
  return db.writeLock(async () => {
    let n = 0;
    for (let from = 0; from < jobs.length; from += 400) {
      const batch = jobs.slice(from, from + 400);
      const rows = batch.map((_, i) => `($${2 * i + 1}, $${2 * i + 2})`).join(", ");
      n += await db.raw.execute(
        `DELETE FROM "job" WHERE ("id", "lease_token") IN (VALUES ${rows})`,
        batch.flatMap((j) => [j.id, j.leaseToken]),
      );
    }
    return n;
  });
}

/**
 * SQLite runs one process by design, so at its start no job can be running anywhere: every
 * `running` job belonged to a process that died, and is released at once instead of after its lease.
 */
export async function releaseRunningJobs(db: Database): Promise<number> {
  const now = new Date();
  return db.writeLock(() =>
    db.raw.execute(
      `UPDATE "job" SET "state" = 'queued', "available_at" = $1, "updated_at" = $2, "lease_token" = NULL, "locked_by" = NULL WHERE "state" = 'running'`,
      [now, now],
    ),
  );
}

/**
 * Puts back in the queue the jobs whose lease expired (their worker died or lost the database):
 * claimable at once, their lease token void, so the lost worker can no longer settle them.
 * Returns their kinds.
 */
export async function reclaimExpiredJobs(db: Database): Promise<string[]> {
  const now = new Date();
  const rows = await db.writeLock(() =>
    db.raw.query<{ kind: string }>(
      `UPDATE "job" SET "state" = 'queued', "lease_token" = NULL, "locked_by" = NULL, "updated_at" = $1 WHERE "state" = 'running' AND "available_at" <= $2 RETURNING "kind"`,
      [now, now],
    ),
  );
  return rows.map((r) => r.kind);
}

/**
 * Puts a claimed job back in the queue, `delayMs` from now, fenced by its lease token like
 * `finishJob`: returns false when the claim was no longer this worker's. `uncounted` gives the
 * attempt back (the database failed, not the work); otherwise the claim keeps counting.
 */
export async function releaseJob(
  db: Database,
  job: ClaimedJob,
  lastError: string,
  delayMs: number,
  { uncounted }: { uncounted: boolean },
): Promise<boolean> {
  const now = new Date();
  const n = await db.writeLock(() =>
    db.raw.execute(
      `UPDATE "job" SET "state" = 'queued', "attempts" = "attempts" - $1, "available_at" = $2, "last_error" = $3, "lease_token" = NULL, "locked_by" = NULL, "updated_at" = $4
       WHERE "id" = $5 AND "lease_token" = $6`,
      [uncounted ? 1 : 0, new Date(now.getTime() + delayMs), lastError, now, job.id, job.leaseToken],
    ),
  );
  return n > 0;
}

/**
 * Gives back, uncounted, the jobs this worker holds in the database but not in memory: a claim
 * whose answer was lost with its connection (committed, never received). Without this they would
 * sit `running`, their leases extended by this worker's heartbeat, and at last count as an attempt
 * whose worker was lost. `held` lists the ids the worker does hold.
 */
export async function releaseOrphanedClaims(
  db: Database,
  workerId: string,
  held: string[],
  { counted = true }: { counted?: boolean } = {},
): Promise<number> {
  const now = new Date();
  const notHeld = held.length > 0 ? ` AND "id" NOT IN (${held.map((_, i) => `$${i + 3}`).join(", ")})` : "";
  // A lost claim of jobs to run now had counted their attempt; a lost claim-ahead had not.
  return db.writeLock(() =>
    db.raw.execute(
      `UPDATE "job" SET "state" = 'queued', "attempts" = "attempts" - ${counted ? 1 : 0}, "lease_token" = NULL, "locked_by" = NULL, "available_at" = $1, "updated_at" = $1
       WHERE "locked_by" = $2 AND "state" = 'running'${notHeld}`,
      [now, workerId, ...held],
    ),
  );
}
