import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { database } from "@/server/db/client";
import { migrate } from "@/server/db/migrate";
import { hashLeaf, leafBytes, type ProvenanceRecord } from "@/server/provenance/record";
import { apiKey, provenanceCount } from "./harness";
import { createTestDatabase, dropTestDatabase } from "./postgres";
import { nodeArgs } from "./processScripts";

const isPg = process.env.SVC_TEST_ENGINE === "postgres";
// Engine-specific tests are not registered at all on the other engine: a skipped test fails CI.
const describeNever = (..._args: unknown[]) => undefined;

function runCli(args: string[], env: Record<string, string>): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(process.cwd(), "bin/svc.mjs"), ...args], {
      env: { ...process.env, ...env },
    });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    child.on("exit", (code) => resolve({ code: code ?? 1, out }));
  });
}

describe("migrations", () => {
  it("running them again applies nothing and loses nothing", async () => {
    const before = await provenanceCount();
    expect(await migrate()).toEqual([]);
    expect(await provenanceCount()).toBe(before);
    const db = await database();
    const rows = await db.raw.query<{ migration_name: string; checksum: string }>(
      `SELECT "migration_name", "checksum" FROM "_prisma_migrations"`,
    );
    expect(rows.length).toBeGreaterThan(0);
    expect(rows[0]!.checksum).toMatch(/^[0-9a-f]{64}$/);
  });

  it("several processes migrating a fresh database at once all succeed, and it is migrated once", async () => {
    let env: Record<string, string>;
    let drop = async () => {};
    if (isPg) {
      const fresh = await createTestDatabase();
      env = { DATABASE_URL: fresh.url };
      drop = () => dropTestDatabase(fresh.name);
    } else {
      const { mkdtempSync } = await import("node:fs");
      const { tmpdir } = await import("node:os");
      env = { DATA_DIR: mkdtempSync(join(tmpdir(), "svc-mig-")), DATABASE_URL: "" };
    }
    try {
      const results = await Promise.all([1, 2, 3].map(() => runCli(["migrate", "--init"], env)));
      for (const r of results) expect(r.code, r.out).toBe(0);
      expect(results.filter((r) => /migration\(s\) applied/.test(r.out))).toHaveLength(1);
      const key = await runCli(["keys", "create", "--init", "--json", "--capabilities", "svc_api:passports:read"], env);
      expect(key.code, key.out).toBe(0);
      expect(JSON.parse(key.out.trim().split("\n").pop()!)).toMatchObject({
        capabilities: ["svc_api:passports:read"],
        delegation_id: expect.stringMatching(/^dlg_/),
        token: expect.any(String),
      });
    } finally {
      await drop();
    }
  });
});

describe("raw SQL and the single writer", () => {
  // On SQLite by the process's one write lock; on PostgreSQL by the row's lock.
  it("a raw write waits for an open write transaction instead of failing (SQLITE_BUSY)", async () => {
    const db = await database();
    await db.writeTx((t) =>
      t.serviceState.upsert({
        where: { key: "lock_probe" },
        create: { key: "lock_probe", value: "before" },
        update: { value: "before" },
      }),
    );
    const order: string[] = [];
    const tx = db.writeTx(async (t) => {
      await t.serviceState.update({ where: { key: "lock_probe" }, data: { value: "tx" } });
      await new Promise((r) => setTimeout(r, 200));
      order.push("transaction committed");
    });
    await new Promise((r) => setTimeout(r, 20));
    const raw = db.raw
      .execute(`UPDATE "service_state" SET "value" = $1 WHERE "key" = $2`, ["raw", "lock_probe"])
      .then((n) => {
        order.push("raw write");
        return n;
      });
    await Promise.all([tx, raw]);
    expect(order).toEqual(["transaction committed", "raw write"]);
    expect((await db.read.serviceState.findUnique({ where: { key: "lock_probe" } }))?.value).toBe("raw");
  });
});

// The child process always opens SQLite (DATABASE_URL is emptied), whichever suite runs this: it
// runs once, on SQLite.
(isPg ? describeNever : describe)("the database's files", () => {
  it("a fresh DATA_DIR is created 0700 and the SQLite database, -wal and -shm 0600, whatever the umask", async () => {
    const { mkdtempSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const dataDir = join(mkdtempSync(join(tmpdir(), "svc-modes-")), "data");
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, nodeArgs("freshDataDir"), {
        env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: "" },
      });
      let text = "";
      child.stdout.on("data", (d) => (text += d));
      child.stderr.on("data", (d) => (text += d));
      child.on("exit", (code) => (code === 0 ? resolve(text) : reject(new Error(text))));
    });
    const modes = JSON.parse(out.trim().split("\n").pop()!);
    expect(modes).toEqual({ ".": "700", "svc.db": "600", "svc.db-wal": "600", "svc.db-shm": "600" });
  });
});

describe("the provenance ledger's storage", () => {
  it("refuses UPDATE and DELETE at the database level", async () => {
    await apiKey();
    const db = await database();
    await expect(db.raw.execute(`UPDATE "provenance_record" SET "status" = 200`)).rejects.toThrow(/immutable/);
    await expect(db.raw.execute(`DELETE FROM "provenance_record"`)).rejects.toThrow(/immutable/);
    if (isPg) await expect(db.raw.execute(`TRUNCATE "provenance_record"`)).rejects.toThrow(/immutable/);
    await expect(db.read.provenanceRecord.deleteMany({})).rejects.toThrow();
    expect(await provenanceCount()).toBeGreaterThan(0);
  });

  it("every stored record's leaf hash can be recomputed from its published form", async () => {
    const db = await database();
    const rows = await db.read.provenanceRecord.findMany({ orderBy: { seq: "asc" } });
    expect(rows.length).toBeGreaterThan(0);
    rows.forEach((r, i) => {
      expect(Number(r.seq)).toBe(i);
      const published: ProvenanceRecord = {
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
        decision: r.decision as "allowed" | "denied",
        status: r.status,
        request_hash: r.requestHash,
        request_id: r.requestId,
        leaf_hash: r.leafHash,
      };
      expect(hashLeaf(leafBytes(published)).toString("base64")).toBe(r.leafHash);
    });
  });
});
