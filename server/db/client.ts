import { config } from "../config";
import type { PrismaClient, Prisma } from "./generated/sqlite/client";
import { Mutex } from "./mutex";
import { AsyncLocalStorage } from "node:async_hooks";
import type { PoolClient } from "pg";
import {
  forEngine,
  pgQueryable,
  pgRaw,
  sqliteRaw,
  sqliteTransactionQueryable,
  type RawDriver,
  type RawQueryable,
} from "./raw";
import { countingAdapter } from "./statements";
import { prepareSqliteFile, tightenSqliteFiles } from "./sqliteFile";
import { withCachedStatements } from "./sqliteStatements";
import { processWide } from "../processWide";
import { logger } from "../telemetry/log";

/**
 * A Prisma client or an open transaction. Both engines' generated clients have the same shape
 * for svc's models; the SQLite one's types stand for both.
 */
export type Db = Prisma.TransactionClient;

export interface Database {
  engine: "sqlite" | "postgresql";
  /** Reads outside a transaction. */
  read: PrismaClient;
  /**
   * Runs `fn` in one write transaction. On SQLite the process has a single writer: Prisma's
   * better-sqlite3 adapter runs every query of a client on one connection, so a read issued while
   * another request's transaction is open would run inside it. Writes therefore take the
   * process's write lock and a connection of their own; reads use another connection.
   */
  writeTx<T>(fn: (tx: Db) => Promise<T>): Promise<T>;
  /** The driver without Prisma, for the gate's hot path and the ledger only; on SQLite its writes take `writeLock` themselves. */
  raw: RawDriver;
  /** Serializes this process's SQLite writes (a no-op pass-through on PostgreSQL); re-entrant. */
  writeLock<T>(fn: () => Promise<T>): Promise<T>;
  /** The process's connections now (metrics): PostgreSQL's pool; SQLite's one writer, idle unless its lock is held. */
  connections(): { total: number; idle: number; waiting: number };
  close(): Promise<void>;
}

// One database per process, even when Next.js's bundle and the server's own modules each load
// this file: on SQLite the write lock must be the same object for every writer in the process.
const slot = processWide("db.database", () => ({ database: undefined as Promise<Database> | undefined }));

/** The process's database, opened on first use from DATABASE_URL / DATA_DIR. */
export function database(): Promise<Database> {
  slot.database ??= open();
  return slot.database;
}

/** Closes the database (tests, CLI commands, shutdown). */
export async function closeDatabase(): Promise<void> {
  const db = slot.database;
  slot.database = undefined;
  if (db) await (await db).close();
}

const TX_OPTIONS = { maxWait: 10_000, timeout: 30_000 };

// Callbacks waiting for a write transaction to commit, keyed by its transaction client.
// Shared like the database: `writeTx` (from whichever copy of this module opened it) registers
// them, and `afterCommit` in another copy (Next.js bundles its own) must find them. A copy that
// could not would run its hook at once, before commit, inside the writer's lock.
const commitHooks = processWide("db.commitHooks", () => new WeakMap<object, Array<() => void>>());

/**
 * Runs `fn` once `tx` has committed (never if it rolls back): in-process wake-ups that must not
 * announce a write nobody can see yet. Outside a `writeTx` there is nothing to wait for, so `fn`
 * runs on the next tick.
 */
export function afterCommit(tx: Db, fn: () => void): void {
  const hooks = commitHooks.get(tx);
  if (hooks) hooks.push(fn);
  else queueMicrotask(fn);
}

/**
 * Makes `hooks` the list that `afterCommit(tx, …)` adds to, returning the one it replaces: group
 * commit gives each member (a savepoint) a list of its own, run only if that savepoint was released.
 */
export function swapCommitHooks(tx: Db, hooks: Array<() => void> | undefined): Array<() => void> | undefined {
  const previous = commitHooks.get(tx);
  if (hooks) commitHooks.set(tx, hooks);
  else commitHooks.delete(tx);
  return previous;
}

async function withCommitHooks<T>(
  run: (fn: (tx: Db) => Promise<T>) => Promise<T>,
  fn: (tx: Db) => Promise<T>,
): Promise<T> {
  let hooks: Array<() => void> = [];
  const result = await run((tx) => {
    commitHooks.set(tx, (hooks = []));
    return fn(tx);
  });
  for (const hook of hooks) {
    try {
      hook();
    } catch (e) {
      logger().error(`an after-commit callback failed: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  return result;
}

// The SQL route of each open write transaction that has one cheaper than Prisma's raw queries
// (SQLite: its connection's driver), and of each database's read client (the raw driver). Shared
// like the commit hooks, for the same reason.
const txSql = processWide("db.txSql", () => new WeakMap<object, RawQueryable>());

/**
 * Raw SQL (`$n` placeholders) in `tx`'s transaction. On SQLite a write transaction's statements go
 * straight to its connection's driver (Prisma's interactive transaction runs on that connection:
 * they join it); the process's read client (`Database.read`, what a read call's handler gets) is
 * answered by the raw driver, without Prisma; elsewhere (PostgreSQL's transactions, whose pooled
 * client Prisma does not expose, or another `Db`) through Prisma's `$queryRawUnsafe`.
 * Results are the driver's: integers as numbers, timestamps and JSON as stored (SQLite: text).
 * On SQLite the raw driver's one connection also runs its own transactions (the group commit of
 * reads' ledger records, the tree's sealing, a reasoning call's settlement), which yield between
 * statements: a read there may see such a transaction's rows before it commits. Read tables those
 * do not write (passports, delegations), or read through Prisma.
 */
export function sqlIn(tx: Db, engine: Database["engine"]): RawQueryable {
  return txSql.get(tx) ?? prismaSql(tx, engine);
}

/** Raw SQL through Prisma Client (`$queryRawUnsafe`), in `tx`'s transaction. */
export function prismaSql(tx: Db, engine: Database["engine"]): RawQueryable {
  return {
    query: <T>(sql: string, params: unknown[] = []) => tx.$queryRawUnsafe<T[]>(...forEngine(engine, sql, params)),
    execute: (sql: string, params: unknown[] = []) => tx.$executeRawUnsafe(...forEngine(engine, sql, params)),
  };
}

// The error reaches the query in flight, whose caller handles it; the listener only keeps node-postgres from throwing it again.
const ignoreLostConnection = () => undefined;

async function open(): Promise<Database> {
  const cfg = config();
  if (cfg.engine === "postgresql") {
    const [{ PrismaClient: PgClient }, { PrismaPg }, pg] = await Promise.all([
      import("./generated/postgresql/client"),
      import("@prisma/adapter-pg"),
      import("pg"),
    ]);
    const pool = new pg.default.Pool({
      connectionString: cfg.databaseUrl,
      max: Number(process.env.SVC_PG_POOL_SIZE || 10),
    });
    // An idle connection the server closes (restart, failover, an administrator) is dropped and
    // replaced by the pool; without a listener node-postgres would crash the process.
    pool.on("error", (e) => logger().error(`an idle PostgreSQL connection failed and was dropped: ${e.message}`));
    // The pool listens to idle clients only. A client checked out (an interactive transaction, a
    // raw transaction) whose connection dies emits 'error' too, and with nobody listening that
    // kills the process. Every client gets a listener for its whole life: the query in flight
    // fails with the error (the caller sees it), and the pool drops the client at release.
    pool.on("connect", (c) => c.on("error", ignoreLostConnection));
    // A write transaction's raw statements go to the pooled client Prisma's transaction holds
    // (`sqlIn`): the adapter's transaction is opened in the async context of `writeTx`'s call,
    // which hands its client over; node-postgres runs a client's queries one after the other.
    const opening = new AsyncLocalStorage<{ conn?: PoolClient }>();
    const factory = new PrismaPg(pool);
    const connect = factory.connect.bind(factory);
    factory.connect = async () => {
      const adapter = await connect();
      const start = adapter.startTransaction.bind(adapter);
      adapter.startTransaction = async (...args) => {
        const t = await start(...args);
        const store = opening.getStore();
        if (store) store.conn = (t as unknown as { client: PoolClient }).client;
        return t;
      };
      return adapter;
    };
    const client = new PgClient({ adapter: countingAdapter(factory) }) as unknown as PrismaClient;
    const inTransaction =
      <T>(store: { conn?: PoolClient }, fn: (tx: Db) => Promise<T>) =>
      (tx: Db) => {
        if (store.conn) txSql.set(tx, pgQueryable(store.conn));
        return fn(tx);
      };
    const raw = pgRaw(pool, pg.default.types);
    txSql.set(client, raw);
    return {
      engine: "postgresql",
      read: client,
      writeTx: (fn) =>
        withCommitHooks((f) => {
          const store: { conn?: PoolClient } = {};
          return opening.run(store, () => client.$transaction(inTransaction(store, f), TX_OPTIONS));
        }, fn),
      raw,
      writeLock: (fn) => fn(),
      connections: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
      async close() {
        await client.$disconnect();
        await pool.end().catch(() => undefined);
      },
    };
  }
  const [{ PrismaClient: SqliteClient }, { PrismaBetterSqlite3 }, { default: BetterSqlite3 }] = await Promise.all([
    import("./generated/sqlite/client"),
    import("@prisma/adapter-better-sqlite3"),
    import("better-sqlite3"),
  ]);
  const file = prepareSqliteFile(cfg.databaseUrl);
  const adapter = (
    onConnect?: (prepare: (sql: string) => import("better-sqlite3").Statement, connection: object) => void,
  ) =>
    countingAdapter(withCachedStatements(new PrismaBetterSqlite3({ url: cfg.databaseUrl, timeout: 5000 }), onConnect));
  const reader = new SqliteClient({ adapter: adapter() });
  // The writer's one connection (it connects before its first transaction): raw statements of a
  // write transaction run on it, inside that transaction (`sqlIn`).
  let writerSql: RawQueryable | undefined;
  const writerTx = { open: false };
  const writer = new SqliteClient({
    adapter: adapter((prepare, connection) => {
      writerSql = sqliteTransactionQueryable(prepare);
      nestPrismaTransactions(connection, prepare, writerTx);
    }),
  });
  const inWriter =
    <T>(fn: (tx: Db) => Promise<T>) =>
    (tx: Db) => {
      if (writerSql) txSql.set(tx, writerSql);
      return fn(tx);
    };
  await writer.$connect();
  const rawDb = new BetterSqlite3(file, { timeout: 5000 });
  rawDb.pragma("journal_mode = WAL");
  rawDb.pragma("synchronous = NORMAL");
  tightenSqliteFiles(file);
  const mutex = new Mutex();
  const raw = sqliteRaw(rawDb, mutex);
  txSql.set(reader, raw);
  return {
    engine: "sqlite",
    read: reader,
    writeTx: (fn) =>
      withCommitHooks(
        (f) =>
          mutex.run(() =>
            writerSql ? rawWriteTx(writer, writerSql, writerTx, f) : writer.$transaction(inWriter(f), TX_OPTIONS),
          ),
        fn,
      ),
    raw,
    writeLock: (fn) => mutex.run(fn),
    connections: () => ({ total: 1, idle: mutex.pending > 0 ? 0 : 1, waiting: Math.max(0, mutex.pending - 1) }),
    async close() {
      await Promise.all([reader.$disconnect(), writer.$disconnect()]);
      rawDb.close();
    },
  };
}

/**
 * SQLite's write transaction without Prisma's interactive-transaction machinery, which cost more
 * CPU than the statements of an invoke or a run's settle (its BEGIN, COMMIT, timers and promise
 * bookkeeping: issue 30's profile). The process has one writer connection and the write lock held
 * here: BEGIN and COMMIT go to that connection as raw statements, and `tx` is a view of the
 * writer's Prisma client, whose queries run on the same connection and so join the transaction.
 * Each transaction gets a view of its own: commit hooks and the raw route (`sqlIn`) are keyed by it.
 */
async function rawWriteTx<T>(
  writer: PrismaClient,
  sql: RawQueryable,
  state: { open: boolean },
  fn: (tx: Db) => Promise<T>,
): Promise<T> {
  const tx = clientView(writer);
  txSql.set(tx, sql);
  // IMMEDIATE: the database's write lock is taken here, waiting out another process's writer (the
  // CLI, a second process) for the busy timeout. A deferred BEGIN that read first and then wrote
  // after another connection committed failed at once with "database is locked" (seen in e2e).
  await sql.execute("BEGIN IMMEDIATE");
  state.open = true;
  try {
    const result = await fn(tx);
    await sql.execute("COMMIT");
    return result;
  } catch (e) {
    // A failed COMMIT (SQLITE_BUSY, a full disk) leaves the transaction open: rolled back here too.
    await sql.execute("ROLLBACK").catch(() => undefined);
    throw e;
  } finally {
    state.open = false;
  }
}

/** A distinct object that forwards to `client` (methods bound to it: Prisma's use private fields). */
function clientView(client: PrismaClient): Db {
  const bound = new Map<PropertyKey, unknown>();
  return new Proxy(client, {
    get(t, name) {
      const value = Reflect.get(t, name, t) as unknown;
      if (typeof value !== "function") return value;
      let b = bound.get(name);
      if (!b) bound.set(name, (b = (value as Function).bind(t)));
      return b;
    },
  }) as unknown as Db;
}

/**
 * A transaction Prisma Client starts by itself (an operation it runs as several statements) while
 * `rawWriteTx` holds the connection's transaction would fail (SQLite does not nest BEGIN): it
 * becomes a savepoint, and the COMMIT or ROLLBACK Prisma sends for it releases or rolls back that
 * savepoint only.
 */
function nestPrismaTransactions(
  connection: object,
  prepare: (sql: string) => import("better-sqlite3").Statement,
  state: { open: boolean },
): void {
  type Query = { sql: string; args: unknown[]; argTypes: unknown[] };
  type Tx = { executeRaw(q: Query): Promise<number> };
  const adapter = connection as { startTransaction(isolationLevel?: string): Promise<Tx> };
  const start = adapter.startTransaction.bind(adapter);
  let nested = 0;
  adapter.startTransaction = async (isolationLevel) => {
    if (!state.open) return start(isolationLevel);
    const name = `prisma_nested_${++nested}`;
    const client = (connection as { client: { prepare(sql: string): { run(): unknown } } }).client;
    // The adapter's own start sends BEGIN through its connection's prepare: a savepoint instead.
    const prepareBefore = client.prepare;
    client.prepare = (sql: string) =>
      sql === "BEGIN" ? prepare(`SAVEPOINT ${name}`) : prepareBefore.call(client, sql);
    let t: Tx;
    try {
      t = await start(isolationLevel);
    } finally {
      client.prepare = prepareBefore;
    }
    const executeRaw = t.executeRaw.bind(t);
    t.executeRaw = (q) =>
      q.sql === "COMMIT"
        ? executeRaw({ ...q, sql: `RELEASE SAVEPOINT ${name}` })
        : q.sql === "ROLLBACK"
          ? executeRaw({ ...q, sql: `ROLLBACK TO SAVEPOINT ${name}` }).then(() =>
              executeRaw({ ...q, sql: `RELEASE SAVEPOINT ${name}` }),
            )
          : executeRaw(q);
    return t;
  };
}
