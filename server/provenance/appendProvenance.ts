import { type Database, type Db, sqlIn } from "../db/client";
import { commitBatched, type Batcher } from "../db/groupCommit";
import { sqliteTimestamp, type RawQueryable } from "../db/raw";
import { newId } from "../ids";
import { currentTraceId } from "../telemetry/tracing";
import { leafBytes, sealRecord, type ProvenanceEntry, type ProvenanceRecord } from "./record";

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

const COLUMNS = `"id","seq","timestamp","org_did","actor_did","delegation_id","grantor_did","capability","operation","resource_type","resource_id","decision","status","request_hash","request_id","leaf_hash","trace_id"`;

function row(r: ProvenanceRecord, engine: Database["engine"]): unknown[] {
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
}

/**
 * Takes the ledger's lock now rather than at append (PostgreSQL; a no-op on SQLite). A write that
 * locks rows of its own before its record (reasoning's budget admission) takes this first, so
 * every transaction takes the two in the same order: a group that appended a record before such a
 * member, and another process's group that locked the rows first, would otherwise wait on each
 * other (a deadlock PostgreSQL breaks after a second by aborting one group).
 */
export async function takeLedgerLock(tx: Db, engine: Database["engine"]): Promise<void> {
  if (engine === "postgresql") await tx.$queryRawUnsafe(`SELECT pg_advisory_xact_lock(${LEDGER_LOCK})::text`);
}

/** Appends a call's record inside the call's own write transaction (under `id` when the caller already points a row at it). */
export async function appendInTransaction(
  tx: Db,
  engine: Database["engine"],
  entry: ProvenanceEntry,
  id = newId("prv"),
): Promise<ProvenanceRecord> {
  entry = inTrace(entry);
  if (engine === "postgresql") {
    await tx.$queryRawUnsafe(`SELECT pg_advisory_xact_lock(${LEDGER_LOCK})::text`);
    const sealed = sealingInsert([{ entry, id }], new Date());
    if (sealed) {
      const rows = await tx.$queryRawUnsafe<SealedRow[]>(sealed.sql, ...sealed.params);
      return sealed.records(rows)[0]!;
    }
  }
  const [{ next }] = (await sqlIn(tx, engine).query<{ next: bigint | number }>(
    `SELECT COALESCE(MAX("seq") + 1, 0) AS "next" FROM "provenance_record"`,
  )) as [{ next: bigint | number }];
  const record = sealRecord(entry, id, Number(next), new Date());
  await sqlIn(tx, engine).execute(
    `INSERT INTO "provenance_record" (${COLUMNS}) VALUES (${placeholders(17, 0)})`,
    row(record, engine),
  );
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
  return commitBatched(db, readRecords, inTrace(entry));
}

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
): Promise<ProvenanceRecord[]> {
  if (engine === "postgresql") {
    await q.query(`SELECT pg_advisory_xact_lock(${LEDGER_LOCK})::text`);
    const records: ProvenanceRecord[] = [];
    const now = new Date();
    for (let i = 0; i < entries.length; i += 100) {
      const sealed = sealingInsert(
        entries.slice(i, i + 100).map((entry) => ({ entry, id: newId("prv") })),
        now,
      );
      if (!sealed) return [...records, ...(await insertSealedInJs(q, engine, entries.slice(i), now))];
      records.push(...sealed.records(await q.query<SealedRow>(sealed.sql, sealed.params)));
    }
    return records;
  }
  return insertSealedInJs(q, engine, entries, new Date());
}

/** Reads the next leaf index, seals the records here, and inserts them (SQLite; PostgreSQL's fallback). */
async function insertSealedInJs(
  q: RawQueryable,
  engine: Database["engine"],
  entries: ProvenanceEntry[],
  now: Date,
): Promise<ProvenanceRecord[]> {
  const [{ next }] = (await q.query<{ next: bigint | number | string }>(
    `SELECT COALESCE(MAX("seq") + 1, 0) AS "next" FROM "provenance_record"`,
  )) as [{ next: bigint | number | string }];
  const sealed = entries.map((entry, i) => sealRecord(entry, newId("prv"), Number(next) + i, now));
  // One multi-row INSERT per chunk (SQLite allows 32766 parameters, PostgreSQL 65535).
  for (let i = 0; i < sealed.length; i += 100) {
    const chunk = sealed.slice(i, i + 100);
    const values = chunk.map((_, j) => `(${placeholders(17, j * 17)})`).join(",");
    await q.execute(
      `INSERT INTO "provenance_record" (${COLUMNS}) VALUES ${values}`,
      chunk.flatMap((r) => row(r, engine)),
    );
  }
  return sealed;
}

/**
 * PostgreSQL: the next leaf index read and the records sealed in the INSERT itself, one statement
 * (and one round trip) instead of two. A record's leaf bytes are its RFC 8785 canonical JSON, in
 * which `seq` is one number at a fixed place: JS computes the bytes before and after it, and the
 * database hashes `before ‖ seq ‖ after` with the seq it assigns (sha256, as `sealRecord` does).
 * It runs after the ledger's advisory lock, in a statement of its own, so its snapshot sees every
 * record committed before the lock was granted. Undefined when a record's bytes contain the probe
 * number elsewhere (a field holding those digits): the caller seals in JS then.
 */
const SEQ_PROBE = 9_007_199_254_740_991;

interface SealedRow {
  id: string;
  seq: bigint | number | string;
  leaf_hash: string;
}

function sealingInsert(
  items: Array<{ entry: ProvenanceEntry; id: string }>,
  now: Date,
): { sql: string; params: unknown[]; records: (rows: SealedRow[]) => ProvenanceRecord[] } | undefined {
  const params: unknown[] = [];
  const tuples: string[] = [];
  for (const [i, { entry, id }] of items.entries()) {
    const probe = leafBytes({ id, seq: SEQ_PROBE, timestamp: now.toISOString(), ...entry }).toString("utf8");
    const around = probe.split(String(SEQ_PROBE));
    if (around.length !== 2) return undefined;
    const values = [i, ...row({ ...entry, id, seq: 0, timestamp: now.toISOString(), leaf_hash: "" }, "postgresql")];
    // The row's columns less seq and leaf_hash, then the bytes around the seq, then the trace id.
    // The timestamp as ISO text on both drivers (a Date could be sent in the session's time zone).
    const own = [values[0], values[1], now.toISOString(), ...values.slice(4, 16), around[0], around[1], values[17]];
    const at = params.length;
    params.push(...own);
    tuples.push(`(${own.map((_, k) => `$${at + k + 1}${SEALED_TYPES[k]}`).join(",")})`);
  }
  const sql = `INSERT INTO "provenance_record" (${COLUMNS})
    SELECT v."id", n."next" + v."i", v."ts", v."org_did", v."actor_did", v."delegation_id", v."grantor_did",
      v."capability", v."operation", v."resource_type", v."resource_id", v."decision", v."status",
      v."request_hash", v."request_id",
      encode(sha256('\\x00'::bytea || convert_to(v."before" || (n."next" + v."i")::text || v."after", 'UTF8')), 'base64'),
      v."trace_id"
    FROM (SELECT COALESCE(MAX("seq") + 1, 0) AS "next" FROM "provenance_record") n,
      (VALUES ${tuples.join(",")}) AS v("i","id","ts","org_did","actor_did","delegation_id","grantor_did","capability",
        "operation","resource_type","resource_id","decision","status","request_hash","request_id","before","after","trace_id")
    ORDER BY v."i"
    RETURNING "id", "seq", "leaf_hash"`;
  return {
    sql,
    params,
    records: (rows) => {
      const byId = new Map(rows.map((r) => [r.id, r]));
      return items.map(({ entry, id }) => {
        const r = byId.get(id);
        if (!r) throw new Error(`the ledger's INSERT returned no row for ${id}`);
        return { id, seq: Number(r.seq), timestamp: now.toISOString(), ...entry, leaf_hash: r.leaf_hash };
      });
    },
  };
}

/** Casts for the VALUES list's first row (PostgreSQL types the columns from it). */
const SEALED_TYPES = [
  "::int",
  "::text",
  "::timestamp(3)",
  ...Array.from({ length: 8 }, () => "::text"),
  "::text",
  "::int",
  "::text",
  "::text",
  "::text",
  "::text",
  "::text",
];
