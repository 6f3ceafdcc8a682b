import type BetterSqlite3 from "better-sqlite3";
import type { Pool, PoolClient } from "pg";

/**
 * The database driver without Prisma, for the governance gate's hot path (revocation checks,
 * provenance appends) and for migrations. SQL is written once with `$1, $2, …` placeholders, each
 * used once and in order; on SQLite they become `?`.
 */
export interface RawQueryable {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  execute(sql: string, params?: unknown[]): Promise<number>;
}

export interface RawDriver extends RawQueryable {
  /** Runs `fn` in one transaction (SQLite: BEGIN IMMEDIATE). */
  transaction<T>(fn: (q: RawQueryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

const toSqlite = (sql: string) => sql.replace(/\$\d+/g, "?");

function sqliteParams(params: unknown[]): unknown[] {
  return params.map((p) => (p instanceof Date ? sqliteTimestamp(p) : typeof p === "boolean" ? (p ? 1 : 0) : p));
}

/** Timestamps are stored the way Prisma's better-sqlite3 adapter stores them (ISO 8601, +00:00). */
export function sqliteTimestamp(d: Date): string {
  return d.toISOString().replace("Z", "+00:00");
}

export function sqliteRaw(db: BetterSqlite3.Database): RawDriver {
  const cache = new Map<string, BetterSqlite3.Statement>();
  const prepare = (sql: string) => {
    let stmt = cache.get(sql);
    if (!stmt) {
      stmt = db.prepare(toSqlite(sql));
      cache.set(sql, stmt);
    }
    return stmt;
  };
  const q: RawQueryable = {
    async query<T>(sql: string, params: unknown[] = []) {
      return prepare(sql).all(...sqliteParams(params)) as T[];
    },
    async execute(sql: string, params: unknown[] = []) {
      return prepare(sql).run(...sqliteParams(params)).changes;
    },
  };
  return {
    ...q,
    async transaction(fn) {
      db.prepare("BEGIN IMMEDIATE").run();
      try {
        const result = await fn(q);
        db.prepare("COMMIT").run();
        return result;
      } catch (e) {
        if (db.inTransaction) db.prepare("ROLLBACK").run();
        throw e;
      }
    },
    async close() {
      db.close();
    },
  };
}

/**
 * Columns are TIMESTAMP(3) without a time zone holding UTC, as Prisma writes them. node-postgres
 * would write a Date in the process's local time and read one back as local time, so the raw
 * driver sends ISO strings and parses timestamps as UTC, whatever TZ the process runs in.
 */
const TIMESTAMP = 1114;
const INT8 = 20;
const pgTypes = {
  getTypeParser(oid: number, format?: string) {
    if (oid === TIMESTAMP) return (v: string) => new Date(`${v.replace(" ", "T")}Z`);
    if (oid === INT8) return (v: string) => Number(v);
    return pgTypeParsers.getTypeParser(oid, format as "text");
  },
};
let pgTypeParsers: typeof import("pg").types;

function pgParams(params: unknown[]): unknown[] {
  return params.map((p) => (p instanceof Date ? p.toISOString() : p));
}

function pgQueryable(client: Pool | PoolClient): RawQueryable {
  return {
    async query<T>(sql: string, params: unknown[] = []) {
      return (await client.query({ text: sql, values: pgParams(params), types: pgTypes })).rows as T[];
    },
    async execute(sql: string, params: unknown[] = []) {
      return (await client.query({ text: sql, values: pgParams(params), types: pgTypes })).rowCount ?? 0;
    },
  };
}

export function pgRaw(pool: Pool, types: typeof import("pg").types): RawDriver {
  pgTypeParsers = types;
  return {
    ...pgQueryable(pool),
    async transaction(fn) {
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        const result = await fn(pgQueryable(client));
        await client.query("COMMIT");
        return result;
      } catch (e) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw e;
      } finally {
        client.release();
      }
    },
    async close() {
      await pool.end();
    },
  };
}
