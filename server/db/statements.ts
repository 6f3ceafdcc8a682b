import type { SqlDriverAdapter, SqlDriverAdapterFactory, Transaction } from "@prisma/driver-adapter-utils";
import { processWide } from "../processWide";

/**
 * The statement counter: every statement the process sends to its database, through Prisma's
 * driver adapter or the raw driver (db/raw.ts), BEGIN and COMMIT included, adds one. Tests use it
 * the way Django's `assertNumQueries` is used: a hot path's count is asserted, so a change that
 * adds a round trip fails CI (tests/integration/statementCounts.test.ts). Counting costs an
 * increment; the statements' text is kept only while `countStatements` records.
 */
interface Tally {
  count: number;
  recording: number;
  sql: string[];
}
// One tally per process, whichever bundle's copy of this module counts.
const tally = processWide<Tally>("db.statementTally", () => ({ count: 0, recording: 0, sql: [] }));

/** Counts one statement sent to the database. */
export function countStatement(sql: string): void {
  tally.count++;
  if (tally.recording > 0 && tally.sql.length < 10_000)
    tally.sql.push(sql.length > 200 ? `${sql.slice(0, 200)}…` : sql);
}

/** The statements `fn` (and whatever runs meanwhile: keep the process quiet) sent to the database. */
export async function countStatements<T>(
  fn: () => Promise<T>,
): Promise<{ value: T; count: number; statements: string[] }> {
  const start = tally.count;
  const from = tally.sql.length;
  tally.recording++;
  try {
    const value = await fn();
    return { value, count: tally.count - start, statements: tally.sql.slice(from) };
  } finally {
    if (--tally.recording === 0) tally.sql.length = 0;
  }
}

const QUERY_METHODS = new Set(["queryRaw", "executeRaw"]);
// COMMIT and ROLLBACK reach the adapters as `executeRaw` (their commit() and rollback() only
// release the connection); the savepoint methods send theirs below the proxy.
const TX_METHODS: Record<string, string> = {
  createSavepoint: "SAVEPOINT",
  rollbackToSavepoint: "ROLLBACK TO SAVEPOINT",
  releaseSavepoint: "RELEASE SAVEPOINT",
};

function countedQueryable<Q extends object>(
  target: Q,
  extra: (name: string, value: Function, target: Q) => unknown,
): Q {
  return new Proxy(target, {
    get(t, name, receiver) {
      const value = Reflect.get(t, name, receiver) as unknown;
      if (typeof value !== "function" || typeof name !== "string") return value;
      if (QUERY_METHODS.has(name))
        return (params: { sql: string }, ...rest: unknown[]) => {
          countStatement(params.sql);
          return (value as Function).call(t, params, ...rest);
        };
      return extra(name, value, t) ?? (value as Function).bind(t);
    },
  });
}

function countedTransaction(tx: Transaction): Transaction {
  return countedQueryable(tx, (name, value, t) =>
    name in TX_METHODS
      ? (...args: unknown[]) => {
          countStatement(TX_METHODS[name]!);
          return (value as Function).apply(t, args);
        }
      : undefined,
  );
}

function countedAdapter(adapter: SqlDriverAdapter): SqlDriverAdapter {
  return countedQueryable(adapter, (name, value, t) => {
    if (name === "startTransaction")
      return async (...args: unknown[]) => {
        countStatement("BEGIN");
        return countedTransaction(await (value as Function).apply(t, args));
      };
    if (name === "executeScript")
      return (script: string) => {
        countStatement(script);
        return (value as Function).call(t, script);
      };
    return undefined;
  });
}

/** Prisma's driver adapter factory, its connections and their transactions counting statements. */
export function countingAdapter<F extends SqlDriverAdapterFactory>(factory: F): F {
  return new Proxy(factory, {
    get(t, name, receiver) {
      const value = Reflect.get(t, name, receiver) as unknown;
      if (name === "connect" && typeof value === "function")
        return async () => countedAdapter(await (value as Function).call(t));
      return typeof value === "function" ? (value as Function).bind(t) : value;
    },
  });
}
