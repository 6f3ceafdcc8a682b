import type { Database, Db } from "../db/client";
import { commitBatched, type Batcher } from "../db/groupCommit";
import { forEngine, sqliteTimestamp, type RawQueryable } from "../db/raw";
import { newId } from "../ids";
import { sealRecord, type ProvenanceEntry, type ProvenanceRecord } from "./record";

/**
 * The ledger's append path. Every record gets the next leaf index (`seq`) in commit order, on
 * both engines and across processes: on PostgreSQL the appending transaction takes the ledger's
 * advisory lock just before it commits; SQLite has one writer at a time anyway.
 *
 * Two ways in: `appendInTransaction` for a call that writes (its record commits or rolls back
 * with the call's own writes), and `appendProvenance` for reads and refusals, whose records join
 * the process's group commit (db/groupCommit.ts) so a read costs a share of one insert.
 */
const LEDGER_LOCK = 0x5376_4c67; // "SvLg"

const COLUMNS = `"id","seq","timestamp","org_did","actor_did","delegation_id","grantor_did","capability","operation","resource_type","resource_id","decision","status","request_hash","request_id","leaf_hash"`;

function row(r: ProvenanceRecord, engine: Database["engine"]): unknown[] {
  const ts = new Date(r.timestamp);
  return [r.id, r.seq, engine === "sqlite" ? sqliteTimestamp(ts) : ts, r.org_did, r.actor_did, r.delegation_id, r.grantor_did, r.capability, r.operation, r.resource_type, r.resource_id, r.decision, r.status, r.request_hash, r.request_id, r.leaf_hash];
}

/** Appends a call's record inside the call's own write transaction (under `id` when the caller already points a row at it). */
export async function appendInTransaction(tx: Db, engine: Database["engine"], entry: ProvenanceEntry, id = newId("prv")): Promise<ProvenanceRecord> {
  if (engine === "postgresql") await tx.$queryRawUnsafe(`SELECT pg_advisory_xact_lock(${LEDGER_LOCK})::text`);
  const [{ next }] = (await tx.$queryRawUnsafe<{ next: bigint | number }[]>(`SELECT COALESCE(MAX("seq") + 1, 0) AS "next" FROM "provenance_record"`)) as [{ next: bigint | number }];
  const record = sealRecord(entry, id, Number(next), new Date());
  await tx.$executeRawUnsafe(...forEngine(engine, `INSERT INTO "provenance_record" (${COLUMNS}) VALUES (${placeholders(16, 0)})`, row(record, engine)));
  return record;
}

function placeholders(n: number, offset: number): string {
  return Array.from({ length: n }, (_, i) => `$${offset + i + 1}`).join(",");
}

/** The ledger's batcher: one multi-row INSERT for the read records of a group. */
const readRecords: Batcher<ProvenanceEntry, ProvenanceRecord> = {
  name: "provenance",
  apply: insertBatch,
};

/**
 * Appends a record for a call that wrote nothing else, in the next group commit with concurrent
 * calls (db/groupCommit.ts): a read costs a share of one multi-row insert. Resolves once committed.
 */
export function appendProvenance(db: Database, entry: ProvenanceEntry): Promise<ProvenanceRecord> {
  return commitBatched(db, readRecords, entry);
}

async function insertBatch(q: RawQueryable, engine: Database["engine"], entries: ProvenanceEntry[]): Promise<ProvenanceRecord[]> {
  if (engine === "postgresql") await q.query(`SELECT pg_advisory_xact_lock(${LEDGER_LOCK})::text`);
  const [{ next }] = (await q.query<{ next: bigint | number | string }>(`SELECT COALESCE(MAX("seq") + 1, 0) AS "next" FROM "provenance_record"`)) as [{ next: bigint | number | string }];
  const now = new Date();
  const sealed = entries.map((entry, i) => sealRecord(entry, newId("prv"), Number(next) + i, now));
  // One multi-row INSERT per chunk (SQLite allows 32766 parameters, PostgreSQL 65535).
  for (let i = 0; i < sealed.length; i += 100) {
    const chunk = sealed.slice(i, i + 100);
    const values = chunk.map((_, j) => `(${placeholders(16, j * 16)})`).join(",");
    await q.execute(`INSERT INTO "provenance_record" (${COLUMNS}) VALUES ${values}`, chunk.flatMap((r) => row(r, engine)));
  }
  return sealed;
}
