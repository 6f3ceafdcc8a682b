import type { Database, Db } from "../db/client";
import { sqliteTimestamp, type RawQueryable } from "../db/raw";
import { domainError } from "../errors";
import { sealRecord, type ProvenanceEntry, type ProvenanceRecord } from "../provenance/record";

/**
 * The ledger's integrator: the one global critical section of the ledger. A governed call commits
 * its record into `ledger_pending` with no position and no lock; the integrator, one at a time
 * (PostgreSQL: `pg_try_advisory_xact_lock`, whoever gets it integrates and the others leave;
 * SQLite: the process's write lock), takes pending records in arrival order, gives each the next
 * leaf index, seals it (the leaf bytes include `seq`), inserts it into `provenance_record` and
 * deletes it from `ledger_pending`, all in one transaction per batch. Positions are dense from 0 in
 * integration order.
 *
 * It runs when a caller waits for its record (`awaitIntegrated`, kicked right after commit), and as
 * a worker task (ledger/tasks.ts), so a record left pending by a crash is integrated on restart.
 */
const INTEGRATOR_LOCK = 0x5376_4c67; // "SvLg", the lock every write used to take
const BATCH = 500;
const WAIT_MS = Number(process.env.SVC_LEDGER_WAIT_MS || 5000);

const COLUMNS = `"id","seq","timestamp","org_did","actor_did","delegation_id","grantor_did","capability","operation","resource_type","resource_id","decision","status","request_hash","request_id","leaf_hash","trace_id"`;

interface PendingRow {
  id: string;
  timestamp: string | Date;
  org_did: string;
  actor_did: string | null;
  delegation_id: string | null;
  grantor_did: string | null;
  capability: string | null;
  operation: string;
  resource_type: string | null;
  resource_id: string | null;
  decision: string;
  status: number | string;
  request_hash: string;
  request_id: string;
  trace_id: string | null;
}

/** What one batch did: records integrated, or `busy` when another integrator holds the lock. */
export interface IntegrationBatch {
  integrated: number;
  busy: boolean;
  /** Time inside the critical section (ms), for the bench. */
  heldMs: number;
}

/** Integrates one batch of pending records (at most `BATCH`). */
export async function integrateBatch(db: Database, limit = BATCH): Promise<IntegrationBatch> {
  return db.writeLock(() =>
    db.raw.transaction(async (q) => {
      if (db.engine === "postgresql") {
        const [got] = await q.query<{ ok: boolean }>(`SELECT pg_try_advisory_xact_lock(${INTEGRATOR_LOCK}) AS "ok"`);
        if (!got?.ok) return { integrated: 0, busy: true, heldMs: 0 };
      }
      const started = performance.now();
      const pending = await q.query<PendingRow>(
        `SELECT * FROM "ledger_pending" ORDER BY "timestamp", "id" LIMIT ${limit}`,
      );
      if (pending.length === 0) return { integrated: 0, busy: false, heldMs: performance.now() - started };
      const [{ next }] = (await q.query<{ next: number | string }>(
        `SELECT COALESCE(MAX("seq") + 1, 0) AS "next" FROM "provenance_record"`,
      )) as [{ next: number | string }];
      const sealed = pending.map((p, i) => sealRecord(entryOf(p), p.id, Number(next) + i, new Date(p.timestamp)));
      await insertRecords(q, db.engine, sealed);
      for (let i = 0; i < pending.length; i += 300) {
        const ids = pending.slice(i, i + 300).map((p) => p.id);
        await q.execute(
          `DELETE FROM "ledger_pending" WHERE "id" IN (${ids.map((_, k) => `$${k + 1}`).join(",")})`,
          ids,
        );
      }
      return { integrated: pending.length, busy: false, heldMs: performance.now() - started };
    }),
  );
}

function entryOf(p: PendingRow): ProvenanceEntry {
  return {
    org_did: p.org_did,
    actor_did: p.actor_did,
    delegation_id: p.delegation_id,
    grantor_did: p.grantor_did,
    capability: p.capability,
    operation: p.operation,
    resource_type: p.resource_type,
    resource_id: p.resource_id,
    decision: p.decision as ProvenanceEntry["decision"],
    status: Number(p.status),
    request_hash: p.request_hash,
    request_id: p.request_id,
    ...(p.trace_id ? { trace_id: p.trace_id } : {}),
  };
}

async function insertRecords(q: RawQueryable, engine: Database["engine"], records: ProvenanceRecord[]): Promise<void> {
  for (let i = 0; i < records.length; i += 100) {
    const chunk = records.slice(i, i + 100);
    const values = chunk
      .map((_, j) => `(${Array.from({ length: 17 }, (_, k) => `$${j * 17 + k + 1}`).join(",")})`)
      .join(",");
    await q.execute(
      `INSERT INTO "provenance_record" (${COLUMNS}) VALUES ${values}`,
      chunk.flatMap((r) => {
        const ts = new Date(r.timestamp);
        return [
          r.id,
          r.seq,
          engine === "sqlite" ? sqliteTimestamp(ts) : ts,
          r.org_did,
          r.actor_did,
          r.delegation_id,
          r.grantor_did,
          r.capability,
          r.operation,
          r.resource_type,
          r.resource_id,
          r.decision,
          r.status,
          r.request_hash,
          r.request_id,
          r.leaf_hash,
          r.trace_id ?? null,
        ];
      }),
    );
  }
}

/** Integrates until nothing is pending (or another integrator holds the lock). */
export async function integratePending(db: Database): Promise<number> {
  return (await drainPending(db)).integrated;
}

/** Integrates until nothing is pending; `busy` when another integrator held the lock. */
async function drainPending(db: Database): Promise<{ integrated: number; busy: boolean }> {
  let integrated = 0;
  for (;;) {
    const batch = await integrateBatch(db);
    integrated += batch.integrated;
    if (batch.busy || batch.integrated < BATCH) return { integrated, busy: batch.busy };
  }
}

// One integration at a time per process: callers that arrive while one runs share the next.
type Drained = { integrated: number; busy: boolean };
const running = new WeakMap<Database, { current: Promise<Drained>; next?: Promise<Drained> }>();

/** Starts (or joins) an integration run in this process. */
export function kickIntegrator(db: Database): Promise<number> {
  return drainAfterNow(db).then((d) => d.integrated);
}

/**
 * An integration run that starts after this call (so after the caller's commit): when it drained
 * the pending table without meeting another process's integrator, every record committed before
 * the call has its position and the caller need not read `ledger_pending` to know it.
 */
function drainAfterNow(db: Database): Promise<Drained> {
  const state = running.get(db);
  if (!state) {
    const current = drainPending(db).finally(() => running.delete(db));
    running.set(db, { current });
    return current;
  }
  // A run in progress may have read the pending table before this caller's record committed.
  state.next ??= state.current.catch(() => null).then(() => drainAfterNow(db));
  return state.next;
}

/**
 * Resolves once every record in `ids` has its position (is in `provenance_record`). Kicks the
 * integrator; when another process holds it, polls briefly. After `SVC_LEDGER_WAIT_MS` (5 s) it
 * throws a 503 with Retry-After: the records are committed and will be integrated, only not yet.
 */
export async function awaitIntegrated(db: Database, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  const deadline = Date.now() + WAIT_MS;
  for (let delay = 1; ; delay = Math.min(delay * 2, 50)) {
    const run = await drainAfterNow(db);
    if (!run.busy) return; // a run that began after the commit drained everything pending
    const left = await db.raw.query<{ id: string }>(
      `SELECT "id" FROM "ledger_pending" WHERE "id" IN (${ids.map((_, i) => `$${i + 1}`).join(",")})`,
      ids,
    );
    if (left.length === 0) return;
    if (Date.now() >= deadline)
      throw domainError(
        "database_unavailable",
        "The ledger has not yet given this record its position; it is committed and will be. Retry in 1 s.",
        { headers: { "Retry-After": "1" } },
      );
    await new Promise((r) => setTimeout(r, delay));
  }
}

/**
 * The leaf index of each record in `ids` that has one (integrated), for rows that point at a
 * record committed with them (an event) and so could not store its position when written.
 */
export async function leafIndexes(db: Db, ids: string[]): Promise<Map<string, number>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const rows = await db.provenanceRecord.findMany({ where: { id: { in: unique } }, select: { id: true, seq: true } });
  return new Map(rows.map((r) => [r.id, Number(r.seq)]));
}

/**
 * Before an answer that shows positions (a record, a proof, a list, an export): the records
 * committed so far get theirs first. Cheap when nothing is pending (one indexed read).
 */
export async function settleLedger(db: Database): Promise<void> {
  const left = await db.raw.query<{ id: string }>(
    `SELECT "id" FROM "ledger_pending" ORDER BY "timestamp" DESC LIMIT 1`,
  );
  if (left.length > 0) await awaitIntegrated(db, [left[0]!.id]);
}
