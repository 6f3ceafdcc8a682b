import { randomBytes } from "node:crypto";
import pg from "pg";

/** The PostgreSQL server the suite runs against (a maintenance database on it). */
export const adminUrl = () => process.env.TEST_POSTGRES_URL || "postgresql://postgres@127.0.0.1:5432/postgres";

export async function createTestDatabase(): Promise<{ name: string; url: string }> {
  const name = `svc_test_${randomBytes(6).toString("hex")}`;
  const client = new pg.Client({ connectionString: adminUrl() });
  try {
    await client.connect();
  } catch (e) {
    throw new Error(
      `The PostgreSQL suite needs a server at ${adminUrl()} (set TEST_POSTGRES_URL): ${(e as Error).message}`,
    );
  }
  await client.query(`CREATE DATABASE "${name}"`);
  await client.end();
  const url = new URL(adminUrl());
  url.pathname = `/${name}`;
  return { name, url: url.toString() };
}

export async function dropTestDatabase(name: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl() });
  await client.connect();
  await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await client.end();
}
