import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { config, type Config } from "../config";
import { database } from "../db/client";

/**
 * What the command line says about the database it is about to use, and whether that database is
 * one a server already set up: the CLI must never quietly create a second deployment because it
 * was run with another DATA_DIR than the server.
 */
export function sqliteFile(cfg: Config = config()): string {
  return resolve(cfg.databaseUrl.replace(/^file:/, ""));
}

/** "SQLite at /abs/svc.db" or "PostgreSQL at host:port/db as user" (never the password). */
export function describeDatabase(cfg: Config = config()): string {
  if (cfg.engine === "sqlite") return `SQLite at ${sqliteFile(cfg)}`;
  const url = new URL(cfg.databaseUrl);
  const user = url.username ? ` as ${decodeURIComponent(url.username)}` : "";
  return `PostgreSQL at ${url.hostname}${url.port ? `:${url.port}` : ""}${url.pathname}${user}`;
}

export type DatabaseState = "missing" | "not_migrated" | "no_root_organization" | "ready";

/** Looks without creating anything: an absent SQLite file is not opened (opening would create it). */
export async function databaseState(cfg: Config = config()): Promise<DatabaseState> {
  if (cfg.engine === "sqlite" && !existsSync(sqliteFile(cfg))) return "missing";
  const db = await database();
  let migrations: { n: number | string } | undefined;
  try {
    [migrations] = await db.raw.query<{ n: number | string }>(
      db.engine === "sqlite"
        ? `SELECT COUNT(*) AS "n" FROM sqlite_master WHERE type = 'table' AND name IN ('_prisma_migrations', 'service_state')`
        : `SELECT COUNT(*) AS "n" FROM information_schema.tables WHERE table_schema = current_schema() AND table_name IN ('_prisma_migrations', 'service_state')`,
    );
  } catch (e) {
    // PostgreSQL: the server answers, the database does not exist (`--init` creates it).
    if (errorCode(e) === "3D000") return "missing";
    throw e;
  }
  if (Number(migrations?.n ?? 0) < 2) return "not_migrated";
  const [root] = await db.raw.query<{ value: string }>(
    `SELECT "value" FROM "service_state" WHERE "key" = 'root_org_did'`,
  );
  return root ? "ready" : "no_root_organization";
}

export const DATABASE_STATE_EXPLAINED: Record<Exclude<DatabaseState, "ready">, string> = {
  missing: "does not exist (--init creates it: on PostgreSQL the role needs the right to create databases)",
  not_migrated: "has no svc tables (it was never migrated)",
  no_root_organization: "has no root organization (no svc server was ever started on it)",
};

function errorCode(e: unknown): string | undefined {
  for (let cur: unknown = e; cur && typeof cur === "object"; cur = (cur as { cause?: unknown }).cause)
    if (typeof (cur as { code?: unknown }).code === "string" && /^[0-9A-Z]{5}$/.test((cur as { code: string }).code))
      return (cur as { code: string }).code;
  return undefined;
}
