import { isAbsolute, resolve } from "node:path";
import Sqlite from "better-sqlite3";
import pg from "pg";
import { ROOT, type Server } from "./server";

const COUNT = `SELECT count(*) AS n FROM "provenance_record"`;

/**
 * Number of provenance records, read straight from the database rather than through the API: a
 * governed read would itself add a record, and the count has to be exact.
 */
export async function countProvenance(server: Server): Promise<number> {
  return server.engine === "sqlite" ? countSqlite(server.databaseUrl) : countPostgres(server.databaseUrl);
}

function countSqlite(databaseUrl: string): number {
  // Same resolution as server/config.ts: a relative file: path is relative to the server's cwd.
  const path = databaseUrl.slice("file:".length);
  const db = new Sqlite(isAbsolute(path) ? path : resolve(ROOT, path), { readonly: true, fileMustExist: true });
  try {
    return Number((db.prepare(COUNT).get() as { n: number | bigint }).n);
  } finally {
    db.close();
  }
}

async function countPostgres(databaseUrl: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>(COUNT);
    return Number(rows[0]?.n ?? Number.NaN);
  } finally {
    await client.end();
  }
}
