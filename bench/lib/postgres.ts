import { randomBytes } from "node:crypto";
import pg from "pg";

/** The local server's maintenance database: benches create (and drop) databases of their own through it. */
export const PG_ADMIN_URL = process.env.BENCH_PG_ADMIN_URL || "postgresql://postgres@127.0.0.1:5432/postgres";

export async function postgresAnswers(): Promise<boolean> {
  const client = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    await client.query("SELECT 1");
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export interface BenchDatabase {
  name: string;
  url: string;
  /** Drops it even while connections remain; reports rather than throws, so cleanup never hides the bench's own error. */
  drop(): Promise<void>;
}

/** A fresh, empty database on the local server, so a run never measures another's leftovers. */
export async function createDatabase(prefix = "svc_bench"): Promise<BenchDatabase> {
  const name = `${prefix}_${randomBytes(4).toString("hex")}`;
  await admin(`CREATE DATABASE "${name}"`);
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    drop: () =>
      admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch((e: unknown) =>
        console.error(`  could not drop ${name}: ${String(e)}`),
      ),
  };
}

/** A connection URL fit to print: the password masked. */
export function redact(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]*@/, "//$1:***@");
}
