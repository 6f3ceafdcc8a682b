import { isAbsolute, resolve } from "node:path";
import Sqlite from "better-sqlite3";
import pg from "pg";
import { ROOT } from "./server";

/**
 * Reads a server's database straight, beside the server rather than through the API: a governed
 * read would itself add a provenance record and a write, which skews both counts and timings.
 */
export interface DbReader {
  /** Rows of a query with `$1`-style parameters (rewritten to `?` on SQLite). */
  query<T>(sql: string, params?: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

export async function openReader(databaseUrl: string): Promise<DbReader> {
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    return {
      query: async <T>(sql: string, params: unknown[] = []) => (await client.query(sql, params)).rows as T[],
      close: () => client.end(),
    };
  }
  // Same resolution as server/config.ts: a relative file: path is relative to the server's cwd.
  const path = databaseUrl.slice("file:".length);
  const db = new Sqlite(isAbsolute(path) ? path : resolve(ROOT, path), { readonly: true, fileMustExist: true });
  return {
    query: async <T>(sql: string, params: unknown[] = []) =>
      db.prepare(sql.replace(/\$\d+/g, "?")).all(...params) as T[],
    close: async () => void db.close(),
  };
}
