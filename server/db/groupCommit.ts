import { bindTrace } from "../telemetry/tracing";
import { sqlIn, swapCommitHooks, type Database, type Db } from "./client";
import { processWide } from "../processWide";
import { isInfrastructureError } from "./outage";
import type { RawQueryable } from "./raw";
import { logger } from "../telemetry/log";

/**
 * Group commit: the one way the gate's write calls, the ledger's read records and the webhooks'
 * delivery outcomes reach the database. Work that arrives while a group is being written waits
 * for the next group; a group is one write transaction, so on SQLite (one writer) N calls cost one
 * BEGIN/COMMIT and one turn of the write lock instead of N, and on PostgreSQL one commit.
 *
 * Each member runs alone in its own savepoint, one after the other: a member that throws is
 * rolled back to its savepoint (its writes, its after-commit callbacks) and rejects alone; the
 * others commit. A member's promise settles only after the commit that holds it, so an answer
 * never announces a write that could still be lost. The ledger's order is the commit order: a
 * member's record is appended inside its savepoint, after every record of the members before it.
 *
 * Batched members (`commitBatched`) are applied together, after the single ones, by their
 * batcher in one statement where it can (a multi-row INSERT of read records); if the batch
 * fails, each of its items is tried alone in its own savepoint.
 *
 * If the group's transaction itself fails (a lost connection, a failed COMMIT), nothing of it was
 * committed and nobody was answered: each member is tried once more in a transaction of its own,
 * except in a database outage, where all of them fail at once (503) rather than queue one by one.
 */

export interface Batcher<I, R> {
  /** Stable name (the key items are grouped by). */
  readonly name: string;
  /**
   * Applies `items` in the group's transaction, answering one result per item, in order. It gets
   * SQL only (`$n` placeholders): a group of batched members alone runs on the raw driver, which
   * costs a fraction of Prisma's transaction (a read's record at c=1 is such a group).
   */
  apply(q: RawQueryable, engine: Database["engine"], items: I[]): Promise<R[]>;
}

/** The group's transaction: Prisma's (single members need it) or the raw driver's. */
interface GroupTx {
  q: RawQueryable;
  prisma?: Db;
}

interface Single {
  kind: "single";
  work: (tx: Db) => Promise<unknown>;
  /** Safe to run again after a rollback: grouped with its like, without savepoints (see `commitGrouped`). */
  retryable: boolean;
  resolve(v: unknown): void;
  reject(e: unknown): void;
}
interface Batched {
  kind: "batched";
  batcher: Batcher<unknown, unknown>;
  item: unknown;
  resolve(v: unknown): void;
  reject(e: unknown): void;
}
type Member = Single | Batched;

interface Queue {
  pending: Member[];
  inFlight: number;
}

/** Members per group: enough to amortize a commit, few enough to keep a group's latency short. */
const MAX_MEMBERS = 128;
/** Items of batched members per group (one multi-row INSERT per 100 of them). */
const MAX_ITEMS = 500;

// One queue per database per process, whichever bundle's copy of this module is called (Next.js
// loads its own): two queues would be two writers taking turns, and group nothing.
const queues = processWide("db.groupCommitQueues", () => new WeakMap<Database, Queue>());

/**
 * Commits `work`'s writes with those of the calls arriving with it; resolves after the commit.
 * `retryable` work (it only reads and writes the database, and may run again after a rollback: a
 * run's outcome, a delivery's outcome) is grouped with its like and without savepoints, two
 * statements fewer each: when one of them throws, the group rolls back and each is run again in a
 * transaction of its own. A governed call's work is not run twice: it gets its savepoint.
 */
export function commitGrouped<T>(
  db: Database,
  work: (tx: Db) => Promise<T>,
  options: { retryable?: boolean } = {},
): Promise<T> {
  return new Promise<T>((resolve, reject) =>
    enqueue(db, {
      kind: "single",
      // Run by whichever call leads the group: in this call's own trace still.
      work: bindTrace(work),
      retryable: options.retryable ?? false,
      resolve: resolve as (v: unknown) => void,
      reject,
    }),
  );
}

/** Adds `item` to this group's batch of `batcher`; resolves with its result after the commit. */
export function commitBatched<I, R>(db: Database, batcher: Batcher<I, R>, item: I): Promise<R> {
  return new Promise<R>((resolve, reject) =>
    enqueue(db, {
      kind: "batched",
      batcher: batcher as Batcher<unknown, unknown>,
      item,
      resolve: resolve as (v: unknown) => void,
      reject,
    }),
  );
}

function enqueue(db: Database, m: Member): void {
  let q = queues.get(db);
  if (!q) queues.set(db, (q = { pending: [], inFlight: 0 }));
  q.pending.push(m);
  if (q.inFlight === 0) {
    q.inFlight = 1;
    // Let the calls arriving in this turn of the event loop join the first group.
    setImmediate(() => void drain(db, q));
  }
}

async function drain(db: Database, q: Queue): Promise<void> {
  try {
    while (q.pending.length > 0) await commitGroup(db, take(q));
  } catch (e) {
    logger().error(`group commit failed: ${e instanceof Error ? e.message : String(e)}`);
  } finally {
    q.inFlight = 0;
    // Never leave a member waiting without a drain to take it.
    if (q.pending.length > 0) {
      q.inFlight = 1;
      setImmediate(() => void drain(db, q));
    }
  }
}

/** The next group: the oldest pending member's class (savepoints or retryable), batched members with either. */
function take(q: Queue): Member[] {
  const first = q.pending[0]!;
  const retryable = first.kind === "single" && first.retryable;
  let singles = 0;
  let items = 0;
  const group: Member[] = [];
  const rest: Member[] = [];
  for (const m of q.pending) {
    if (m.kind === "single" ? m.retryable !== retryable || singles >= MAX_MEMBERS : items >= MAX_ITEMS) rest.push(m);
    else {
      if (m.kind === "single") singles++;
      else items++;
      group.push(m);
    }
  }
  q.pending = rest;
  return group;
}

interface Outcome {
  member: Member;
  ok: boolean;
  value?: unknown;
  error?: unknown;
  hooks: Array<() => void>;
}

async function commitGroup(db: Database, group: Member[]): Promise<void> {
  let outcomes: Outcome[];
  const isolate = group.length > 1 && !group.some((m) => m.kind === "single" && m.retryable);
  try {
    outcomes = group.every((m) => m.kind === "batched")
      ? await db.raw.transaction((q) => applyGroup(db, { q }, group, isolate))
      : await db.writeTx((tx) => applyGroup(db, { q: sqlIn(tx, db.engine), prisma: tx }, group, isolate));
  } catch (e) {
    // The transaction failed as a whole: nothing of it committed, nobody was answered. In an
    // outage every member would fail alike (503), and one by one they would only queue behind it.
    if (group.length === 1 || isInfrastructureError(e)) return group.forEach((m) => m.reject(e));
    for (const m of group) await commitGroup(db, [m]);
    return;
  }
  for (const o of outcomes) {
    if (!o.ok) {
      o.member.reject(o.error);
      continue;
    }
    for (const hook of o.hooks) {
      try {
        hook();
      } catch (e) {
        logger().error(`an after-commit callback failed: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    o.member.resolve(o.value);
  }
}

// One name for every member's savepoint: members run one after the other, each savepoint released
// (or rolled back to and released) before the next is taken, and a repeated name addresses the
// newest one on both engines. A name per member (a counter) made each SAVEPOINT and RELEASE a new
// SQL text: every one was prepared afresh and they filled the connection's statement cache
// (db/raw.ts keeps 1,000), after which no statement first seen later was ever kept prepared.
const SAVEPOINT = "svc_member";

/** Runs `fn` in a savepoint of `tx`: released when it succeeds, rolled back to when it throws. */
async function inSavepoint<T>(
  tx: GroupTx,
  isolate: boolean,
  fn: () => Promise<T>,
): Promise<{ ok: true; value: T; hooks: Array<() => void> } | { ok: false; error: unknown }> {
  const hooks: Array<() => void> = [];
  const previous = tx.prisma ? swapCommitHooks(tx.prisma, hooks) : undefined;
  try {
    if (isolate) await tx.q.execute(`SAVEPOINT ${SAVEPOINT}`);
    let value: T;
    try {
      value = await fn();
    } catch (error) {
      if (!isolate) throw error;
      await tx.q.execute(`ROLLBACK TO SAVEPOINT ${SAVEPOINT}`);
      await tx.q.execute(`RELEASE SAVEPOINT ${SAVEPOINT}`);
      return { ok: false, error };
    }
    if (isolate) await tx.q.execute(`RELEASE SAVEPOINT ${SAVEPOINT}`);
    return { ok: true, value, hooks };
  } finally {
    if (tx.prisma) swapCommitHooks(tx.prisma, previous);
  }
}

/**
 * The group inside its transaction. A group of one needs no savepoint: its failure rolls the
 * whole transaction back, which is the same thing (and saves two statements per lone call).
 */
async function applyGroup(db: Database, tx: GroupTx, group: Member[], isolate: boolean): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  const batches = new Map<Batcher<unknown, unknown>, Batched[]>();
  for (const m of group) {
    if (m.kind === "batched") {
      let list = batches.get(m.batcher);
      if (!list) batches.set(m.batcher, (list = []));
      list.push(m);
      continue;
    }
    const r = await inSavepoint(tx, isolate, () => m.work(tx.prisma!));
    if (r.ok) outcomes.push({ member: m, ok: true, value: r.value, hooks: r.hooks });
    else outcomes.push({ member: m, ok: false, error: r.error, hooks: [] });
  }
  for (const [batcher, list] of batches) {
    const all = await inSavepoint(tx, isolate, () =>
      batcher.apply(
        tx.q,
        db.engine,
        list.map((b) => b.item),
      ),
    );
    if (all.ok) {
      list.forEach((m, i) =>
        outcomes.push({ member: m, ok: true, value: all.value[i], hooks: i === 0 ? all.hooks : [] }),
      );
      continue;
    }
    if (!isolate || list.length === 1) {
      if (!isolate) throw all.error;
      outcomes.push({ member: list[0]!, ok: false, error: all.error, hooks: [] });
      continue;
    }
    // One bad item must not sink the others.
    for (const m of list) {
      const one = await inSavepoint(tx, true, async () => (await batcher.apply(tx.q, db.engine, [m.item]))[0]);
      outcomes.push(
        one.ok
          ? { member: m, ok: true, value: one.value, hooks: one.hooks }
          : { member: m, ok: false, error: one.error, hooks: [] },
      );
    }
  }
  return outcomes;
}

/** Resolves once this process has no group waiting or being written (a draining process's last writes). */
export async function groupCommitsSettled(db: Database): Promise<void> {
  for (;;) {
    const q = queues.get(db);
    if (!q || (q.pending.length === 0 && q.inFlight === 0)) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
