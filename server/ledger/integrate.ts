import type { Database, Db } from "../db/client";
import { sqliteTimestamp, type RawQueryable } from "../db/raw";
import { domainError } from "../errors";
import { processWide } from "../processWide";
import { sealRecord, type ProvenanceEntry, type ProvenanceRecord } from "../provenance/record";

/**
 * The ledger's integrator: the ledger's one global critical section, and it is not on the write
 * path. On PostgreSQL a governed write commits its record into `ledger_pending` (no position, no
 * lock: provenance/appendProvenance.ts); an integration round then gives every pending record its
 * position, one round at a time across processes. A round is one statement,
 * `SELECT … FROM ledger_integrate(500)` (migration 20261128100000): the function takes the
 * advisory lock, and under it moves up to 500 pending records, oldest first, into
 * `provenance_record` with the next dense `seq` and their leaf hash (from the RFC 8785 halves the
 * writer stored, or built in SQL), and deletes them from `ledger_pending`, in one transaction that
 * does not wait for the disk; the lock is held from the moment it is granted to that commit, and
 * by nothing else. The records table, its triggers and every reader stay as they were.
 *
 * Rounds are shared. In a process, every caller waiting for a position joins the next round that
 * begins after its commit: one round serves all the calls of a group commit, and a caller whose
 * record a running round already covers starts none. A round that finds another process's round
 * under way waits for its lock in the database and begins when that one has committed, having
 * integrated what the other saw: so a web process learns its records' positions from the worker's
 * or another web process's round, at the moment it commits, without polling. A round that found
 * fewer than 500 records has integrated every record committed before it began.
 *
 * SQLite has one writer: its records are given their position in the transaction that writes them
 * (appendProvenance.ts), so a caller never waits; the integrator only drains rows a process left in
 * `ledger_pending` (none, unless written by hand), in JS, from the worker's ledger task.
 */
const BATCH = 500;
/** How long a caller waits for its record's position after its commit before answering 503. */
const waitMs = () => Number(process.env.SVC_LEDGER_WAIT_MS || 5000);
/** What one integration statement did. */
interface Pass {
  integrated: number;
  /** Time the database spent under the lock, from taking it to the end of the work (µs; its commit not included). */
  heldUs: number;
}

interface Round {
  /** Its place on the state's clock; a round covers every record committed (marked) before it. */
  start: number;
  done: Promise<void>;
  resolve(): void;
  reject(e: unknown): void;
}

interface IntegratorState {
  /** Marks (a caller's commit, a round's start) in the order they happened in this process. */
  clock: number;
  /** The start of the latest round that drained the pending table. */
  drained: number;
  running?: Round;
  queued?: Round;
  scheduled: boolean;
  /** When the worker's ledger task last vacuumed the pending table (ms since the epoch). */
  vacuumedAt: number;
  /** Replaced by a reset (tests): a round begun before it updates nothing after it. */
  generation: object;
}

const state = processWide<IntegratorState>("ledger.integrator", () => ({
  clock: 0,
  drained: 0,
  scheduled: false,
  vacuumedAt: 0,
  generation: {},
}));

/** The bench's view of the critical section: totals since the process started. */
export interface IntegratorStats {
  /** Integration statements. */
  passes: number;
  integrated: number;
  /** Time under the lock as the database measured it (µs, without the commit). */
  heldUs: number;
  /** Wall time of the statements, the wait for the lock, the commit and the round trip included (ms). */
  passMs: number;
}
const stats = processWide<IntegratorStats>("ledger.integratorStats", () => ({
  passes: 0,
  integrated: 0,
  heldUs: 0,
  passMs: 0,
}));

export function integratorStats(): IntegratorStats {
  return { ...stats };
}

/**
 * Resolves once every record committed before this call has its position (is in
 * `provenance_record`); the ids only say whether there is anything to wait for. After
 * `SVC_LEDGER_WAIT_MS` (5 s) it throws a 503 with Retry-After: the records are committed and will
 * be integrated (by the next round anywhere, at the latest the worker's ledger task), only not yet.
 * SQLite: nothing to wait for (positions are given at commit).
 */
export async function awaitIntegrated(db: Database, ids: readonly string[]): Promise<void> {
  if (ids.length === 0 || db.engine !== "postgresql") return;
  await awaitMark(db, ++state.clock);
}

/**
 * Before an answer that shows positions (a record, a proof, a list, an export): every record
 * committed so far gets its position first. One statement when nothing is pending.
 */
export async function settleLedger(db: Database): Promise<void> {
  if (db.engine === "postgresql") await awaitMark(db, ++state.clock);
}

/**
 * Asks for a round after a commit that nobody waits on (a job's service record): its record gets
 * its position promptly, in a round shared with whoever waits. No-op on SQLite.
 */
export function integrateSoon(db: Database): void {
  if (db.engine !== "postgresql") return;
  roundAfter(db, ++state.clock).done.catch(() => undefined);
}

/**
 * Integrates every pending record (the worker's ledger task: the backstop for records left pending
 * by a crash). Returns how many this call's rounds integrated in this process.
 */
export async function integratePending(db: Database): Promise<number> {
  if (db.engine === "postgresql") {
    const before = stats.integrated;
    await awaitMark(db, ++state.clock);
    return stats.integrated - before;
  }
  return integrateSqlite(db);
}

/** Every how often the worker's ledger task vacuums `ledger_pending` (PostgreSQL). */
const VACUUM_EVERY_MS = 2_000;

/**
 * `ledger_pending` is a queue: its rows live milliseconds, and the dead ones left by each round
 * would make the next rounds' scan for the oldest step over all of them until a vacuum. Autovacuum
 * visits a database at most once a minute, so the worker's ledger task vacuums the table every
 * 2 s (a few pages; it blocks no writer and no round). No-op on SQLite.
 */
export async function vacuumPending(db: Database): Promise<void> {
  if (db.engine !== "postgresql" || Date.now() - state.vacuumedAt < VACUUM_EVERY_MS) return;
  state.vacuumedAt = Date.now();
  await db.raw.execute(`VACUUM (SKIP_LOCKED) "ledger_pending"`);
}

async function awaitMark(db: Database, mark: number): Promise<void> {
  const deadline = Date.now() + waitMs();
  while (state.drained < mark) {
    const round = roundAfter(db, mark);
    const left = deadline - Date.now();
    let timer: NodeJS.Timeout | undefined;
    const late = await Promise.race([
      round.done.then(() => false),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), Math.max(0, left)))),
    ]).finally(() => clearTimeout(timer));
    if (late)
      throw domainError(
        "database_unavailable",
        "The ledger has not yet given this call's record its position; the call is committed and its record will have one. Retry in 1 s.",
        { headers: { "Retry-After": "1" } },
      );
  }
}

/** The round that covers `mark`: the running one if it began after it, else the next. */
function roundAfter(db: Database, mark: number): Round {
  if (state.running && state.running.start > mark) return state.running;
  if (!state.queued) {
    const round = { start: Number.POSITIVE_INFINITY } as Round;
    round.done = new Promise<void>((resolve, reject) => Object.assign(round, { resolve, reject }));
    state.queued = round;
  }
  schedule(db);
  return state.queued;
}

/**
 * Starts the queued round once the running one has ended, on a later turn of the event loop: the
 * callers that commit in this turn (a group commit answers all its members at once) mark their
 * commits first and share it.
 */
function schedule(db: Database): void {
  if (state.running || state.scheduled) return;
  state.scheduled = true;
  const generation = state.generation;
  setImmediate(() => {
    if (state.generation !== generation) return;
    state.scheduled = false;
    const round = state.queued;
    if (state.running || !round) return;
    state.queued = undefined;
    state.running = round;
    round.start = ++state.clock;
    runRound(db).then(
      () => {
        if (state.generation === generation) state.drained = Math.max(state.drained, round.start);
        round.resolve();
      },
      (e: unknown) => round.reject(e),
    );
    void round.done
      .catch(() => undefined)
      .finally(() => {
        if (state.generation !== generation || state.running !== round) return;
        state.running = undefined;
        if (state.queued) schedule(db);
      });
  });
}

/** Integration passes until one drained the pending table. */
async function runRound(db: Database): Promise<void> {
  for (;;) {
    const pass = await integrateOnce(db);
    if (pass.integrated < BATCH) return;
  }
}

async function integrateOnce(db: Database): Promise<Pass> {
  if (db.engine !== "postgresql") return { integrated: await integrateSqlite(db), heldUs: 0 };
  const t0 = performance.now();
  const [row] = await db.raw.query<{ integrated: number; held_us: number | string }>(
    `SELECT "integrated", "held_us" FROM "ledger_integrate"($1)`,
    [BATCH],
  );
  const pass = { integrated: Number(row?.integrated ?? 0), heldUs: Number(row?.held_us ?? 0) };
  stats.passes++;
  stats.integrated += pass.integrated;
  stats.heldUs += pass.heldUs;
  stats.passMs += performance.now() - t0;
  return pass;
}

// ---------------------------------------------------------------------------------------------
// SQLite: rows left in ledger_pending (none in normal operation), integrated in JS.

const COLUMNS = `"id","seq","timestamp","org_did","actor_did","delegation_id","grantor_did","capability","operation","resource_type","resource_id","decision","status","request_hash","request_id","leaf_hash","trace_id"`;

interface PendingRow {
  id: string;
  timestamp: string | Date;
  org_did: string;
  actor_did: string | null;
  delegation_id: string | null;
  grantor_did: string | null;
  capability: string | null;
  operation: string;
  resource_type: string | null;
  resource_id: string | null;
  decision: string;
  status: number | string;
  request_hash: string;
  request_id: string;
  trace_id: string | null;
}

async function integrateSqlite(db: Database): Promise<number> {
  let total = 0;
  for (;;) {
    // A read first, outside the write lock: the table is empty in normal operation.
    const [any] = await db.raw.query(`SELECT 1 AS "one" FROM "ledger_pending" LIMIT 1`);
    if (!any) return total;
    const moved = await db.raw.transaction(async (q) => {
      const pending = await q.query<PendingRow>(
        `SELECT * FROM "ledger_pending" ORDER BY "timestamp", "id" LIMIT ${BATCH}`,
      );
      if (pending.length === 0) return 0;
      const [{ next }] = (await q.query<{ next: number | string }>(
        `SELECT COALESCE(MAX("seq") + 1, 0) AS "next" FROM "provenance_record"`,
      )) as [{ next: number | string }];
      const sealed = pending.map((p, i) => sealRecord(entryOf(p), p.id, Number(next) + i, new Date(p.timestamp)));
      await insertSealed(q, sealed);
      for (let i = 0; i < pending.length; i += 300) {
        const ids = pending.slice(i, i + 300).map((p) => p.id);
        await q.execute(
          `DELETE FROM "ledger_pending" WHERE "id" IN (${ids.map((_, k) => `$${k + 1}`).join(",")})`,
          ids,
        );
      }
      return pending.length;
    });
    total += moved;
    if (moved < BATCH) return total;
  }
}

function entryOf(p: PendingRow): ProvenanceEntry {
  return {
    org_did: p.org_did,
    actor_did: p.actor_did,
    delegation_id: p.delegation_id,
    grantor_did: p.grantor_did,
    capability: p.capability,
    operation: p.operation,
    resource_type: p.resource_type,
    resource_id: p.resource_id,
    decision: p.decision as ProvenanceEntry["decision"],
    status: Number(p.status),
    request_hash: p.request_hash,
    request_id: p.request_id,
    ...(p.trace_id ? { trace_id: p.trace_id } : {}),
  };
}

/** Inserts sealed records into `provenance_record` (SQLite), 100 to a statement. */
export async function insertSealed(q: RawQueryable, records: ProvenanceRecord[]): Promise<void> {
  for (let i = 0; i < records.length; i += 100) {
    const chunk = records.slice(i, i + 100);
    const values = chunk
      .map((_, j) => `(${Array.from({ length: 17 }, (_, k) => `$${j * 17 + k + 1}`).join(",")})`)
      .join(",");
    await q.execute(
      `INSERT INTO "provenance_record" (${COLUMNS}) VALUES ${values}`,
      chunk.flatMap((r) => [
        r.id,
        r.seq,
        sqliteTimestamp(new Date(r.timestamp)),
        r.org_did,
        r.actor_did,
        r.delegation_id,
        r.grantor_did,
        r.capability,
        r.operation,
        r.resource_type,
        r.resource_id,
        r.decision,
        r.status,
        r.request_hash,
        r.request_id,
        r.leaf_hash,
        r.trace_id ?? null,
      ]),
    );
  }
}

/**
 * The leaf index of each record in `ids` that has one (integrated), for rows that point at a
 * record committed with them (an event on PostgreSQL) and so could not store its position.
 */
export async function leafIndexes(db: Db, ids: string[]): Promise<Map<string, number>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const rows = await db.provenanceRecord.findMany({ where: { id: { in: unique } }, select: { id: true, seq: true } });
  return new Map(rows.map((r) => [r.id, Number(r.seq)]));
}
