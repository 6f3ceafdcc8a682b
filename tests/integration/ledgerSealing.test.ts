import { describe, expect, it } from "vitest";
import { database } from "@/server/db/client";
import { appendInTransaction, appendProvenance, awaitIntegrated } from "@/server/provenance/appendProvenance";
import { hashLeaf, leafBytes, type ProvenanceEntry, type ProvenanceRecord } from "@/server/provenance/record";

/**
 * The integrator assigns the leaf index and hashes the record after the write commits. The stored
 * leaf hash must be the one a verifier computes from the record: SHA-256(0x00 ‖ RFC 8785 bytes),
 * whatever the fields hold, and the record keeps the id, fields and timestamp it was written with.
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

const expectSealed = async (record: Omit<ProvenanceRecord, "seq" | "leaf_hash">) => {
  const row = await stored(record.id);
  const { seq: _seq, leaf_hash: _leaf, ...fields } = row;
  expect(fields).toEqual(record);
  expect(row.leaf_hash).toBe(hashLeaf(leafBytes(row)).toString("base64"));
};

describe("the ledger seals each record as a verifier would", () => {
  // Non-ASCII text, JSON escapes, and the digits PostgreSQL's sealing uses as its probe (it falls back to JS).
  const resourceIds = ["plain", 'ünïcødé "quoted" \\ \n ✓ 𝄞', "9007199254740991"];

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
    expect(seqs).toEqual([seqs[0]!, seqs[0]! + 1, seqs[0]! + 2]);
    for (const r of records) await expectSealed(r);
  });

  it("read records, group-committed together", async () => {
    const db = await database();
    const records = await Promise.all(
      Array.from({ length: 120 }, (_, i) => appendProvenance(db, entry(resourceIds[i % 3]!))),
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
