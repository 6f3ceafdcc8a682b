import { describe, expect, it } from "vitest";
import { database } from "@/server/db/client";
import { sqliteTimestamp } from "@/server/db/raw";
import { newId } from "@/server/ids";
import { integratePending } from "@/server/ledger/integrate";
import { appendInTransaction, appendProvenance, awaitIntegrated } from "@/server/provenance/appendProvenance";
import { hashLeaf, leafBytes, type ProvenanceEntry, type ProvenanceRecord } from "@/server/provenance/record";

/**
 * Wherever the leaf index and hash are given (PostgreSQL: by the integrator, in SQL, after the write
 * commits; SQLite: in JS, in the write's own transaction), the stored leaf hash must be the one a
 * verifier computes from the record: SHA-256(0x00 ‖ RFC 8785 bytes), whatever the fields hold, and
 * the record keeps the id, fields and timestamp it was written with.
 */
const entry = (resourceId: string): ProvenanceEntry => ({
  org_did: "did:svc:sealing",
  actor_did: "did:key:zActor",
  delegation_id: null,
  grantor_did: null,
  capability: "svc_api:test:write",
  operation: "POST /v1/sealing",
  resource_type: "sealing",
  resource_id: resourceId,
  decision: "allowed",
  status: 201,
  request_hash: "0".repeat(64),
  request_id: "req_sealing",
});

async function stored(id: string): Promise<ProvenanceRecord> {
  const db = await database();
  const r = await db.read.provenanceRecord.findUniqueOrThrow({ where: { id } });
  return {
    id: r.id,
    seq: Number(r.seq),
    timestamp: r.timestamp.toISOString(),
    org_did: r.orgDid,
    actor_did: r.actorDid,
    delegation_id: r.delegationId,
    grantor_did: r.grantorDid,
    capability: r.capability,
    operation: r.operation,
    resource_type: r.resourceType,
    resource_id: r.resourceId,
    decision: r.decision as ProvenanceRecord["decision"],
    status: r.status,
    request_hash: r.requestHash,
    request_id: r.requestId,
    leaf_hash: r.leafHash,
  };
}

const expectSealed = async (
  record: Omit<ProvenanceRecord, "seq" | "leaf_hash"> & { seq?: number; leaf_hash?: string },
) => {
  const row = await stored(record.id);
  const { seq, leaf_hash, ...fields } = row;
  const { seq: given, leaf_hash: givenHash, ...written } = record;
  expect(fields).toEqual(written);
  // Where the position was given at commit (SQLite), the caller was told the stored one.
  if (given !== undefined) expect({ seq: given, leaf_hash: givenHash }).toEqual({ seq, leaf_hash });
  expect(leaf_hash).toBe(hashLeaf(leafBytes(row)).toString("base64"));
};

describe("the ledger seals each record as a verifier would", () => {
  // Non-ASCII text (astral too), every JSON escape and the controls written as \u00xx, DEL and
  // U+2028 (left as they are), digits: what PostgreSQL's to_json must escape exactly as JSON.stringify.
  const resourceIds = [
    "plain",
    'ünïcødé "quoted" \\ \n ✓ 𝄞',
    "9007199254740991",
    "\b\f\n\r\t \u0001\u001f \u007f \u2028\u2029 </script> \\u0041",
  ];

  it("a write call's record (in its transaction), in order", async () => {
    const db = await database();
    const records = await db.writeTx(async (tx) => {
      const out = [];
      for (const id of resourceIds) out.push(await appendInTransaction(tx, db.engine, entry(id)));
      return out;
    });
    await awaitIntegrated(
      db,
      records.map((r) => r.id),
    );
    const seqs = (await Promise.all(records.map((r) => stored(r.id)))).map((r) => r.seq).sort((a, b) => a - b);
    expect(seqs).toEqual(resourceIds.map((_, i) => seqs[0]! + i));
    for (const r of records) await expectSealed(r);
  });

  it("a pending record without the writer's JSON halves (written by hand, or by an older writer) is sealed alike", async () => {
    const db = await database();
    const written = resourceIds.map((resourceId, i) => ({
      id: newId("prv"),
      timestamp: new Date(Date.now() + i).toISOString(),
      ...entry(resourceId),
      // A trace id too: it is part of the bytes when set.
      ...(i % 2 === 0 ? { trace_id: "0af7651916cd43dd8448eb211c80319c" } : {}),
    }));
    for (const r of written)
      await db.raw.execute(
        `INSERT INTO "ledger_pending" ("id","timestamp","org_did","actor_did","delegation_id","grantor_did","capability","operation","resource_type","resource_id","decision","status","request_hash","request_id","trace_id")
         VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15)`,
        [
          r.id,
          db.engine === "sqlite" ? sqliteTimestamp(new Date(r.timestamp)) : new Date(r.timestamp),
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
        ],
      );
    await integratePending(db);
    for (const r of written) {
      const row = await stored(r.id);
      const { trace_id, ...rest } = r;
      expect({ ...row, seq: 0, leaf_hash: "" }).toEqual({ ...rest, seq: 0, leaf_hash: "" });
      expect(row.leaf_hash).toBe(hashLeaf(leafBytes({ ...row, ...(trace_id ? { trace_id } : {}) })).toString("base64"));
    }
  });

  it("read records, group-committed together", async () => {
    const db = await database();
    const records = await Promise.all(
      Array.from({ length: 120 }, (_, i) => appendProvenance(db, entry(resourceIds[i % resourceIds.length]!))),
    );
    await awaitIntegrated(
      db,
      records.map((r) => r.id),
    );
    const seqs = (await Promise.all(records.map((r) => stored(r.id)))).map((r) => r.seq).sort((a, b) => a - b);
    expect(new Set(seqs).size).toBe(records.length);
    expect(seqs.at(-1)! - seqs[0]!).toBe(records.length - 1);
    for (const r of records) await expectSealed(r);
  });
});
