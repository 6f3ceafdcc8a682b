import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { call, useTestServer } from "./harness";
import { adminUrl, createTestDatabase, dropTestDatabase } from "./postgres";

// Engine-specific tests are not registered at all on the other engine: a skipped test fails CI.
const itNever = (..._args: unknown[]) => undefined;
// The tests given only a DATA_DIR open SQLite whichever suite runs them: they run once, on SQLite.
const onSqliteOnly = process.env.SVC_TEST_ENGINE === "postgres" ? itNever : it;

/** `npx svc …` as an operator runs it: a separate process, with only the environment it is given. */
function svc(
  args: string[],
  env: Record<string, string | undefined>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(process.cwd(), "bin/svc.mjs"), ...args],
      { env: { NODE_ENV: "test", PATH: process.env.PATH, HOME: process.env.HOME, ...env } },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

const ctx = useTestServer();
const scratch = mkdtempSync(join(tmpdir(), "svc-cli-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("the command line's database", () => {
  it("says which database it uses, and the key it mints works against the server on that database", async () => {
    const r = await svc(["keys", "create", "--token-only"], {
      DATA_DIR: process.env.DATA_DIR,
      ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
    });
    expect(r.code, r.stderr).toBe(0);
    if (process.env.DATABASE_URL) {
      const url = new URL(process.env.DATABASE_URL);
      expect(r.stderr).toContain(`using PostgreSQL at ${url.hostname}:${url.port}${url.pathname}`);
      if (url.password) expect(r.stderr).not.toContain(url.password);
    } else expect(r.stderr).toContain(`using SQLite at ${join(process.env.DATA_DIR!, "svc.db")}`);
    const token = r.stdout.trim();
    expect(token.split(".")).toHaveLength(3);
    expect((await call(ctx.server.url, "GET", "/v1/passports", { token })).status).toBe(200);
  });

  onSqliteOnly("refuses a DATA_DIR with no database, creates nothing there, and names --init", async () => {
    const dir = join(scratch, "elsewhere");
    const r = await svc(["keys", "create"], { DATA_DIR: dir });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`using SQLite at ${join(dir, "svc.db")}`);
    expect(r.stderr).toMatch(/does not exist/);
    expect(r.stderr).toContain("--init");
    expect(r.stdout).toBe("");
    expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([]);
    for (const args of [
      ["setup-link"],
      ["signing-keys", "rotate"],
      ["ledger-key", "rotate"],
      ["compliance-key"],
      ["migrate"],
    ]) {
      const other = await svc(args, { DATA_DIR: dir });
      expect(other.code, args.join(" ")).toBe(3);
    }
    expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([]);
  });

  onSqliteOnly(
    "a migrated database without a root organization is refused too; --init sets up a deployment",
    async () => {
      const dir = join(scratch, "fresh");
      expect((await svc(["migrate", "--init"], { DATA_DIR: dir })).code).toBe(0);
      const refused = await svc(["keys", "create"], { DATA_DIR: dir });
      expect(refused.code).toBe(3);
      expect(refused.stderr).toMatch(/no root organization.*\n.*\n.*--init/);
      const created = await svc(["keys", "create", "--init", "--json"], { DATA_DIR: dir });
      expect(created.code, created.stderr).toBe(0);
      expect(JSON.parse(created.stdout).org_did).toMatch(/^did:svc:/);
      expect((await svc(["keys", "create", "--token-only"], { DATA_DIR: dir })).code).toBe(0);
    },
  );

  (process.env.SVC_TEST_ENGINE === "postgres" ? it : itNever)(
    "refuses an empty PostgreSQL database without --init",
    async () => {
      const empty = await createTestDatabase();
      try {
        const r = await svc(["keys", "create"], { DATABASE_URL: empty.url, DATA_DIR: join(scratch, "pg") });
        expect(r.code).toBe(3);
        expect(r.stderr).toContain(`using PostgreSQL at `);
        expect(r.stderr).toMatch(/never migrated[\s\S]*--init/);
      } finally {
        await dropTestDatabase(empty.name);
      }
    },
  );

  (process.env.SVC_TEST_ENGINE === "postgres" ? it : itNever)(
    "a PostgreSQL database that does not exist: refused without --init (naming it), created by migrate --init and keys create --init",
    async () => {
      const name = `svc_test_missing_${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
      const url = new URL(adminUrl());
      url.pathname = `/${name}`;
      const env = { DATABASE_URL: url.toString(), DATA_DIR: join(scratch, "pg-missing") };
      try {
        const refused = await svc(["keys", "create"], env);
        expect(refused.code, refused.stderr).toBe(3);
        expect(refused.stderr).toMatch(/does not exist[\s\S]*--init/);
        const migrated = await svc(["migrate", "--init"], env);
        expect(migrated.code, migrated.stderr).toBe(0);
        expect(migrated.stdout + migrated.stderr).toContain(`created the PostgreSQL database ${name}`);
        const key = await svc(["keys", "create", "--init", "--token-only"], env);
        expect(key.code, key.stderr).toBe(0);
        expect(key.stdout.trim().split(".")).toHaveLength(3);
      } finally {
        await dropTestDatabase(name);
      }
    },
  );
});
