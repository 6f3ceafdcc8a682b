import { config } from "../config";
import { afterCommit, type Db } from "../db/client";
import { newId } from "../ids";
import { JOBS_CHANNEL, wakeWorkers } from "./wake";

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
  const maxAttempts = opts.maxAttempts ?? 3;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) throw new Error(`maxAttempts must be a positive integer, got ${maxAttempts}`);
  const id = opts.id ?? newId("job");
  await tx.job.create({
    data: { id, kind, orgDid: opts.orgDid ?? null, payload: JSON.stringify(payload ?? null), availableAt: opts.runAt ?? new Date(), maxAttempts },
  });
  if (config().engine === "postgresql") await tx.$executeRawUnsafe(`SELECT pg_notify('${JOBS_CHANNEL}', $1)`, kind);
  afterCommit(tx, () => wakeWorkers(kind));
  return id;
}
