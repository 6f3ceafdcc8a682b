import { execFile, type ChildProcess } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import BetterSqlite3 from "better-sqlite3";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { database } from "@/server/db/client";
import { catchUp } from "@/server/ledger/buildTree";
import { call, ed25519Jwk, useTestServer } from "./harness";
import { createTestDatabase, dropTestDatabase } from "./postgres";
import { exited, killProcessGroups, startServingProcess } from "./processes";

// Engine-specific tests are not registered at all on the other engine: a skipped test fails CI.
const itNever = (..._args: unknown[]) => undefined;
const onSqlite = process.env.SVC_TEST_ENGINE === "postgres" ? itNever : it;
const onPostgres = process.env.SVC_TEST_ENGINE === "postgres" ? it : itNever;

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
const scratch = mkdtempSync(join(tmpdir(), "svc-backup-"));
const children: ChildProcess[] = [];
const databases: string[] = [];
afterAll(async () => {
  killProcessGroups(children);
  for (const name of databases) await dropTestDatabase(name);
  rmSync(scratch, { recursive: true, force: true });
});

/**
 * Writes through the API (a passport each, 4 at a time) and signs checkpoints (the tree builder's
 * rounds) until stopped; returns how many writes were acknowledged.
 */
function keepWriting(): { stop(): Promise<number> } {
  let running = true;
  let acknowledged = 0;
  const writer = async () => {
    while (running) {
      const r = await call(ctx.server.url, "POST", "/v1/passports", {
        token: ctx.root.token,
        body: { type: "agent", name: `writer ${acknowledged}`, public_key: ed25519Jwk() },
      });
      expect(r.status).toBe(201);
      acknowledged++;
    }
  };
  const checkpointer = async () => {
    while (running) {
      await catchUp(await database());
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const all = Promise.all([writer(), writer(), writer(), writer(), checkpointer()]);
  return {
    async stop() {
      running = false;
      await all;
      return acknowledged;
    },
  };
}

async function latestCheckpoint(): Promise<{ size: number; note: string }> {
  await catchUp(await database());
  const db = await database();
  const cp = await db.read.ledgerCheckpoint.findFirst({ orderBy: { treeSize: "desc" } });
  return { size: Number(cp!.treeSize), note: cp!.note };
}

async function checkpointNoteOfSize(size: number): Promise<string | undefined> {
  const db = await database();
  return (await db.read.ledgerCheckpoint.findUnique({ where: { treeSize: BigInt(size) } }))?.note;
}

/**
 * Serves the restored database in a process of its own and checks with `svc verify` that its
 * export verifies against the checkpoint it was restored with and the latest it serves (the
 * restored deployment may already have signed a newer one, extending it).
 */
async function expectRestoredLedgerVerifies(env: Record<string, string>, restoredNote: string): Promise<void> {
  const { url } = await startServingProcess("otherProcess", { env, detached: true, children, name: "restored" });
  const dir = mkdtempSync(join(scratch, "verify-"));
  const get = async (path: string) => {
    const r = await call(url, "GET", path, { token: ctx.root.token });
    expect(r.status, path).toBe(200);
    return r.body as string;
  };
  writeFileSync(join(dir, "restored.txt"), restoredNote);
  const served = await get("/v1/provenance/checkpoint");
  writeFileSync(join(dir, "served.txt"), served);
  writeFileSync(join(dir, "key.txt"), await get("/v1/provenance/verifier-key"));
  writeFileSync(join(dir, "export.ndjson"), await get("/v1/provenance/export"));
  const checkpoints = served === restoredNote ? ["restored.txt"] : ["restored.txt", "served.txt"];
  const verified = await promisify(execFile)(process.execPath, [
    join(process.cwd(), "bin/svc.mjs"),
    "verify",
    "--export",
    join(dir, "export.ndjson"),
    "--checkpoint",
    ...checkpoints.map((f) => join(dir, f)),
    "--key",
    join(dir, "key.txt"),
  ]);
  expect(verified.stdout).toMatch(/ok: \d+ records verified/);
  expect(verified.stdout.match(/ok: checkpoint of/g)).toHaveLength(checkpoints.length);
}

describe("backup and restore", () => {
  onSqlite(
    "backs up while the server writes; the restore verifies and ends at the checkpoint before the backup",
    async () => {
      const live = process.env.DATA_DIR!;
      const file = join(scratch, "svc-backup.db");
      const writes = keepWriting();
      await new Promise((r) => setTimeout(r, 500));
      const before = await latestCheckpoint();
      const backup = await svc(["backup", file], { DATA_DIR: live });
      const after = await latestCheckpoint();
      const acknowledged = await writes.stop();
      expect(backup.code, backup.stderr).toBe(0);
      expect(backup.stderr).toContain(`using SQLite at ${join(live, "svc.db")}`);
      expect(backup.stdout).toMatch(/Backed up .* provenance records, latest checkpoint of \d+ records/);
      expect(backup.stdout).toContain("DATA_DIR/keys");
      expect(acknowledged).toBeGreaterThan(10);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(existsSync(`${file}-wal`) || existsSync(`${file}-shm`)).toBe(false);

      // The backup is one snapshot: its latest checkpoint is one the live ledger signed before it
      // ended, at least the one before it began, and its records cover that checkpoint.
      const copy = new BetterSqlite3(file, { readonly: true });
      const inCopy = copy
        .prepare(`SELECT tree_size, note FROM ledger_checkpoint ORDER BY tree_size DESC LIMIT 1`)
        .get() as {
        tree_size: number;
        note: string;
      };
      const records = (copy.prepare(`SELECT COUNT(*) AS n FROM provenance_record`).get() as { n: number }).n;
      copy.close();
      expect(inCopy.tree_size).toBeGreaterThanOrEqual(before.size);
      expect(inCopy.tree_size).toBeLessThanOrEqual(after.size);
      expect(inCopy.note).toBe(await checkpointNoteOfSize(inCopy.tree_size));
      expect(records).toBeGreaterThanOrEqual(inCopy.tree_size);

      // An existing backup is not overwritten without --force.
      const again = await svc(["backup", file], { DATA_DIR: live });
      expect(again.code).toBe(3);
      expect(again.stderr).toContain("--force");

      // The live database is held open by this server: the restore refuses it, even with --force.
      // (Only stat it: reading it would close a descriptor of this process's, which drops the
      // process's POSIX locks on the file, SQLite's included.)
      const liveInode = statSync(join(live, "svc.db")).ino;
      const unforced = await svc(["restore", file], { DATA_DIR: live });
      expect(unforced.code).toBe(3);
      expect(unforced.stderr).toMatch(/exists; add --force/);
      const inUse = await svc(["restore", file, "--force"], { DATA_DIR: live });
      expect(inUse.code).toBe(3);
      expect(inUse.stderr).toMatch(/is in use/);
      expect(statSync(join(live, "svc.db")).ino).toBe(liveInode);
      expect((await call(ctx.server.url, "GET", "/v1/passports", { token: ctx.root.token })).status).toBe(200);

      // Restored elsewhere with the deployment's keys: it serves, verifies, and its latest
      // checkpoint is the backup's.
      const restoredDir = join(scratch, "restored");
      cpSync(join(live, "keys"), join(restoredDir, "keys"), { recursive: true });
      const restored = await svc(["restore", file], { DATA_DIR: restoredDir });
      expect(restored.code, restored.stderr).toBe(0);
      expect(restored.stdout).toContain(`latest checkpoint of ${inCopy.tree_size} records`);
      await expectRestoredLedgerVerifies({ DATA_DIR: restoredDir }, inCopy.note);

      // Once nothing holds it, --force replaces a database (here the restored one, by itself).
      killProcessGroups(children);
      await exited(children); // gone, not merely signalled: a fixed wait could end before a loaded machine reaps it
      const replaced = await svc(["restore", file, "--force"], { DATA_DIR: restoredDir });
      expect(replaced.code, replaced.stderr).toBe(0);

      // A file that is not an svc database is refused before anything is touched.
      const junk = join(scratch, "junk.db");
      writeFileSync(junk, "not a database");
      const bad = await svc(["restore", junk, "--force"], { DATA_DIR: restoredDir });
      expect(bad.code).toBe(3);
    },
    // A dozen svc processes: it passed 60 s on a loaded machine (under tsx). A guard, not a bound on behaviour.
    180_000,
  );

  onPostgres(
    "prints pg_dump guidance with the password redacted, and runs it with --pg-dump under writes",
    async () => {
      const url = new URL(process.env.DATABASE_URL!);
      url.username = url.username || "postgres";
      url.password = "not-the-real-secret"; // trust authentication on the test server ignores it
      const databaseUrl = url.toString();
      const file = join(scratch, "svc.pgdump");
      const env = { DATABASE_URL: databaseUrl, DATA_DIR: process.env.DATA_DIR };

      const guidance = await svc(["backup", file], env);
      expect(guidance.code).toBe(4);
      expect(guidance.stderr).toContain("pg_dump --format=custom");
      expect(guidance.stderr).toContain(`:***@${url.host}${url.pathname}`);
      expect(guidance.stderr).not.toContain("not-the-real-secret");
      expect(existsSync(file)).toBe(false);

      const writes = keepWriting();
      await new Promise((r) => setTimeout(r, 500));
      const before = await latestCheckpoint();
      const dumped = await svc(["backup", file, "--pg-dump"], env);
      const after = await latestCheckpoint();
      expect(await writes.stop()).toBeGreaterThan(10);
      expect(dumped.code, dumped.stderr).toBe(0);
      expect(dumped.stderr + dumped.stdout).not.toContain("not-the-real-secret");
      expect(statSync(file).size).toBeGreaterThan(0);

      // The live database has a server on it: restoring there is refused. A running svc process
      // always holds a session (its job listener's LISTEN); this test's in-process server holds only
      // pooled connections, closed after 10 s idle, and the CLI can take longer than that to start
      // on a loaded machine (it then found no session and restored over the live database). So the
      // server's session is held here for the check.
      const session = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await session.connect();
      let busy: Awaited<ReturnType<typeof svc>>;
      try {
        busy = await svc(["restore", file, "--pg-restore", "--force"], env);
      } finally {
        await session.end();
      }
      expect(busy.code).toBe(3);
      expect(busy.stderr).toMatch(/other session/);

      const fresh = await createTestDatabase();
      databases.push(fresh.name);
      const freshEnv = { DATABASE_URL: fresh.url, DATA_DIR: process.env.DATA_DIR! };
      expect((await svc(["restore", file], freshEnv)).code).toBe(4);
      const restored = await svc(["restore", file, "--pg-restore"], freshEnv);
      expect(restored.code, restored.stderr).toBe(0);
      const again = await svc(["restore", file, "--pg-restore"], freshEnv);
      expect(again.code).toBe(3);
      expect(again.stderr).toContain("--force");

      const client = new pg.Client({ connectionString: fresh.url });
      await client.connect();
      // ORDER BY the table's column, not the text output column of the same name: ordered as text,
      // "9" came after "34" (the test failed whenever the sizes crossed a power of ten).
      const { rows } = await client.query<{ tree_size: string; note: string }>(
        `SELECT tree_size::text AS tree_size, note FROM ledger_checkpoint ORDER BY ledger_checkpoint.tree_size DESC LIMIT 1`,
      );
      await client.end();
      const size = Number(rows[0]!.tree_size);
      // Said in full when it fails.
      const story = JSON.stringify({
        before: before.size,
        after: after.size,
        restored: size,
        dumped,
        restored_: restored,
      });
      expect(size, story).toBeGreaterThanOrEqual(before.size);
      expect(size, story).toBeLessThanOrEqual(after.size);
      expect(rows[0]!.note).toBe(await checkpointNoteOfSize(size));
      await expectRestoredLedgerVerifies(freshEnv, rows[0]!.note);
    },
    // A dozen svc processes: it passed 60 s on a loaded machine (under tsx). A guard, not a bound on behaviour.
    180_000,
  );
});
