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

/** An empty database, or with `template`, a copy of that (migrated) database. */
export async function createTestDatabase(template?: string): Promise<{ name: string; url: string }> {
  const name = testDatabaseName();
  const client = new pg.Client({ connectionString: adminUrl() });
  try {
    await client.connect();
  } catch (e) {
    throw new Error(
      `The PostgreSQL suite needs a server at ${adminUrl()} (set TEST_POSTGRES_URL): ${(e as Error).message}`,
    );
  }
  try {
    await client.query(`CREATE DATABASE "${name}"${template ? ` TEMPLATE "${template}"` : ""}`);
  } finally {
    await client.end();
  }
  return { name, url: testDatabaseUrl(name) };
}

export async function dropTestDatabase(name: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl() });
  await client.connect();
  await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await client.end();
}
