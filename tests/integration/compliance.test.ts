import { describe, expect, it } from "vitest";
import { complianceKey, signCompliance } from "@/server/compliance/deploymentCompliance";
import { DeploymentComplianceResponse, WalledGardenStatus } from "@/server/compliance/schemas";
import { witnessLatestCheckpoint } from "@/server/compliance/witnesses";
import { database } from "@/server/db/client";
import { catchUp } from "@/server/ledger/buildTree";
import { parseVerifierKey, verifyCheckpoint } from "@/server/verifier/note";
import { startFakeWitness } from "./fakeWitness";
import { apiKey, call, ed25519Jwk, useTestServer } from "./harness";

const t = useTestServer();
const api = (path: string) => call(t.server.url, "GET", path, { token: t.root.token });

describe("deployment compliance", () => {
  it("is computed from real state and signed with the documented key", async () => {
    for (let i = 0; i < 3; i++)
      await call(t.server.url, "POST", "/v1/passports", {
        token: t.root.token,
        body: { type: "agent", name: `c${i}`, public_key: ed25519Jwk() },
      });
    const passports = (await api("/v1/passports?limit=100")).body.data;
    await call(t.server.url, "PATCH", `/v1/passports/${passports[0].did}`, {
      token: t.root.token,
      body: { verification_tier: 2 },
    });
    await catchUp(await database());
    const res = await api("/v1/compliance/deployment");
    expect(res.status).toBe(200);
    expect(() => DeploymentComplianceResponse.parse(res.body)).not.toThrow();
    expect(res.body.compliance).toMatchObject({
      human_passport_minting: "device_only",
      passport_count: passports.length,
      verification_count: 1,
    });
    expect(res.body.compliance.attestation_formats_accepted).toContain("packed");
    expect(res.body.invariants).toEqual({
      server_side_key_generation: false,
      private_key_access: false,
      biometric_binding_hash_used: false,
      webauthn_required_for_humans: true,
    });
    expect(res.body.signature).toBe(signCompliance(res.body, await complianceKey()));
    expect(
      signCompliance(
        { ...res.body, compliance: { ...res.body.compliance, passport_count: 999 } },
        await complianceKey(),
      ),
    ).not.toBe(res.body.signature);
  });

  it("ledger_sync_status says whether the newest checkpoint covers every record", async () => {
    await catchUp(await database());
    const first = await api("/v1/compliance/deployment");
    // The call's own record (and the one before) are newer than the checkpoint at that moment.
    expect(first.body.compliance.ledger.records_behind).toBeLessThanOrEqual(1);
    for (let i = 0; i < 5; i++) await api("/v1/passports");
    const behind = await api("/v1/compliance/deployment");
    expect(behind.body.compliance.ledger_sync_status).toBe("behind");
    expect(behind.body.compliance.ledger.records_behind).toBeGreaterThanOrEqual(5);
    await catchUp(await database());
    const db = await database();
    const [{ n }] = (await db.raw.query<{ n: number | string }>(
      `SELECT COALESCE(MAX("seq")+1,0) AS "n" FROM "provenance_record"`,
    )) as [{ n: number }];
    const [{ t }] = (await db.raw.query<{ t: number | string }>(
      `SELECT MAX("tree_size") AS "t" FROM "ledger_checkpoint"`,
    )) as [{ t: number }];
    expect(Number(t)).toBe(Number(n));
  });
});

describe("invariants follow stored state", () => {
  it("a human passport without a passkey, or a stored private key part, turns its invariant", async () => {
    const db = await database();
    const root = t.root.orgDid;
    await db.writeTx((tx) =>
      tx.passport.create({
        data: {
          did: `did:key:zHuman${Date.now()}`,
          type: "human",
          name: "smuggled",
          orgDid: root,
          publicKeyJwk: { kty: "OKP", crv: "Ed25519", x: "AA", d: "secret" },
        },
      }),
    );
    const res = await api("/v1/compliance/deployment");
    expect(res.body.invariants).toMatchObject({ webauthn_required_for_humans: false, private_key_access: true });
  });
});

describe("walled-garden status", () => {
  it("is local_only without witnesses, and says so", async () => {
    delete process.env.SVC_WITNESSES;
    const res = await api("/v1/compliance/walled-garden");
    expect(res.status).toBe(200);
    expect(() => WalledGardenStatus.parse(res.body)).not.toThrow();
    expect(res.body.network_verification).toBe("local_only");
    expect(res.body.explanation).toMatch(/No witness is configured/);
    expect(res.body.risks.walled_garden_possible).toBe(true);
    expect(res.body.recommendations.join(" ")).toMatch(/SVC_WITNESSES/);
  });

  it("becomes network_verified once a witness cosigns a checkpoint, and shows the cosignature", async () => {
    const db = await database();
    await catchUp(db);
    const logKey = parseVerifierKey((await api("/v1/provenance/verifier-key")).body);
    const witness = await startFakeWitness(logKey);
    const silent = await startFakeWitness(logKey, "silent.witness");
    await silent.close(); // configured but unreachable
    process.env.SVC_WITNESSES = `${witness.config},${silent.config}`;
    try {
      expect((await api("/v1/compliance/walled-garden")).body.network_verification).toBe("local_only");
      expect(await witnessLatestCheckpoint(db)).toBe(1);
      const first = witness.state.size;
      expect(first).toBeGreaterThan(0);
      // The next checkpoint comes with a consistency proof from the cosigned one.
      for (let i = 0; i < 4; i++) await api("/v1/passports");
      await catchUp(db);
      expect(await witnessLatestCheckpoint(db)).toBe(1);
      expect(witness.state.size).toBeGreaterThan(first);

      const res = await api("/v1/compliance/walled-garden");
      expect(res.body.network_verification).toBe("network_verified");
      expect(res.body.risks.walled_garden_possible).toBe(false);
      expect(res.body.explanation).toContain("witness.test");
      expect(res.body.recommendations.join(" ")).toMatch(/silent\.witness .* never cosigned/);
      const w = res.body.witnesses.find((x: any) => x.name === "witness.test");
      expect(w.last_cosignature).toMatchObject({
        tree_size: witness.state.size,
        line: expect.stringMatching(/^— witness\.test /),
      });
    } finally {
      delete process.env.SVC_WITNESSES;
      await witness.close();
    }
  });

  it("catches up a witness that knows a later size than we recorded (409 with its size)", async () => {
    const db = await database();
    await catchUp(db);
    const logKey = parseVerifierKey((await api("/v1/provenance/verifier-key")).body);
    const known = verifyCheckpoint((await api("/v1/provenance/checkpoint")).body, logKey);
    for (let i = 0; i < 3; i++) await api("/v1/passports");
    await catchUp(db);
    const witness = await startFakeWitness(logKey, "seeded.witness", { size: known.treeSize, root: known.rootHash });
    process.env.SVC_WITNESSES = witness.config;
    try {
      expect(await witnessLatestCheckpoint(db)).toBe(1);
      expect(witness.state.requests).toBe(2);
      expect(witness.state.size).toBeGreaterThan(known.treeSize);
    } finally {
      delete process.env.SVC_WITNESSES;
      await witness.close();
    }
  });
});
