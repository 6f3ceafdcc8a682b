import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { database } from "@/server/db/client";
import { decodeProtectedHeader } from "jose";
import { resetLedgerKeyRing } from "@/server/keys/ledgerKeys";
import { keyRing, resetKeyRing, rotateSigningKey } from "@/server/keys/signingKeys";
import { catchUp } from "@/server/ledger/buildTree";
import { verifierKey } from "@/server/ledger/note";
import { LEDGER_KEY_ROTATE_OPERATION, ledgerIdentity, rotateLedgerKey } from "@/server/ledger/origin";
import { hashLeaf, leafBytes } from "@/server/provenance/record";
import { ConsistencyProof, InclusionProof, ProvenanceRecordSchema } from "@/server/provenance/schemas";
import { parseVerifierKey, verifyCheckpoint } from "@/server/verifier/note";
import { verifyConsistency, verifyInclusion } from "@/server/verifier/proofs";
import { apiKey, call, ed25519Jwk, secondOrg, startTestServer, type TestServer } from "./harness";

const run = promisify(execFile);
// Engine-specific tests are not registered at all on the other engine: a skipped test fails CI.
const itNever = (..._args: unknown[]) => undefined;
const onSqliteOnly = process.env.SVC_TEST_ENGINE === "postgres" ? itNever : it;
let server: TestServer;
let root: Awaited<ReturnType<typeof apiKey>>;
const dir = mkdtempSync(join(tmpdir(), "svc-ledger-"));

beforeAll(async () => {
  server = await startTestServer();
  root = await apiKey();
  for (let i = 0; i < 12; i++)
    await call(server.url, "POST", "/v1/passports", {
      token: root.token,
      body: { type: "agent", name: `l${i}`, public_key: ed25519Jwk() },
    });
  await catchUp(await database());
});
afterAll(() => server.close());

const api = (path: string, token = root.token) => call(server.url, "GET", path, { token });

async function cliWith(args: string[], threads: string): Promise<{ code: number; out: string }> {
  const env = { ...process.env, SVC_VERIFY_THREADS: threads };
  try {
    const r = await run(process.execPath, [join(process.cwd(), "bin/svc.mjs"), "verify", ...args], { env });
    return { code: 0, out: r.stdout + r.stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, out: err.stdout + err.stderr };
  }
}

/** `svc verify`, checked inline and on two worker threads: both must say the same and exit alike. */
async function cli(args: string[]): Promise<{ code: number; out: string }> {
  const [inline, threaded] = await Promise.all([cliWith(args, "0"), cliWith(args, "2")]);
  const untimed = (out: string) => out.replace(/ in [\d.]+ s/, "");
  expect(untimed(threaded.out)).toBe(untimed(inline.out));
  expect(threaded.code).toBe(inline.code);
  return inline;
}

describe("checkpoints", () => {
  it("are C2SP signed notes that verify with the published verifier key", async () => {
    const note = await api("/v1/provenance/checkpoint");
    expect(note.status).toBe(200);
    expect(note.headers.get("content-type")).toContain("text/plain");
    const key = (await api("/v1/provenance/verifier-key")).body as string;
    expect(key).toMatch(/^svc\.ledger\/[a-z0-9]+\+[0-9a-f]{8}\+[A-Za-z0-9+/=]+\n$/);
    const cp = verifyCheckpoint(note.body, parseVerifierKey(key));
    expect(cp.treeSize).toBeGreaterThan(12);
    expect(note.body).toMatch(/^svc\.ledger\/\S+\n\d+\n[A-Za-z0-9+/=]{44}\n\n— svc\.ledger\/\S+ [A-Za-z0-9+/=]+\n$/);
    const tampered = note.body.replace(/\n(\d+)\n/, (_m: string, n: string) => `\n${Number(n) + 1}\n`);
    expect(() => verifyCheckpoint(tampered, parseVerifierKey(key))).toThrow(/signature/);
  });

  it("successive checkpoints are consistent (RFC 9162 consistency proofs)", async () => {
    const key = parseVerifierKey((await api("/v1/provenance/verifier-key")).body);
    const first = verifyCheckpoint((await api("/v1/provenance/checkpoint")).body, key);
    for (let i = 0; i < 7; i++) await api("/v1/passports");
    await catchUp(await database());
    const second = verifyCheckpoint((await api("/v1/provenance/checkpoint")).body, key);
    expect(second.treeSize).toBeGreaterThan(first.treeSize);
    const proof = await api(`/v1/provenance/consistency?from=${first.treeSize}&to=${second.treeSize}`);
    expect(proof.status).toBe(200);
    expect(() => ConsistencyProof.parse(proof.body)).not.toThrow();
    expect(
      verifyConsistency(
        first.treeSize,
        second.treeSize,
        first.rootHash,
        second.rootHash,
        proof.body.consistency_path.map((p: string) => Buffer.from(p, "base64")),
      ),
    ).toBe(true);
    // Every pair of sizes up to the latest checkpoint is consistent.
    const db = await database();
    const sizes = (
      await db.raw.query<{ tree_size: number | string; root_hash: string }>(
        `SELECT "tree_size","root_hash" FROM "ledger_checkpoint" ORDER BY "tree_size"`,
      )
    ).map((r) => ({ n: Number(r.tree_size), root: Buffer.from(r.root_hash, "base64") }));
    for (const a of sizes) {
      for (const b of sizes) {
        if (a.n > b.n) continue;
        const p = await api(`/v1/provenance/consistency?from=${a.n}&to=${b.n}`);
        expect(
          verifyConsistency(
            a.n,
            b.n,
            a.root,
            b.root,
            p.body.consistency_path.map((x: string) => Buffer.from(x, "base64")),
          ),
          `${a.n}→${b.n}`,
        ).toBe(true);
      }
    }
  });

  it("bad ranges are clear 400s", async () => {
    const latest = verifyCheckpoint(
      (await api("/v1/provenance/checkpoint")).body,
      parseVerifierKey((await api("/v1/provenance/verifier-key")).body),
    ).treeSize;
    for (const q of ["from=5&to=3", `from=1&to=${latest + 100}`, "from=0&to=3", "from=a&to=3", "to=3"]) {
      const res = await api(`/v1/provenance/consistency?${q}`);
      expect(res.status, q).toBe(400);
      expect(res.headers.get("content-type")).toContain("problem+json");
    }
  });
});

describe("records and inclusion proofs", () => {
  it("lists the organization's records with filters and cursors", async () => {
    const all = await api("/v1/provenance?limit=5");
    expect(all.status).toBe(200);
    expect(all.body.data).toHaveLength(5);
    for (const r of all.body.data) expect(() => ProvenanceRecordSchema.parse(r)).not.toThrow();
    const next = await api(`/v1/provenance?limit=5&cursor=${encodeURIComponent(all.body.pagination.next_cursor)}`);
    expect(next.body.data[0].seq).toBeLessThan(all.body.data[4].seq);
    const writes = await api(
      `/v1/provenance?operation=${encodeURIComponent("POST /v1/passports")}&decision=allowed&limit=100`,
    );
    expect(writes.body.data.length).toBeGreaterThanOrEqual(12);
    expect(writes.body.data.every((r: any) => r.operation === "POST /v1/passports" && r.decision === "allowed")).toBe(
      true,
    );
    const mine = await api(`/v1/provenance?delegation=${root.delegationId}&limit=100`);
    expect(mine.body.data.every((r: any) => r.delegation_id === root.delegationId)).toBe(true);
    const since = await api(`/v1/provenance?from=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`);
    expect(since.body.data).toEqual([]);
    expect((await api("/v1/provenance?from=yesterday")).status).toBe(400);
  });

  it("proves a record's inclusion against the latest or a given checkpoint", async () => {
    const key = parseVerifierKey((await api("/v1/provenance/verifier-key")).body);
    const record = (await api("/v1/provenance?limit=100")).body.data.at(-1);
    const proof = await api(`/v1/provenance/${record.id}/proof`);
    expect(proof.status).toBe(200);
    expect(() => InclusionProof.parse(proof.body)).not.toThrow();
    const cp = verifyCheckpoint(proof.body.checkpoint, key);
    expect(proof.body).toMatchObject({
      record_id: record.id,
      leaf_index: record.seq,
      tree_size: cp.treeSize,
      leaf_hash: record.leaf_hash,
    });
    expect(
      verifyInclusion(
        record.seq,
        cp.treeSize,
        Buffer.from(record.leaf_hash, "base64"),
        proof.body.inclusion_path.map((p: string) => Buffer.from(p, "base64")),
        cp.rootHash,
      ),
    ).toBe(true);

    const db = await database();
    const sizes = (
      await db.raw.query<{ tree_size: number | string }>(
        `SELECT "tree_size" FROM "ledger_checkpoint" ORDER BY "tree_size"`,
      )
    ).map((r) => Number(r.tree_size));
    const older = sizes.find((s) => s > record.seq)!;
    const atOlder = await api(`/v1/provenance/${record.id}/proof?tree_size=${older}`);
    expect(atOlder.body.tree_size).toBe(older);
    expect(
      verifyInclusion(
        record.seq,
        older,
        Buffer.from(record.leaf_hash, "base64"),
        atOlder.body.inclusion_path.map((p: string) => Buffer.from(p, "base64")),
        verifyCheckpoint(atOlder.body.checkpoint, key).rootHash,
      ),
    ).toBe(true);

    // Every record of a small tree proves against every checkpoint that covers it.
    const records = (await api("/v1/provenance?limit=100")).body.data;
    for (const r of records.slice(-15)) {
      const p = (await api(`/v1/provenance/${r.id}/proof`)).body;
      expect(
        verifyInclusion(
          r.seq,
          p.tree_size,
          Buffer.from(r.leaf_hash, "base64"),
          p.inclusion_path.map((x: string) => Buffer.from(x, "base64")),
          verifyCheckpoint(p.checkpoint, key).rootHash,
        ),
        `seq ${r.seq}`,
      ).toBe(true);
    }
  });

  it("unknown ids, other tenants' records and bad sizes are refused clearly", async () => {
    expect((await api("/v1/provenance/prv_unknown/proof")).status).toBe(404);
    expect((await api("/v1/provenance/prv_unknown")).status).toBe(404);
    const record = (await api("/v1/provenance?limit=100")).body.data.at(-1);
    const tenant = await secondOrg(server.url, root.token, "Ledger tenant");
    expect((await api(`/v1/provenance/${record.id}`, tenant.token)).status).toBe(404);
    expect((await api(`/v1/provenance/${record.id}/proof`, tenant.token)).status).toBe(404);
    const bad = await api(`/v1/provenance/${record.id}/proof?tree_size=${record.seq}`);
    expect(bad.status).toBe(400);
    expect((await api(`/v1/provenance/${record.id}/proof?tree_size=0`)).status).toBe(400);
  });
});

describe("export and the offline verifier", () => {
  async function exportTo(file: string, token = root.token, range = "") {
    const res = await api(`/v1/provenance/export${range}`, token);
    expect(res.status).toBe(200);
    writeFileSync(file, res.body);
    return res;
  }

  it("npx svc verify accepts a genuine export and checkpoints", async () => {
    await catchUp(await database());
    const keyFile = join(dir, "key.txt");
    writeFileSync(keyFile, (await api("/v1/provenance/verifier-key")).body);
    const note1 = join(dir, "cp1.txt");
    writeFileSync(note1, (await api("/v1/provenance/checkpoint")).body);
    for (let i = 0; i < 3; i++) await api("/v1/passports");
    await catchUp(await database());
    const note2 = join(dir, "cp2.txt");
    writeFileSync(note2, (await api("/v1/provenance/checkpoint")).body);
    const good = join(dir, "export.ndjson");
    const res = await exportTo(good);
    expect(res.headers.get("content-type")).toContain("application/x-ndjson");
    const ok = await cli(["--export", good, "--checkpoint", note1, "--checkpoint", note2, "--key", keyFile]);
    expect(ok.code, ok.out).toBe(0);
    expect(ok.out).toMatch(/ok: \d+ records verified/);
  });

  // Offline: the verifier reads files only, and the doctored ones are made here from the genuine
  // export above, the same on both engines: once, on SQLite.
  onSqliteOnly("npx svc verify names what fails in a doctored export, checkpoint or key", async () => {
    const keyFile = join(dir, "key.txt");
    const note1 = join(dir, "cp1.txt");
    const good = join(dir, "export.ndjson");
    const lines = readFileSync(good, "utf8").trim().split("\n");
    const cases: [string, string[], RegExp][] = [
      [
        "altered",
        lines.map((l, i) => (i === 5 ? l.replace(/"status":\d+/, '"status":299') : l)),
        /record seq 5 .*altered/,
      ],
      ["reordered", [lines[0]!, lines[2]!, lines[1]!, ...lines.slice(3)], /record seq 2 .*missing, reordered/],
      ["truncated", lines.slice(0, 4), /export holds only 4 records/],
      ["dropped", [...lines.slice(0, 3), ...lines.slice(4)], /record seq 4 .*missing/],
      // JSON that RFC 8785 refuses to canonicalize: on worker threads too, one FAIL line, no crash.
      [
        "lone surrogate",
        lines.map((l, i) => (i === 6 ? l.replace(/"operation":"/, '"operation":"\\ud800') : l)),
        /^FAIL: Lone surrogate is not allowed\n$/,
      ],
    ];
    for (const [name, content, expected] of cases) {
      const f = join(dir, `${name}.ndjson`);
      writeFileSync(f, content.join("\n") + "\n");
      const r = await cli(["--export", f, "--checkpoint", note1, "--key", keyFile]);
      expect(r.code, name).not.toBe(0);
      expect(r.out, name).toMatch(expected);
    }
    // A forged leaf hash together with altered content still breaks the signed root.
    const forged = lines.map((l, i) => {
      if (i !== 3) return l;
      const rec = JSON.parse(l);
      rec.status = 299;
      const { leaf_hash: _x, ...rest } = rec;
      rec.leaf_hash = hashLeaf(leafBytes(rest)).toString("base64");
      return JSON.stringify(rec);
    });
    writeFileSync(join(dir, "forged.ndjson"), forged.join("\n") + "\n");
    const f = await cli(["--export", join(dir, "forged.ndjson"), "--checkpoint", note1, "--key", keyFile]);
    expect(f.code).not.toBe(0);
    expect(f.out).toMatch(/checkpoint .*cp1\.txt.*root does not match/);
    // A checkpoint with a tampered signature, and the wrong key.
    writeFileSync(join(dir, "badsig.txt"), readFileSync(note1, "utf8").replace(/ ([A-Za-z0-9+/]{10})/, " AAAAAAAAAA"));
    expect((await cli(["--export", good, "--checkpoint", join(dir, "badsig.txt"), "--key", keyFile])).out).toMatch(
      /badsig\.txt/,
    );
    const otherKey = "svc.ledger/x+00000000+AQ" + "A".repeat(42) + "=";
    const wrong = await cli(["--export", good, "--checkpoint", note1, "--key", otherKey]);
    expect(wrong.code).not.toBe(0);
  });

  it("verifies one record's inclusion on its own", async () => {
    const keyFile = join(dir, "key.txt");
    const record = (await api("/v1/provenance?limit=100")).body.data.at(-1);
    writeFileSync(join(dir, "record.json"), JSON.stringify(record));
    writeFileSync(join(dir, "proof.json"), JSON.stringify((await api(`/v1/provenance/${record.id}/proof`)).body));
    const ok = await cli(["--record", join(dir, "record.json"), "--proof", join(dir, "proof.json"), "--key", keyFile]);
    expect(ok.code, ok.out).toBe(0);
    writeFileSync(join(dir, "record2.json"), JSON.stringify({ ...record, status: 500 }));
    const bad = await cli([
      "--record",
      join(dir, "record2.json"),
      "--proof",
      join(dir, "proof.json"),
      "--key",
      keyFile,
    ]);
    expect(bad.code).not.toBe(0);
    expect(bad.out).toContain(record.id);
  });

  it("a tenant's export redacts other organizations' records, and still verifies", async () => {
    const tenant = await secondOrg(server.url, root.token, "Export tenant");
    await call(server.url, "GET", "/v1/passports", { token: tenant.token });
    await catchUp(await database());
    const note = join(dir, "cp-tenant.txt");
    writeFileSync(note, (await api("/v1/provenance/checkpoint", tenant.token)).body);
    const file = join(dir, "tenant.ndjson");
    await exportTo(file, tenant.token);
    const rows = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(rows.some((r) => r.redacted === true && r.operation === undefined)).toBe(true);
    expect(rows.filter((r) => !r.redacted).every((r) => r.org_did === tenant.orgDid)).toBe(true);
    const ok = await cli(["--export", file, "--checkpoint", note, "--key", join(dir, "key.txt")]);
    expect(ok.code, ok.out).toBe(0);
    expect(ok.out).toMatch(/redacted/);
  });

  it("export ranges out of bounds are 400", async () => {
    expect((await api("/v1/provenance/export?from=5&to=5")).status).toBe(400);
    expect((await api("/v1/provenance/export?to=99999999")).status).toBe(400);
    expect((await api("/v1/provenance/export?from=-1")).status).toBe(400);
  });
});

describe("key rotation and the audit", () => {
  const restart = () => {
    resetKeyRing();
    resetLedgerKeyRing();
  };

  it("rotating the token-signing keys leaves the ledger's key alone: one key verifies checkpoints from before and after", async () => {
    const db = await database();
    await catchUp(db);
    const key = join(dir, "rot-key1.txt");
    writeFileSync(key, (await api("/v1/provenance/verifier-key")).body);
    const before = join(dir, "rot-cp1.txt");
    writeFileSync(before, (await api("/v1/provenance/checkpoint")).body);
    const oldKid = (await keyRing()).current.kid;

    await rotateSigningKey();
    restart();
    const newKid = (await keyRing()).current.kid;
    expect(newKid).not.toBe(oldKid);
    // Tokens signed before the rotation still verify; new ones are signed by the new key.
    expect(decodeProtectedHeader(root.token).kid).toBe(oldKid);
    expect((await api("/v1/passports")).status).toBe(200);
    const fresh = await apiKey();
    expect(decodeProtectedHeader(fresh.token).kid).toBe(newKid);
    expect((await api("/v1/passports", fresh.token)).status).toBe(200);
    expect(
      (await call(server.url, "GET", "/.well-known/jwks.json")).body.keys.map((k: { kid: string }) => k.kid),
    ).toEqual(expect.arrayContaining([oldKid, newKid]));

    await catchUp(db);
    const after = join(dir, "rot-cp2.txt");
    writeFileSync(after, (await api("/v1/provenance/checkpoint")).body);
    expect(readFileSync(after, "utf8")).not.toBe(readFileSync(before, "utf8"));
    expect((await api("/v1/provenance/verifier-key")).body).toBe(readFileSync(key, "utf8"));
    const file = join(dir, "rot-export.ndjson");
    writeFileSync(file, (await api(`/v1/provenance/export?to=${readFileSync(after, "utf8").split("\n")[1]}`)).body);
    // Several checkpoints after one flag, as the README writes it.
    const ok = await cli(["--export", file, "--checkpoint", before, after, "--key", key]);
    expect(ok.code, ok.out).toBe(0);
    expect(ok.out).toMatch(/2 checkpoint\(s\)/);
  });

  it("a deliberate ledger-key rotation is recorded in the ledger, and verifies with both keys", async () => {
    const db = await database();
    const oldKey = (await api("/v1/provenance/verifier-key")).body.trim();
    const { previous, current } = await rotateLedgerKey(db);
    expect(previous).toBe(oldKey);
    expect(current).not.toBe(oldKey);
    expect(current.split("+")[0]).toBe(oldKey.split("+")[0]); // same origin, new key
    restart();
    expect((await api("/v1/provenance/verifier-key")).body.trim()).toBe(current);
    expect((await ledgerIdentity(db)).verifierKeys.slice(-2)).toEqual([oldKey, current]);
    await api("/v1/passports");
    await catchUp(db);
    const cp3 = join(dir, "rot-cp3.txt");
    writeFileSync(cp3, (await api("/v1/provenance/checkpoint")).body);
    const file = join(dir, "rot-export2.ndjson");
    writeFileSync(file, (await api(`/v1/provenance/export?to=${readFileSync(cp3, "utf8").split("\n")[1]}`)).body);
    // The rotation is itself a record of the log, naming the new key.
    const rotation = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .find((r) => r.operation === LEDGER_KEY_ROTATE_OPERATION);
    expect(rotation).toMatchObject({ resource_type: "ledger_key", resource_id: current, decision: "allowed" });

    const newKeyFile = join(dir, "rot-key2.txt");
    writeFileSync(newKeyFile, `${current}\n`);
    const cps = [join(dir, "rot-cp1.txt"), join(dir, "rot-cp2.txt"), cp3];
    const oldOnly = await cli(["--export", file, "--checkpoint", ...cps, "--key", join(dir, "rot-key1.txt")]);
    expect(oldOnly.code).not.toBe(0);
    expect(oldOnly.out).toMatch(/rot-cp3\.txt: the checkpoint carries no signature by this key/);
    const both = await cli([
      "--export",
      file,
      "--checkpoint",
      ...cps,
      "--key",
      join(dir, "rot-key1.txt"),
      "--key",
      newKeyFile,
    ]);
    expect(both.code, both.out).toBe(0);
    expect(both.out).toMatch(/3 checkpoint\(s\)/);
    const bothFile = join(dir, "rot-keys.txt");
    writeFileSync(bothFile, `${oldKey}\n${current}\n`);
    expect((await cli(["--export", file, "--checkpoint", ...cps, "--key", bothFile])).code).toBe(0);
  });

  it("a process holding a ledger key the ledger never signed with refuses to sign rather than fork the key", async () => {
    const db = await database();
    const { generateKeyPairSync } = await import("node:crypto");
    process.env.SVC_LEDGER_KEYS = JSON.stringify([generateKeyPairSync("ed25519").privateKey.export({ format: "jwk" })]);
    try {
      resetLedgerKeyRing();
      await expect(ledgerIdentity(db)).rejects.toThrow(/SVC_LEDGER_KEYS/);
    } finally {
      delete process.env.SVC_LEDGER_KEYS;
      resetLedgerKeyRing();
    }
    expect((await ledgerIdentity(db)).verifierKey).toBe((await api("/v1/provenance/verifier-key")).body.trim());
  });

  it("a deployment upgraded from checkpoints signed by a token-signing key keeps that key as its ledger key", async () => {
    const db = await database();
    const signing = (await keyRing()).current;
    const identity = await ledgerIdentity(db);
    const publicKey = Buffer.from(signing.publicJwk.x as string, "base64url");
    const forgetLedgerKeys = () =>
      db.writeTx((tx) => tx.serviceState.deleteMany({ where: { key: "ledger_verifier_keys" } }));
    // The state an older version left: its newest checkpoint signed by the token-signing key, no ledger key of its own.
    await forgetLedgerKeys();
    process.env.SVC_LEDGER_KEYS = JSON.stringify([signing.privateJwk]);
    try {
      resetLedgerKeyRing();
      await api("/v1/passports");
      await catchUp(db);
    } finally {
      delete process.env.SVC_LEDGER_KEYS;
    }
    const note = (await api("/v1/provenance/checkpoint")).body;
    const latest = verifyCheckpoint(note, parseVerifierKey(verifierKey(identity.origin, publicKey)));
    await forgetLedgerKeys();
    rmSync(join(process.env.DATA_DIR!, "keys", "ledger-keys.json"));
    resetLedgerKeyRing();
    expect((await api("/v1/provenance/verifier-key")).body.trim()).toBe(verifierKey(identity.origin, publicKey));
    await rotateSigningKey();
    resetKeyRing();
    resetLedgerKeyRing();
    await api("/v1/passports");
    await catchUp(db);
    const after = (await api("/v1/provenance/checkpoint")).body;
    expect(verifyCheckpoint(after, parseVerifierKey(verifierKey(identity.origin, publicKey))).treeSize).toBeGreaterThan(
      latest.treeSize,
    );
  });
});
