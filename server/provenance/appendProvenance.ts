import { afterCommit, database, type Database, type Db, sqlIn } from "../db/client";
import { commitBatched, type Batcher } from "../db/groupCommit";
import { sqliteTimestamp, type RawQueryable } from "../db/raw";
import { newId } from "../ids";
import { awaitIntegrated, kickIntegrator } from "../ledger/integrate";
import { currentTraceId } from "../telemetry/tracing";
import type { ProvenanceEntry, ProvenanceRecord } from "./record";

/**
 * The ledger's append path, off any global lock. A record is inserted into `ledger_pending` with
 * its id, fields and timestamp, in the call's own transaction (nothing committed without its
 * record, nothing recorded without its commit); it gets its leaf index (`seq`) and leaf hash later,
 * from the integrator (ledger/integrate.ts), which takes pending records in batches, one
 * integrator at a time. A caller that must show the position waits for it after commit
 * (`awaitIntegrated`).
 *
 * Two ways in: `appendInTransaction` for a call that writes (its record commits or rolls back
 * with the call's own writes), and `appendProvenance` for reads and refusals, whose records join
 * the process's group commit (db/groupCommit.ts) so a read costs a share of one insert.
 */

/** A record as committed, before the integrator gives it a position. */
export type PendingRecord = Omit<ProvenanceRecord, "seq" | "leaf_hash">;

const COLUMNS = `"id","timestamp","org_did","actor_did","delegation_id","grantor_did","capability","operation","resource_type","resource_id","decision","status","request_hash","request_id","trace_id"`;
const WIDTH = 15;

function row(r: PendingRecord, engine: Database["engine"]): unknown[] {
  const ts = new Date(r.timestamp);
  return [
    r.id,
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
    r.trace_id ?? null,
  ];
}

function pending(entry: ProvenanceEntry, id: string, now: Date): PendingRecord {
  return { id, timestamp: now.toISOString(), ...entry };
}

/**
 * Kept for callers that ordered their row locks after the ledger's: there is no ledger lock on
 * the write path any more, so there is nothing to take.
 */
export async function takeLedgerLock(_tx: Db, _engine: Database["engine"]): Promise<void> {}

/** Appends a call's record inside the call's own write transaction (under `id` when the caller already points a row at it). */
export async function appendInTransaction(
  tx: Db,
  engine: Database["engine"],
  entry: ProvenanceEntry,
  id = newId("prv"),
): Promise<PendingRecord> {
  const record = pending(inTrace(entry), id, new Date());
  await sqlIn(tx, engine).execute(
    `INSERT INTO "ledger_pending" (${COLUMNS}) VALUES (${placeholders(WIDTH, 0)})`,
    row(record, engine),
  );
  // Whoever does not wait for the position (a job's service record) still has it given promptly.
  afterCommit(
    tx,
    () =>
      void database()
        .then(kickIntegrator)
        .catch(() => undefined),
  );
  return record;
}

function placeholders(n: number, offset: number): string {
  return Array.from({ length: n }, (_, i) => `$${offset + i + 1}`).join(",");
}

/** The ledger's batcher: one multi-row INSERT for the read records of a group. */
const readRecords: Batcher<ProvenanceEntry, PendingRecord> = {
  name: "provenance",
  apply: insertBatch,
};

/**
 * Appends a record for a call that wrote nothing else, in the next group commit with concurrent
 * calls (db/groupCommit.ts): a read costs a share of one multi-row insert. Resolves once committed
 * and integrated (the record has its position), as it did when the position was taken at commit.
 */
export async function appendProvenance(db: Database, entry: ProvenanceEntry): Promise<PendingRecord> {
  const record = await commitBatched(db, readRecords, inTrace(entry));
  await awaitIntegrated(db, [record.id]);
  return record;
}

/** Waits until the records of `ids` have their positions (see ledger/integrate.ts). */
export { awaitIntegrated };

/**
 * A record written inside a traced span keeps its trace id (a job's run, a delivery), like the
 * governed call's own; taken when appended, not in the group commit that runs it later.
 */
function inTrace(entry: ProvenanceEntry): ProvenanceEntry {
  if (entry.trace_id) return entry;
  const traceId = currentTraceId();
  return traceId ? { ...entry, trace_id: traceId } : entry;
}

async function insertBatch(
  q: RawQueryable,
  engine: Database["engine"],
  entries: ProvenanceEntry[],
): Promise<PendingRecord[]> {
  const now = new Date();
  const records = entries.map((entry) => pending(entry, newId("prv"), now));
  // One multi-row INSERT per chunk (SQLite allows 32766 parameters, PostgreSQL 65535).
  for (let i = 0; i < records.length; i += 100) {
    const chunk = records.slice(i, i + 100);
    const values = chunk.map((_, j) => `(${placeholders(WIDTH, j * WIDTH)})`).join(",");
    await q.execute(
      `INSERT INTO "ledger_pending" (${COLUMNS}) VALUES ${values}`,
      chunk.flatMap((r) => row(r, engine)),
    );
  }
  return records;
}
