import type BetterSqlite3 from "better-sqlite3";
import type { Pool, PoolClient } from "pg";
import type { Mutex } from "./mutex";
import { processWide } from "../processWide";
import { countStatement } from "./statements";

/**
 * The database driver without Prisma. It is one to two orders of magnitude faster than Prisma
 * Client, and is kept to where that pays: the governance gate's hot path (authentication and
 * revocation checks) and the ledger (provenance appends, the Merkle tree, proofs, export).
 * Everything else goes through Prisma.
 *
 * One placeholder style for all raw SQL, through this driver or Prisma's `$queryRawUnsafe`:
 * PostgreSQL's `$1, $2, …` (in any order, repeated at will). `forEngine` translates for SQLite.
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

interface Translated {
  sql: string;
  /** For each `?` in order, the index of the parameter it stands for. */
  order: number[];
}
/** Statements (and translations) kept per connection: the hot paths use a few dozen. */
export const STATEMENT_CACHE_SIZE = 1000;

/**
 * Keeps `value` under `key` in a cache of at most `max` entries, making room by dropping the
 * entry kept longest. A cache that stopped keeping once full let SQL texts that vary (savepoint
 * names, IN lists of every length) take every place for good: a hot statement first run after
 * that was prepared afresh on every call.
 */
export function keepBounded<K, V>(cache: Map<K, V>, key: K, value: V, max = STATEMENT_CACHE_SIZE): V {
  if (cache.size >= max) cache.delete(cache.keys().next().value as K);
  cache.set(key, value);
  return value;
}

const translations = processWide("db.sqliteTranslations", () => new Map<string, Translated>());

function toSqlite(sql: string): Translated {
  let t = translations.get(sql);
  if (!t) {
    const order: number[] = [];
    t = keepBounded(translations, sql, {
      sql: sql.replace(/\$(\d+)/g, (_, n: string) => (order.push(Number(n) - 1), "?")),
      order,
    });
  }
  return t;
}

/**
 * SQL written with `$n` placeholders and its parameters, as the engine takes them: unchanged on
 * PostgreSQL; on SQLite (whose drivers bind `?` by position) each `$n` becomes `?` and the
 * parameters follow the placeholders' order. The one place where placeholders are translated.
 */
export function forEngine(
  engine: "sqlite" | "postgresql",
  sql: string,
  params: unknown[] = [],
): [string, ...unknown[]] {
  if (engine === "postgresql") return [sql, ...params];
  const t = toSqlite(sql);
  return [t.sql, ...t.order.map((i) => params[i])];
}

function sqliteParams(params: unknown[]): unknown[] {
  return params.map((p) =>
    p instanceof Date ? sqliteTimestamp(p) : typeof p === "boolean" ? (p ? 1 : 0) : p === undefined ? null : p,
  );
}

/**
 * A Json column as the raw drivers answer it, as Prisma would: SQLite keeps Prisma's Json as text,
 * node-postgres parses jsonb itself (whatever JSON value it holds, a string too).
 */
export function rawJson(v: unknown, engine: "sqlite" | "postgresql"): unknown {
  return engine === "sqlite" && typeof v === "string" ? JSON.parse(v) : v;
}

/** A timestamp column as the raw drivers answer it (SQLite: text; node-postgres: a Date), as Prisma would. */
export function rawDate(v: unknown): Date | null {
  return v === null || v === undefined ? null : v instanceof Date ? v : new Date(v as string);
}

/** Timestamps are stored the way Prisma's better-sqlite3 adapter stores them (ISO 8601, +00:00). */
export function sqliteTimestamp(d: Date): string {
  return d.toISOString().replace("Z", "+00:00");
}

type Prepared = { stmt: BetterSqlite3.Statement; order: number[] };

/** Statements on a connection whose transaction (and the write lock) its caller holds. */
function sqliteInTransaction(prepare: (sql: string) => Prepared): RawQueryable {
  const bind = (order: number[], params: unknown[]) => sqliteParams(order.map((i) => params[i]));
  return {
    async query<T>(sql: string, params: unknown[] = []) {
      const { stmt, order } = prepare(sql);
      return stmt.all(...bind(order, params)) as T[];
    },
    async execute(sql: string, params: unknown[] = []) {
      const { stmt, order } = prepare(sql);
      return stmt.run(...bind(order, params)).changes;
    },
  };
}

/**
 * SQL through the connection Prisma's write transactions run on (SQLite), for statements inside
 * such a transaction: they join it, as `$executeRawUnsafe` would, without Prisma's per-query cost
 * (about two thirds of a raw statement's CPU through Prisma Client). `prepare` is the connection's
 * own (better-sqlite3's); statements are kept prepared, and read integers as numbers, as the raw
 * driver's connection does (Prisma's connection defaults to BigInt).
 */
export function sqliteTransactionQueryable(prepare: (sql: string) => BetterSqlite3.Statement): RawQueryable {
  const cache = new Map<string, Prepared>();
  return sqliteInTransaction((sql) => {
    countStatement(sql);
    let prepared = cache.get(sql);
    if (!prepared) {
      const t = toSqlite(sql);
      const stmt = prepare(t.sql);
      if (stmt.reader) stmt.safeIntegers(false);
      prepared = keepBounded(cache, sql, { stmt, order: t.order });
    }
    return prepared;
  });
}

/**
 * SQLite has one writer: a raw write takes the process's write lock itself (the lock Prisma's
 * write transactions take), so no caller has to remember to. A caller already holding the lock
 * (`Database.writeLock`) is not made to wait for itself.
 */
export function sqliteRaw(db: BetterSqlite3.Database, writeLock: Mutex): RawDriver {
  const cache = new Map<string, { stmt: BetterSqlite3.Statement; order: number[] }>();
  const prepare = (sql: string) => {
    countStatement(sql);
    let prepared = cache.get(sql);
    if (!prepared) {
      const t = toSqlite(sql);
      prepared = keepBounded(cache, sql, { stmt: db.prepare(t.sql), order: t.order });
    }
    return prepared;
  };
  const bind = (order: number[], params: unknown[]) => sqliteParams(order.map((i) => params[i]));
  const q: RawQueryable = {
    async query<T>(sql: string, params: unknown[] = []) {
      const { stmt, order } = prepare(sql);
      if (stmt.readonly) return stmt.all(...bind(order, params)) as T[];
      return writeLock.run(() => stmt.all(...bind(order, params)) as T[]);
    },
    async execute(sql: string, params: unknown[] = []) {
      const { stmt, order } = prepare(sql);
      return writeLock.run(() => stmt.run(...bind(order, params)).changes);
    },
  };
  // Inside a transaction the lock is already held: statements run as they are.
  const inTx = sqliteInTransaction(prepare);
  return {
    ...q,
    transaction: (fn) =>
      writeLock.run(async () => {
        countStatement("BEGIN IMMEDIATE");
        db.prepare("BEGIN IMMEDIATE").run();
        try {
          const result = await fn(inTx);
          countStatement("COMMIT");
          db.prepare("COMMIT").run();
          return result;
        } catch (e) {
          if (db.inTransaction) db.prepare("ROLLBACK").run();
          throw e;
        }
      }),
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
// not state: the pg module's type parsers, the same object for every copy of this module.
let pgTypeParsers: typeof import("pg").types;

function pgParams(params: unknown[]): unknown[] {
  return params.map((p) => (p instanceof Date ? p.toISOString() : p));
}

export function pgQueryable(client: Pool | PoolClient): RawQueryable {
  return {
    async query<T>(sql: string, params: unknown[] = []) {
      countStatement(sql);
      return (await client.query({ text: sql, values: pgParams(params), types: pgTypes })).rows as T[];
    },
    async execute(sql: string, params: unknown[] = []) {
      countStatement(sql);
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
        countStatement("BEGIN");
        await client.query("BEGIN");
        const result = await fn(pgQueryable(client));
        countStatement("COMMIT");
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
