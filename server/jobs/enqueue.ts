import { config } from "../config";
import { afterCommit, type Db, sqlIn } from "../db/client";
import { newId } from "../ids";
import { sqliteTimestamp } from "../db/raw";
import { JOBS_CHANNEL, wakeWorkers } from "./wake";
import { currentTraceparent } from "../telemetry/tracing";

export interface EnqueueOptions {
  /** Not before this time (default: now). */
  runAt?: Date;
  /** Claims allowed before the job is dead-lettered as `failed` (default 3). */
  maxAttempts?: number;
  /** The organization the work is for, so its jobs can be listed or purged with it. */
  orgDid?: string;
  /** A caller-chosen id (e.g. to reference the job from the row it works on); default `job_…`. */
  id?: string;
}

/**
 * Queues background work in the caller's transaction: the job exists exactly when the call that
 * created it (and that call's provenance record) commits. Workers are woken at commit: by a
 * NOTIFY on PostgreSQL (delivered at COMMIT, dropped on ROLLBACK) and in-process on both engines.
 */
export async function enqueue(tx: Db, kind: string, payload: unknown, opts: EnqueueOptions = {}): Promise<string> {
  const [id] = await enqueueMany(tx, kind, [payload], opts);
  return id!;
}

/** Rows per INSERT of `enqueueMany` (8 parameters each: well under both engines' limits). */
const ROWS_PER_INSERT = 200;

/**
 * Queues one job of `kind` per payload, like `enqueue`, in one statement per 200 (a fork's
 * branches: one INSERT, not one per branch). `opts.id` is not allowed with several payloads.
 */
export async function enqueueMany(
  tx: Db,
  kind: string,
  payloads: unknown[],
  opts: EnqueueOptions = {},
): Promise<string[]> {
  const maxAttempts = opts.maxAttempts ?? 3;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1)
    throw new Error(`maxAttempts must be a positive integer, got ${maxAttempts}`);
  if (opts.id !== undefined && payloads.length > 1) throw new Error("enqueueMany takes no id for several jobs");
  if (payloads.length === 0) return [];
  // Raw SQL through the caller's transaction: a third of the CPU of Prisma's `job.create` (every
  // invoke, trigger run and webhook delivery queues one). Timestamps as Prisma stores them.
  const engine = config().engine;
  const now = new Date();
  const at = (d: Date) => (engine === "sqlite" ? sqliteTimestamp(d) : d);
  // The trace of the call queuing it, which the job's run continues (null when not tracing).
  const traceparent = currentTraceparent();
  const ids = payloads.map(() => opts.id ?? newId("job"));
  for (let from = 0; from < payloads.length; from += ROWS_PER_INSERT) {
    const rows = payloads.slice(from, from + ROWS_PER_INSERT);
    const params: unknown[] = [kind, opts.orgDid ?? null, at(opts.runAt ?? now), maxAttempts, at(now), traceparent];
    const values = rows.map((payload, i) => {
      params.push(ids[from + i], JSON.stringify(payload ?? null));
      const n = params.length;
      return `($${n - 1},$1,$2,$${n},'queued',$3,0,$4,$5,$5,$6)`;
    });
    const insert = `INSERT INTO "job" ("id","kind","org_did","payload","state","available_at","attempts","max_attempts","created_at","updated_at","traceparent")
       VALUES ${values.join(",")}`;
    // PostgreSQL: the NOTIFY rides in the same statement (one round trip, not two).
    if (engine === "postgresql")
      await sqlIn(tx, engine).execute(
        `WITH "queued" AS (${insert} RETURNING "kind") SELECT pg_notify('${JOBS_CHANNEL}', "kind") FROM (SELECT DISTINCT "kind" FROM "queued") q`,
        params,
      );
    else await sqlIn(tx, engine).execute(insert, params);
  }
  afterCommit(tx, () => wakeWorkers(kind));
  return ids;
}
