import type BetterSqlite3 from "better-sqlite3";
import { processWide } from "../processWide";
import { keepBounded } from "./raw";

/**
 * Prisma's better-sqlite3 adapter prepares every statement afresh (`client.prepare(sql).bind(args)`
 * for each query, then `run()` or `raw().all()`), which was the largest single cost below Prisma
 * Client on the hot paths (issue 15). This keeps one prepared statement per SQL text per
 * connection and hands the adapter a view of it with the arguments it binds: better-sqlite3 binds a
 * statement object once for good, so the view passes them at each call instead.
 *
 * Only what the adapter calls is provided (`bind`, `reader`, `run`, `columns`, `raw().all()`). A
 * statement is used synchronously from bind to result, so sharing one between queries is safe.
 */

/** Each prepared statement's columns, read once (one map per process, whichever bundle asks). */
const columnsOf = processWide(
  "db.sqliteStatementColumns",
  () => new WeakMap<BetterSqlite3.Statement, BetterSqlite3.ColumnDefinition[]>(),
);

class BoundStatement {
  private args: unknown[] = [];
  constructor(private readonly stmt: BetterSqlite3.Statement) {}
  get reader(): boolean {
    return this.stmt.reader;
  }
  bind(args: unknown[]): this {
    this.args = args;
    return this;
  }
  run(): BetterSqlite3.RunResult {
    return this.stmt.run(this.args);
  }
  columns(): BetterSqlite3.ColumnDefinition[] {
    // A prepared statement's columns are fixed (Prisma names every column it selects).
    let columns = columnsOf.get(this.stmt);
    if (!columns) columnsOf.set(this.stmt, (columns = this.stmt.columns()));
    return columns;
  }
  raw(): { all(): unknown[] } {
    this.stmt.raw(true);
    return { all: () => this.stmt.all(this.args) };
  }
}

/**
 * Makes `db.prepare` (as Prisma's adapter calls it) reuse prepared statements; returns
 * better-sqlite3's own `prepare` of the connection.
 */
export function cacheAdapterStatements(db: BetterSqlite3.Database): (sql: string) => BetterSqlite3.Statement {
  const prepare = db.prepare.bind(db);
  const cache = new Map<string, BetterSqlite3.Statement>();
  (db as unknown as { prepare: (sql: string) => BoundStatement }).prepare = (sql: string) => {
    let stmt = cache.get(sql);
    if (!stmt) stmt = keepBounded(cache, sql, prepare(sql));
    return new BoundStatement(stmt);
  };
  return prepare;
}

/**
 * Prisma's better-sqlite3 adapter factory whose connections reuse prepared statements;
 * `onConnect` gets each connection's own `prepare` (the write transactions' raw statements).
 */
export function withCachedStatements<F extends { connect(): Promise<unknown> }>(
  factory: F,
  onConnect?: (prepare: (sql: string) => BetterSqlite3.Statement, adapter: object) => void,
): F {
  const connect = factory.connect.bind(factory);
  factory.connect = async () => {
    const adapter = await connect();
    const prepare = cacheAdapterStatements((adapter as { client: BetterSqlite3.Database }).client);
    onConnect?.(prepare, adapter as object);
    return adapter;
  };
  return factory;
}
