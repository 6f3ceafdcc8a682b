import { afterCommit, database, type Database, type Db, sqlIn } from "../db/client";
import { commitBatched, type Batcher } from "../db/groupCommit";
import type { RawQueryable } from "../db/raw";
import { newId } from "../ids";
import { awaitIntegrated, insertSealed, integrateSoon } from "../ledger/integrate";
import { currentTraceId } from "../telemetry/tracing";
import { leafBytes, sealRecord, type ProvenanceEntry, type ProvenanceRecord } from "./record";

/**
 * The ledger's append path: a record commits with its call (nothing committed without its record,
 * nothing recorded without its commit), and no lock is held from the append to the commit.
 *
 * - PostgreSQL: the record is inserted into `ledger_pending` (its id, fields and timestamp, no
 *   position) in the call's own transaction, concurrently with every other process's; the
 *   integrator (ledger/integrate.ts) gives it its leaf index (`seq`) and leaf hash after the commit,
 *   in a round shared with the other records committed meanwhile. A call answers once its record
 *   has its position (`awaitIntegrated`).
 * - SQLite: one writer at a time holds the database anyway, so the record is given its position in
 *   its own transaction (the next `seq` read under that lock, the record sealed in JS) and goes
 *   straight into `provenance_record`: the cheapest path there, with nothing to wait for.
 *
 * Two ways in: `appendInTransaction` for a call that writes (its record commits or rolls back
 * with the call's own writes), and `appendProvenance` for reads and refusals, whose records join
 * the process's group commit (db/groupCommit.ts) so a read costs a share of one insert.
 */

/** A record as committed: with its position when the engine gave it at commit (SQLite), without until integrated. */
export type PendingRecord = Omit<ProvenanceRecord, "seq" | "leaf_hash"> & { seq?: number; leaf_hash?: string };

const PENDING_COLUMNS = `"id","timestamp","org_did","actor_did","delegation_id","grantor_did","capability","operation","resource_type","resource_id","decision","status","request_hash","request_id","trace_id","leaf_before","leaf_after"`;
const WIDTH = 17;

/**
 * The record's leaf bytes (RFC 8785 JSON) split around its seq, which only the integrator knows:
 * it joins `before ‖ seq ‖ after` and hashes, so the JSON is built here, by each writer, rather
 * than under the integrator's lock. `"seq":` followed by a number can only be the key itself (in a
 * string every quote is escaped), and `"status"` always follows it in RFC 8785's key order.
 */
function leafHalves(r: PendingRecord): [string, string] | [null, null] {
  const text = leafBytes({ ...r, seq: 0 }).toString("utf8");
  const at = text.indexOf('"seq":0,"status":');
  return at < 0 ? [null, null] : [text.slice(0, at + 6), text.slice(at + 7)];
}

function pendingRow(r: PendingRecord, now: Date): unknown[] {
  return [
    r.id,
    now,
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
    ...leafHalves(r),
  ];
}

function pending(entry: ProvenanceEntry, id: string, now: Date): PendingRecord {
  return { id, timestamp: now.toISOString(), ...entry };
}

/** Appends a call's record inside the call's own write transaction (under `id` when the caller already points a row at it). */
export async function appendInTransaction(
  tx: Db,
  engine: Database["engine"],
  entry: ProvenanceEntry,
  id = newId("prv"),
): Promise<PendingRecord> {
  const record = await appendInRawTransaction(sqlIn(tx, engine), engine, entry, id);
  // Whoever does not wait for the position (a job's service record) still has it given promptly,
  // in the round a waiting caller of the same moment joins.
  if (record.seq === undefined)
    afterCommit(
      tx,
      () =>
        void database()
          .then(integrateSoon)
          .catch(() => undefined),
    );
  return record;
}

/**
 * `appendInTransaction` for a transaction of the raw driver (`q`: no Prisma transaction, so no
 * after-commit hook): the caller asks for the position itself once committed (`awaitIntegrated`).
 */
export async function appendInRawTransaction(
  q: RawQueryable,
  engine: Database["engine"],
  entry: ProvenanceEntry,
  id = newId("prv"),
): Promise<PendingRecord> {
  const now = new Date();
  if (engine === "sqlite") return (await sealHere(q, [{ entry: inTrace(entry), id }], now))[0]!;
  const record = pending(inTrace(entry), id, now);
  await q.execute(
    `INSERT INTO "ledger_pending" (${PENDING_COLUMNS}) VALUES (${placeholders(WIDTH, 0)})`,
    pendingRow(record, now),
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
 * (the record is then safe, and a round to give it its position is asked for); `awaitIntegrated`
 * waits for that position.
 */
export async function appendProvenance(db: Database, entry: ProvenanceEntry): Promise<PendingRecord> {
  const record = await commitBatched(db, readRecords, inTrace(entry));
  integrateSoon(db);
  return record;
}

/** Waits until every record committed before the call has its position (see ledger/integrate.ts). */
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
  if (engine === "sqlite")
    return sealHere(
      q,
      entries.map((entry) => ({ entry, id: newId("prv") })),
      now,
    );
  const records = entries.map((entry) => pending(entry, newId("prv"), now));
  // One multi-row INSERT per chunk (PostgreSQL allows 65535 parameters).
  for (let i = 0; i < records.length; i += 100) {
    const chunk = records.slice(i, i + 100);
    const values = chunk.map((_, j) => `(${placeholders(WIDTH, j * WIDTH)})`).join(",");
    await q.execute(
      `INSERT INTO "ledger_pending" (${PENDING_COLUMNS}) VALUES ${values}`,
      chunk.flatMap((r) => pendingRow(r, now)),
    );
  }
  return records;
}

/**
 * SQLite: the next leaf index read under the writer's lock, the records sealed here and inserted
 * into `provenance_record` in the caller's transaction (SQLite's one writer is the ledger's order).
 */
async function sealHere(
  q: RawQueryable,
  items: Array<{ entry: ProvenanceEntry; id: string }>,
  now: Date,
): Promise<ProvenanceRecord[]> {
  const [{ next }] = (await q.query<{ next: bigint | number | string }>(
    `SELECT COALESCE(MAX("seq") + 1, 0) AS "next" FROM "provenance_record"`,
  )) as [{ next: bigint | number | string }];
  const sealed = items.map(({ entry, id }, i) => sealRecord(entry, id, Number(next) + i, now));
  await insertSealed(q, sealed);
  return sealed;
}
