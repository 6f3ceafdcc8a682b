import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, renameSync, rmSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { parseArgs } from "node:util";
import type BetterSqlite3 from "better-sqlite3";
import { config, type Config } from "../config";
import { describeDatabase } from "../setup/databaseState";

/**
 * `npx svc backup <file>` and `npx svc restore <file>`.
 *
 * SQLite: the backup is SQLite's online backup (better-sqlite3's `db.backup()`) from a connection
 * of its own, copied in one step, so it is one consistent snapshot taken inside a read transaction
 * while the server goes on reading and writing (WAL readers never block writers). The restore
 * refuses while any process holds the database open (a running server would keep serving from
 * state it cached, and its next write would mix two histories): it takes SQLite's exclusive lock
 * to prove nobody else has it open, then swaps the file in.
 *
 * PostgreSQL: svc does not reimplement pg_dump. Without `--pg-dump` / `--pg-restore` the command
 * prints the exact pg_dump / pg_restore command for the configured database (password redacted)
 * and exits 4; with the flag it runs it (the password goes through PGPASSWORD, never the
 * process's arguments).
 *
 * The database holds everything but the signing keys: DATA_DIR/keys (or the SVC_*_KEYS variables)
 * is backed up separately, like any secret.
 */

const USAGE_ERROR = 2;
const REFUSED = 3;
/** PostgreSQL without --pg-dump / --pg-restore: the guidance was printed, nothing was done. */
const GUIDANCE_ONLY = 4;

const KEYS_REMINDER =
  "The keys are not in the database: keep DATA_DIR/keys (or SVC_SIGNING_KEYS, SVC_LEDGER_KEYS, SVC_SECRET, SVC_ENCRYPTION_KEYS) with the backup, as a secret.";

function sqliteFile(cfg: Config): string {
  return cfg.databaseUrl.replace(/^file:/, "");
}

async function openSqlite(file: string, options: BetterSqlite3.Options = {}): Promise<BetterSqlite3.Database> {
  const { default: Sqlite } = await import("better-sqlite3");
  return new Sqlite(file, { timeout: 5000, ...options });
}

interface LedgerSummary {
  records: number;
  checkpointSize: number | null;
}

/** Checks that `file` is an intact svc database and says what its ledger holds. */
async function inspectSqlite(file: string): Promise<LedgerSummary> {
  const db = await openSqlite(file, { readonly: true, fileMustExist: true });
  try {
    const check = db.pragma("quick_check", { simple: true });
    if (check !== "ok") throw new Error(`${file} is damaged: ${String(check)}`);
    const tables = db
      .prepare(
        `SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' AND name IN ('_prisma_migrations', 'service_state', 'provenance_record', 'ledger_checkpoint')`,
      )
      .get() as { n: number };
    if (tables.n < 4) throw new Error(`${file} is not an svc database`);
    const { records } = db.prepare(`SELECT COUNT(*) AS records FROM provenance_record`).get() as { records: number };
    const { size } = db.prepare(`SELECT MAX(tree_size) AS size FROM ledger_checkpoint`).get() as {
      size: number | null;
    };
    return { records, checkpointSize: size };
  } finally {
    db.close();
  }
}

const describeLedger = (s: LedgerSummary) =>
  `${s.records} provenance records, latest checkpoint ${s.checkpointSize === null ? "none" : `of ${s.checkpointSize} records`}`;

/** The URL with its password replaced by `***`, and the password apart (for PGPASSWORD). */
export function redactedUrl(databaseUrl: string): { shown: string; bare: string; password: string | undefined } {
  const url = new URL(databaseUrl);
  const password = url.password ? decodeURIComponent(url.password) : undefined;
  url.password = "";
  const bare = url.toString();
  if (password) url.password = "***";
  return { shown: url.toString(), bare, password };
}

const shellQuote = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

function pgCommand(
  tool: "pg_dump" | "pg_restore",
  file: string,
  databaseUrl: string,
): { args: string[]; shown: string; env: Record<string, string> } {
  const { shown, bare, password } = redactedUrl(databaseUrl);
  const args =
    tool === "pg_dump"
      ? ["--format=custom", "--no-owner", `--file=${file}`, `--dbname=${bare}`]
      : ["--clean", "--if-exists", "--no-owner", "--single-transaction", `--dbname=${bare}`, file];
  const shownArgs = args.map((a) => (a === `--dbname=${bare}` ? `--dbname=${shown}` : a));
  return {
    args,
    shown: `${password ? "PGPASSWORD=*** " : ""}${tool} ${shownArgs.map(shellQuote).join(" ")}`,
    env: password ? { PGPASSWORD: password } : {},
  };
}

function hasTool(tool: string): boolean {
  return spawnSync(tool, ["--version"], { stdio: "ignore" }).status === 0;
}

function runPgTool(tool: "pg_dump" | "pg_restore", file: string, cfg: Config): number {
  const cmd = pgCommand(tool, file, cfg.databaseUrl);
  if (!hasTool(tool)) {
    console.error(`svc: ${tool} is not installed here (PostgreSQL's client tools). Run, where it is:\n  ${cmd.shown}`);
    return GUIDANCE_ONLY;
  }
  console.error(`svc: running ${cmd.shown}`);
  const r = spawnSync(tool, cmd.args, { stdio: ["ignore", "inherit", "inherit"], env: { ...process.env, ...cmd.env } });
  if (r.status !== 0) {
    console.error(`svc: ${tool} failed (exit ${r.status ?? r.signal})`);
    return 1;
  }
  return 0;
}

/** Other sessions on the PostgreSQL database: a server or worker holding it. */
async function otherPgSessions(databaseUrl: string): Promise<number> {
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>(
      `SELECT COUNT(*)::text AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
    );
    return Number(rows[0]!.n);
  } finally {
    await client.end();
  }
}

async function pgHasTables(databaseUrl: string): Promise<boolean> {
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>(
      `SELECT COUNT(*)::text AS n FROM information_schema.tables WHERE table_schema = current_schema()`,
    );
    return Number(rows[0]!.n) > 0;
  } finally {
    await client.end();
  }
}

export async function backupCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: { force: { type: "boolean" }, "pg-dump": { type: "boolean" } },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length !== 1) {
    console.error("usage: npx svc backup <file> [--force] [--pg-dump]");
    return USAGE_ERROR;
  }
  const target = resolve(positionals[0]!);
  if (existsSync(target) && !values.force) {
    console.error(`svc: ${target} exists; add --force to overwrite it`);
    return REFUSED;
  }
  if (!existsSync(dirname(target))) {
    console.error(`svc: the directory ${dirname(target)} does not exist`);
    return USAGE_ERROR;
  }
  const cfg = config();
  console.error(`svc: using ${describeDatabase(cfg)}`);
  if (cfg.engine === "postgresql") {
    const cmd = pgCommand("pg_dump", target, cfg.databaseUrl);
    if (!values["pg-dump"]) {
      console.error(
        `svc: the database is PostgreSQL: back it up with pg_dump (a consistent snapshot, safe while svc runs):\n  ${cmd.shown}\n` +
          `Restore with npx svc restore <file> --pg-restore (or pg_restore). Add --pg-dump to have svc run pg_dump now.\n${KEYS_REMINDER}`,
      );
      return GUIDANCE_ONLY;
    }
    const code = runPgTool("pg_dump", target, cfg);
    if (code === 0) {
      chmodSync(target, 0o600);
      console.log(`Backed up to ${target} (pg_dump custom format, ${statSync(target).size} bytes).\n${KEYS_REMINDER}`);
    }
    return code;
  }
  const source = sqliteFile(cfg);
  if (!existsSync(source)) {
    console.error(`svc: refusing: there is no database at ${source}`);
    return REFUSED;
  }
  const started = Date.now();
  const partial = `${target}.${process.pid}.partial`;
  const db = await openSqlite(source, { readonly: true, fileMustExist: true });
  try {
    // All pages in one step: one read transaction, so the copy is one snapshot even under writes.
    await db.backup(partial, { progress: () => 0x7fffffff });
  } catch (e) {
    rmSync(partial, { force: true });
    throw e;
  } finally {
    db.close();
  }
  chmodSync(partial, 0o600);
  // A file on its own: the copy carries the live database's WAL mode, which needs -wal/-shm companions.
  const copy = await openSqlite(partial, { fileMustExist: true });
  try {
    copy.pragma("journal_mode = DELETE");
  } finally {
    copy.close();
  }
  const summary = await inspectSqlite(partial);
  renameSync(partial, target);
  console.log(
    `Backed up ${source} to ${target} (${(statSync(target).size / 1_048_576).toFixed(1)} MB, ${describeLedger(summary)}) in ${((Date.now() - started) / 1000).toFixed(1)} s.\n${KEYS_REMINDER}`,
  );
  return 0;
}

export async function restoreCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: { force: { type: "boolean" }, "pg-restore": { type: "boolean" } },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length !== 1) {
    console.error("usage: npx svc restore <file> [--force] [--pg-restore]");
    return USAGE_ERROR;
  }
  const source = resolve(positionals[0]!);
  if (!existsSync(source)) {
    console.error(`svc: no backup at ${source}`);
    return USAGE_ERROR;
  }
  const cfg = config();
  console.error(`svc: using ${describeDatabase(cfg)}`);
  if (cfg.engine === "postgresql") {
    const cmd = pgCommand("pg_restore", source, cfg.databaseUrl);
    if (!values["pg-restore"]) {
      console.error(
        `svc: the database is PostgreSQL: stop every svc process on it, then restore with pg_restore:\n  ${cmd.shown}\n` +
          `Add --pg-restore to have svc run it (it refuses while another session uses the database).`,
      );
      return GUIDANCE_ONLY;
    }
    const others = await otherPgSessions(cfg.databaseUrl);
    if (others > 0) {
      console.error(
        `svc: refusing: ${others} other session(s) use the database (a server or worker still running?). Stop them first.`,
      );
      return REFUSED;
    }
    if ((await pgHasTables(cfg.databaseUrl)) && !values.force) {
      console.error("svc: refusing: the database is not empty; add --force to replace its content with the backup");
      return REFUSED;
    }
    const code = runPgTool("pg_restore", source, cfg);
    if (code === 0) console.log(`Restored ${source}. Start svc: it applies any newer migration.`);
    return code;
  }
  const summary = await inspectSqlite(source).catch((e: Error) => e);
  if (summary instanceof Error) {
    console.error(`svc: refusing: ${summary.message}`);
    return REFUSED;
  }
  const target = sqliteFile(cfg);
  const exists = existsSync(target);
  if (exists && !values.force) {
    console.error(`svc: refusing: ${target} exists; add --force to replace it with the backup`);
    return REFUSED;
  }
  mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
  const incoming = `${target}.${process.pid}.restoring`;
  copyFileSync(source, incoming);
  chmodSync(incoming, 0o600);
  try {
    if (exists) {
      // Every open connection holds a lock in WAL mode: the exclusive lock proves no server (nor
      // worker, nor CLI) has the database open. Held until the file is swapped.
      const lock = await openSqlite(target, { timeout: 0, fileMustExist: true });
      try {
        lock.pragma("locking_mode = EXCLUSIVE");
        lock.exec("BEGIN EXCLUSIVE");
      } catch {
        lock.close();
        console.error(
          `svc: refusing: ${target} is in use (a server, worker or another command has it open). Stop it, then restore.`,
        );
        return REFUSED;
      }
      lock.exec("ROLLBACK");
      // The database goes whole: its WAL would otherwise be replayed onto the restored file.
      lock.pragma("wal_checkpoint(TRUNCATE)");
      rmSync(`${target}-wal`, { force: true });
      rmSync(`${target}-shm`, { force: true });
      renameSync(incoming, target);
      lock.close();
    } else renameSync(incoming, target);
  } finally {
    rmSync(incoming, { force: true });
  }
  for (const companion of [`${target}-wal`, `${target}-shm`]) rmSync(companion, { force: true });
  console.log(
    `Restored ${source} to ${target} (${describeLedger(summary)}). Start svc: it applies any newer migration.\n${KEYS_REMINDER}`,
  );
  return 0;
}
