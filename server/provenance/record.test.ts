import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { hashChildren, hashLeaf, leafBytes, sealRecord } from "./record";

describe("provenance records", () => {
  const entry = {
    org_did: "did:svc:x",
    actor_did: "did:key:z1",
    delegation_id: "dlg_1",
    grantor_did: "did:svc:x",
    capability: "svc_api:passports:read",
    operation: "GET /v1/passports/{did}",
    resource_type: "passport",
    resource_id: "did:key:z2",
    decision: "allowed" as const,
    status: 200,
    request_hash: "e3b0",
    request_id: "req_1",
  };

  it("leaf bytes are the RFC 8785 canonical JSON less leaf_hash (sorted keys, no spaces)", () => {
    const record = sealRecord(entry, "prv_1", 7, new Date("2026-11-21T00:00:00.000Z"));
    const text = leafBytes(record).toString("utf8");
    expect(text.startsWith('{"actor_did":"did:key:z1","capability":')).toBe(true);
    expect(text).not.toContain("leaf_hash");
    expect(text).toContain('"seq":7');
    expect(record.leaf_hash).toBe(
      createHash("sha256")
        .update(Buffer.concat([Buffer.of(0), Buffer.from(text)]))
        .digest("base64"),
    );
  });

  it("hashes nodes as SHA-256(0x01 ‖ left ‖ right), RFC 9162", () => {
    const a = hashLeaf(Buffer.from("a"));
    const b = hashLeaf(Buffer.from("b"));
    expect(hashChildren(a, b)).toEqual(
      createHash("sha256")
        .update(Buffer.concat([Buffer.of(1), a, b]))
        .digest(),
    );
    // Each answer is its own buffer (the input buffer is shared), and children of other lengths hash alike.
    const ab = hashChildren(a, b);
    const ba = hashChildren(b, a);
    expect(ab).toEqual(hashChildren(a, b));
    expect(ab).not.toEqual(ba);
    expect(ba).toEqual(
      createHash("sha256")
        .update(Buffer.concat([Buffer.of(1), b, a]))
        .digest(),
    );
    const short = Buffer.from("xyz");
    expect(hashChildren(short, a)).toEqual(
      createHash("sha256")
        .update(Buffer.concat([Buffer.of(1), short, a]))
        .digest(),
    );
    // RFC 6962 / 9162 test vector: the hash of the empty leaf.
    expect(hashLeaf(Buffer.alloc(0)).toString("hex")).toBe(
      "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    );
  });
});
