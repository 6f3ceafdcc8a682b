import { randomBytes } from "node:crypto";
import pg from "pg";

/** The PostgreSQL server the suite runs against (a maintenance database on it). */
export const adminUrl = () => process.env.TEST_POSTGRES_URL || "postgresql://postgres@127.0.0.1:5432/postgres";

/** A name no other run on the shared server uses (several suites may run against it at once). */
export const testDatabaseName = (prefix = "svc_test") => `${prefix}_${randomBytes(6).toString("hex")}`;

export function testDatabaseUrl(name: string): string {
  const url = new URL(adminUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl() });
  try {
    await client.connect();
  } catch (e) {
    throw new Error(
      `The PostgreSQL suite needs a server at ${adminUrl()} (set TEST_POSTGRES_URL): ${(e as Error).message}`,
    );
  }
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * An empty database, or with `template`, a copy of that (migrated) database. Its name starts with
 * `prefix` (a run's, which sweeps what is left of its databases at its end).
 */
export async function createTestDatabase(template?: string, prefix?: string): Promise<{ name: string; url: string }> {
  const name = testDatabaseName(prefix);
  await admin((c) => c.query(`CREATE DATABASE "${name}"${template ? ` TEMPLATE "${template}"` : ""}`));
  return { name, url: testDatabaseUrl(name) };
}

export async function dropTestDatabase(name: string): Promise<void> {
  await admin((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
}

/** Drops every database whose name starts with `prefix` and `_` (a run's, at its end). */
export async function dropTestDatabases(prefix: string): Promise<string[]> {
  const { rows } = await admin((c) =>
    c.query<{ datname: string }>("SELECT datname FROM pg_database WHERE starts_with(datname, $1)", [`${prefix}_`]),
  );
  for (const { datname } of rows) await dropTestDatabase(datname);
  return rows.map((r) => r.datname);
}

/** The sessions connected to `name` (PID, application, state, last statement), none but the caller's own. */
export async function sessionsOn(name: string): Promise<string[]> {
  const { rows } = await admin((c) =>
    c.query<{ line: string }>(
      `SELECT pid || ' ' || coalesce(nullif(application_name, ''), '-') || ' ' || coalesce(state, '-') || ': ' ||
              left(coalesce(query, ''), 120) AS line
         FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
      [name],
    ),
  );
  return rows.map((r) => r.line);
}
