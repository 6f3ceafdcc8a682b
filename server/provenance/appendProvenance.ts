import { isInfrastructureError } from "../db/outage";
import type { Database, Db } from "../db/client";
import { forEngine, sqliteTimestamp } from "../db/raw";
import { newId } from "../ids";
import { sealRecord, type ProvenanceEntry, type ProvenanceRecord } from "./record";
import { processWide } from "../processWide";

/**
 * The ledger's append path. Every record gets the next leaf index (`seq`) in commit order, on
 * both engines and across processes: on PostgreSQL the appending transaction takes the ledger's
 * advisory lock just before it commits; SQLite has one writer at a time anyway.
 *
 * Two ways in: `appendInTransaction` for a call that writes (its record commits or rolls back
 * with the call's own writes), and `appendProvenance` for reads and refusals, which group-commits
 * the records of concurrent calls in one transaction so a read costs one shared insert.
 */
const LEDGER_LOCK = 0x5376_4c67; // "SvLg"

const COLUMNS = `"id","seq","timestamp","org_did","actor_did","delegation_id","grantor_did","capability","operation","resource_type","resource_id","decision","status","request_hash","request_id","leaf_hash"`;

function row(r: ProvenanceRecord, engine: Database["engine"]): unknown[] {
  const ts = new Date(r.timestamp);
  return [r.id, r.seq, engine === "sqlite" ? sqliteTimestamp(ts) : ts, r.org_did, r.actor_did, r.delegation_id, r.grantor_did, r.capability, r.operation, r.resource_type, r.resource_id, r.decision, r.status, r.request_hash, r.request_id, r.leaf_hash];
}

/** Appends a call's record inside the call's own write transaction. */
export async function appendInTransaction(tx: Db, engine: Database["engine"], entry: ProvenanceEntry): Promise<ProvenanceRecord> {
  if (engine === "postgresql") await tx.$queryRawUnsafe(`SELECT pg_advisory_xact_lock(${LEDGER_LOCK})::text`);
  const [{ next }] = (await tx.$queryRawUnsafe<{ next: bigint | number }[]>(`SELECT COALESCE(MAX("seq") + 1, 0) AS "next" FROM "provenance_record"`)) as [{ next: bigint | number }];
  const record = sealRecord(entry, newId("prv"), Number(next), new Date());
  await tx.$executeRawUnsafe(...forEngine(engine, `INSERT INTO "provenance_record" (${COLUMNS}) VALUES (${placeholders(16, 0)})`, row(record, engine)));
  return record;
}

function placeholders(n: number, offset: number): string {
  return Array.from({ length: n }, (_, i) => `$${offset + i + 1}`).join(",");
}

interface Pending {
  entry: ProvenanceEntry;
  resolve: (r: ProvenanceRecord) => void;
  reject: (e: unknown) => void;
}

const queues = processWide("provenance.readRecordQueues", () => new WeakMap<Database, { pending: Pending[]; flushing: boolean }>());
const MAX_BATCH = 500;

/** Appends a record for a call that wrote nothing else, batched with concurrent calls. Resolves once committed. */
export function appendProvenance(db: Database, entry: ProvenanceEntry): Promise<ProvenanceRecord> {
  let q = queues.get(db);
  if (!q) {
    q = { pending: [], flushing: false };
    queues.set(db, q);
  }
  const queue = q;
  return new Promise((resolve, reject) => {
    queue.pending.push({ entry, resolve, reject });
    if (!queue.flushing) {
      queue.flushing = true;
      setImmediate(() => void flush(db, queue));
    }
  });
}

async function flush(db: Database, queue: { pending: Pending[]; flushing: boolean }): Promise<void> {
  while (queue.pending.length > 0) {
    const batch = queue.pending.splice(0, MAX_BATCH);
    try {
      const records = await insertBatch(db, batch);
      batch.forEach((p, i) => p.resolve(records[i]!));
    } catch (e) {
      // One bad entry must not sink the others: retry each on its own. Not in an outage: it fails
      // them all alike (503), and one by one they would only queue behind it, for seconds.
      if (batch.length === 1 || isInfrastructureError(e)) batch.forEach((p) => p.reject(e));
      else
        for (const p of batch) {
          try {
            p.resolve((await insertBatch(db, [p]))[0]!);
          } catch (single) {
            p.reject(single);
          }
        }
    }
  }
  queue.flushing = false;
}

function insertBatch(db: Database, batch: Pending[]): Promise<ProvenanceRecord[]> {
  // The raw driver's transaction takes SQLite's write lock itself.
  return db.raw.transaction(async (q) => {
    if (db.engine === "postgresql") await q.query(`SELECT pg_advisory_xact_lock(${LEDGER_LOCK})::text`);
    const [{ next }] = (await q.query<{ next: number | string }>(`SELECT COALESCE(MAX("seq") + 1, 0) AS "next" FROM "provenance_record"`)) as [{ next: number | string }];
    const now = new Date();
    const sealed = batch.map((p, i) => sealRecord(p.entry, newId("prv"), Number(next) + i, now));
    // One multi-row INSERT per chunk (SQLite allows 32766 parameters, PostgreSQL 65535).
    for (let i = 0; i < sealed.length; i += 100) {
      const chunk = sealed.slice(i, i + 100);
      const values = chunk.map((_, j) => `(${placeholders(16, j * 16)})`).join(",");
      await q.execute(`INSERT INTO "provenance_record" (${COLUMNS}) VALUES ${values}`, chunk.flatMap((r) => row(r, db.engine)));
    }
    return sealed;
  });
}
