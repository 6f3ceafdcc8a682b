import { createHash, randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { config } from "../config";
import { prepareSqliteFile, tightenSqliteFiles } from "./sqliteFile";
import { createPostgresDatabaseIfMissing } from "./createPostgresDatabase";

/**
 * Applies the committed migrations in prisma/migrations/<provider>/ in name order, recording each
 * in `_prisma_migrations` exactly as `prisma migrate deploy` does, so either tool can take over.
 * Safe to run twice and from several processes at once: PostgreSQL takes Prisma's own advisory
 * lock, SQLite an exclusive transaction.
 */
export async function migrate(log: (line: string) => void = () => undefined): Promise<string[]> {
  const cfg = config();
  // The paths are computed at run time: turbopackIgnore keeps Next.js's file tracer from tracing
  // the whole project for them (~40 build warnings); the migrations ship beside the build anyway.
  const dir = join(/* turbopackIgnore: true */ migrationsRoot(), cfg.engine);
  const migrations = readdirSync(/* turbopackIgnore: true */ dir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(
        /* turbopackIgnore: true */ join(/* turbopackIgnore: true */ dir, name, "migration.sql"),
        "utf8",
      );
      return { name, sql, checksum: createHash("sha256").update(sql).digest("hex") };
    });
  return cfg.engine === "postgresql"
    ? migratePostgres(cfg.databaseUrl, migrations, log)
    : migrateSqlite(cfg.databaseUrl, migrations, log);
}

interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

export function migrationsRoot(): string {
  // Next.js bundles server code, so resolve from the working directory, with the source tree as fallback.
  const fromCwd = join(/* turbopackIgnore: true */ process.cwd(), "prisma/migrations");
  try {
    readdirSync(/* turbopackIgnore: true */ fromCwd);
    return fromCwd;
  } catch {
    return join(/* turbopackIgnore: true */ dirname(new URL(import.meta.url).pathname), "../../prisma/migrations");
  }
}

async function migrateSqlite(url: string, migrations: Migration[], log: (l: string) => void): Promise<string[]> {
  const { default: Database } = await import("better-sqlite3");
  const file = prepareSqliteFile(url);
  const db = new Database(file, { timeout: 30_000 });
  try {
    db.pragma("journal_mode = WAL");
    tightenSqliteFiles(file);
    db.exec(`CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
      "id" TEXT PRIMARY KEY NOT NULL, "checksum" TEXT NOT NULL, "finished_at" DATETIME,
      "migration_name" TEXT NOT NULL, "logs" TEXT, "rolled_back_at" DATETIME,
      "started_at" DATETIME NOT NULL DEFAULT current_timestamp, "applied_steps_count" INTEGER UNSIGNED NOT NULL DEFAULT 0)`);
    const applied: string[] = [];
    // A migration that rebuilds a table (SQLite cannot add a constraint to one) must not have the
    // drop of the old table checked against foreign keys: they are off while migrating (the pragma
    // only takes effect outside a transaction), and every key is checked before the commit instead.
    db.pragma("foreign_keys = OFF");
    db.exec("BEGIN EXCLUSIVE");
    try {
      const done = new Set(
        (
          db
            .prepare(
              `SELECT migration_name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
            )
            .all() as { migration_name: string }[]
        ).map((r) => r.migration_name),
      );
      for (const m of migrations) {
        if (done.has(m.name)) continue;
        db.exec(m.sql);
        db.prepare(
          `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, started_at, applied_steps_count) VALUES (?, ?, ?, ?, ?, 1)`,
        ).run(randomUUID(), m.checksum, Date.now(), m.name, Date.now());
        applied.push(m.name);
        log(`applied migration ${m.name}`);
      }
      const broken = db.pragma("foreign_key_check") as { table: string; rowid: number; parent: string }[];
      if (broken.length > 0) {
        throw new Error(
          `migration stopped: ${broken.length} row(s) reference rows that do not exist (first: ${broken[0]!.table} rowid ${broken[0]!.rowid} -> ${broken[0]!.parent}); nothing was changed`,
        );
      }
      db.exec("COMMIT");
    } catch (e) {
      db.exec("ROLLBACK");
      throw e;
    } finally {
      db.pragma("foreign_keys = ON");
    }
    return applied;
  } finally {
    db.close();
  }
}

const PRISMA_ADVISORY_LOCK = 72707369;

async function migratePostgres(url: string, migrations: Migration[], log: (l: string) => void): Promise<string[]> {
  await createPostgresDatabaseIfMissing(url, log);
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: url });
  // A lost connection fails the query in flight (and so the migration); unheard, node-postgres would throw it again and kill the process.
  client.on("error", () => undefined);
  await client.connect();
  try {
    await client.query("SELECT pg_advisory_lock($1)", [PRISMA_ADVISORY_LOCK]);
    await client.query(`CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
      "id" VARCHAR(36) PRIMARY KEY NOT NULL, "checksum" VARCHAR(64) NOT NULL, "finished_at" TIMESTAMPTZ,
      "migration_name" VARCHAR(255) NOT NULL, "logs" TEXT, "rolled_back_at" TIMESTAMPTZ,
      "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(), "applied_steps_count" INTEGER NOT NULL DEFAULT 0)`);
    const done = new Set(
      (
        await client.query(
          `SELECT migration_name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
        )
      ).rows.map((r) => r.migration_name as string),
    );
    const applied: string[] = [];
    for (const m of migrations) {
      if (done.has(m.name)) continue;
      await client.query("BEGIN");
      try {
        await client.query(m.sql);
        await client.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, started_at, applied_steps_count) VALUES ($1, $2, now(), $3, now(), 1)`,
          [randomUUID(), m.checksum, m.name],
        );
        await client.query("COMMIT");
      } catch (e) {
        await client.query("ROLLBACK");
        throw e;
      }
      applied.push(m.name);
      log(`applied migration ${m.name}`);
    }
    return applied;
  } finally {
    await client.query("SELECT pg_advisory_unlock($1)", [PRISMA_ADVISORY_LOCK]).catch(() => undefined);
    await client.end();
  }
}
