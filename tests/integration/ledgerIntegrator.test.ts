import { describe, expect, it } from "vitest";
import { database } from "@/server/db/client";
import { sqliteTimestamp } from "@/server/db/raw";
import { newId } from "@/server/ids";
import { integratePending } from "@/server/ledger/integrate";
import { ledgerTasks } from "@/server/ledger/tasks";
import { appendInTransaction, awaitIntegrated } from "@/server/provenance/appendProvenance";
import { hashLeaf, leafBytes, type ProvenanceEntry, type ProvenanceRecord } from "@/server/provenance/record";

/**
 * The ledger off the global lock: writes commit their records without a position, concurrently;
 * the integrator gives them dense, unique positions; nothing stays pending after a crash; both
 * tables refuse to change a record.
 */
const entry = (i: number): ProvenanceEntry => ({
  org_did: "did:svc:integrator",
  actor_did: null,
  delegation_id: null,
  grantor_did: null,
  capability: "svc_api:test:write",
  operation: "POST /v1/integrator",
  resource_type: "test",
  resource_id: `r${i}`,
  decision: "allowed",
  status: 201,
  request_hash: "0".repeat(64),
  request_id: `req_${i}`,
});

type Row = Omit<ProvenanceRecord, "seq" | "timestamp" | "trace_id" | "status"> & {
  seq: number | string;
  timestamp: string | Date;
  status: number | string;
  trace_id: string | null;
};

async function positions(ids: string[]) {
  const db = await database();
  return db.raw.query<Row>(
    `SELECT * FROM "provenance_record" WHERE "id" IN (${ids.map((_, i) => `$${i + 1}`).join(",")}) ORDER BY "seq"`,
    ids,
  );
}

describe("the ledger's integrator", () => {
  it("gives records written concurrently, on separate transactions, dense unique positions with valid leaf hashes", async () => {
    const db = await database();
    const written = await Promise.all(
      Array.from({ length: 60 }, (_, i) => db.writeTx((tx) => appendInTransaction(tx, db.engine, entry(i)))),
    );
    const ids = written.map((r) => r.id);
    await awaitIntegrated(db, ids);
    const rows = await positions(ids);
    expect(rows).toHaveLength(ids.length);
    const seqs = rows.map((r) => Number(r.seq));
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(seqs.at(-1)! - seqs[0]!).toBe(seqs.length - 1);
    for (const { trace_id, ...r } of rows) {
      const record = {
        ...r,
        seq: Number(r.seq),
        status: Number(r.status),
        timestamp: new Date(r.timestamp).toISOString(),
        ...(trace_id ? { trace_id } : {}),
      };
      expect(r.leaf_hash).toBe(hashLeaf(leafBytes(record)).toString("base64"));
    }
    // The ledger as a whole stays dense from 0.
    const [{ n, top }] = (await db.raw.query<{ n: number | string; top: number | string }>(
      `SELECT COUNT(*) AS "n", MAX("seq") AS "top" FROM "provenance_record"`,
    )) as [{ n: number | string; top: number | string }];
    expect(Number(top)).toBe(Number(n) - 1);
  });

  it("leaves nothing pending after a crash: the worker task integrates what no caller waited for", async () => {
    const db = await database();
    // As a process that committed its write and died before kicking the integrator leaves it.
    const id = newId("prv");
    const now = new Date();
    await db.raw.execute(
      `INSERT INTO "ledger_pending" ("id","timestamp","org_did","operation","decision","status","request_hash","request_id") VALUES ($1,$2,$3,$4,$5,$6,$7,$8)`,
      [
        id,
        db.engine === "sqlite" ? sqliteTimestamp(now) : now,
        "did:svc:integrator",
        "POST /v1/crash",
        "allowed",
        201,
        "0".repeat(64),
        "req_crash",
      ],
    );
    // A batch that fails midway rolls back whole: the record is still pending, not half-integrated.
    await expect(
      db.raw.transaction(async (q) => {
        await q.execute(`DELETE FROM "ledger_pending" WHERE "id" = $1`, [id]);
      }),
    ).rejects.toThrow(/immutable/);
    await ledgerTasks[0]!.run(db);
    expect(await db.raw.query(`SELECT "id" FROM "ledger_pending"`)).toEqual([]);
    expect(await positions([id])).toHaveLength(1);
  });

  it("refuses to change or remove a record, pending or integrated, at the database level", async () => {
    const db = await database();
    const { id } = await db.writeTx((tx) => appendInTransaction(tx, db.engine, entry(0)));
    await awaitIntegrated(db, [id]);
    await expect(db.raw.execute(`UPDATE "provenance_record" SET "status" = 500 WHERE "id" = $1`, [id])).rejects.toThrow(
      /immutable/,
    );
    await expect(db.raw.execute(`DELETE FROM "provenance_record" WHERE "id" = $1`, [id])).rejects.toThrow(/immutable/);
    const pending = newId("prv");
    const now = new Date();
    await db.raw.execute(
      `INSERT INTO "ledger_pending" ("id","timestamp","org_did","operation","decision","status","request_hash","request_id") VALUES ($1,$2,$3,$4,$5,$6,$7,$8)`,
      [
        pending,
        db.engine === "sqlite" ? sqliteTimestamp(now) : now,
        "did:svc:x",
        "POST /v1/x",
        "allowed",
        201,
        "0",
        "r",
      ],
    );
    await expect(
      db.raw.execute(`UPDATE "ledger_pending" SET "status" = 500 WHERE "id" = $1`, [pending]),
    ).rejects.toThrow(/immutable/);
    await expect(db.raw.execute(`DELETE FROM "ledger_pending" WHERE "id" = $1`, [pending])).rejects.toThrow(
      /immutable/,
    );
    await integratePending(db);
    expect(await positions([pending])).toHaveLength(1);
  });
});
