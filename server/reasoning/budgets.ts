import type { z } from "zod";
import { sqlIn, type Database, type Db } from "../db/client";
import type { RawQueryable } from "../db/raw";
import { domainError, Forbidden } from "../errors";
import { newId } from "../ids";
import type { Principal } from "../governance/principal";
import type { IssuanceHook } from "../identity/issuanceHooks";
import type { DelegationBudget as BudgetSchema } from "../identity/schemas";

/**
 * Budgets inside delegations. A delegation may carry `{limit_usd, period}`; every reasoning call
 * made under it, or under any delegation derived from it, charges it. A call's admission locks
 * the budgets of its chain (PostgreSQL: `SELECT … FOR UPDATE` on their rows, in id order, so two
 * processes admit one after the other; SQLite: the single writer already serializes), sums what
 * each has been charged in its period (settled calls at their real cost, running calls at their
 * reserved worst case), refuses what does not fit, and inserts its own reservation before the
 * lock is released at commit (in raw SQL: the admission runs on every call). Check and spend are
 * one step, so concurrent calls, in one process or many, cannot pass a limit together.
 */
export type Budget = z.output<typeof BudgetSchema>;

export interface BudgetState {
  delegationId: string;
  limitUsd: number;
  period: Budget["period"];
  spentUsd: number;
  reservedUsd: number;
  remainingUsd: number;
}

/** Tolerance of the comparisons (floating-point sums of tiny prices). */
const EPSILON = 1e-12;

/** Where a period starts (UTC); `total` counts from the beginning. */
export function periodStart(period: Budget["period"], now = new Date()): Date {
  if (period === "day") return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  if (period === "month") return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  return new Date(0);
}

/**
 * Called by the delegation services when a delegation is created with a budget: a budget can only
 * narrow the budgets above it (its limit at most the smallest of its chain's). A delegation
 * without one is still bounded by its ancestors', which its calls charge too.
 */
export async function attachBudget(db: Db, grantor: Principal, delegationId: string, budget: Budget): Promise<void> {
  const above = await db.delegationBudget.findMany({ where: { delegationId: { in: grantor.chain } } });
  const tightest = above.reduce<number | null>((min, b) => (min === null || b.limitUsd < min ? b.limitUsd : min), null);
  if (tightest !== null && budget.limit_usd > tightest + EPSILON) {
    throw Forbidden(
      `A delegation's budget can only narrow its grantor's: the tightest budget above it is ${tightest} USD, ${budget.limit_usd} USD was requested.`,
      { max_limit_usd: tightest },
    );
  }
  await db.delegationBudget.create({
    data: { delegationId, orgDid: grantor.orgDid, limitUsd: budget.limit_usd, period: budget.period },
  });
}

/** Identity's issuance hook (registered by server/areas.ts): a delegation issued with a budget gets it. */
export const attachRequestedBudget: IssuanceHook = async (tx, grantor, delegation, request) => {
  if (request.budget) await attachBudget(tx, grantor, delegation.id, request.budget);
};

/** The budget a delegation carries itself, in its API shape. */
export async function budgetOf(db: Db, delegationId: string): Promise<Budget | null> {
  const row = await db.delegationBudget.findUnique({ where: { delegationId } });
  return row ? { limit_usd: row.limitUsd, period: row.period as Budget["period"] } : null;
}

/**
 * Budget admissions' own advisory lock (PostgreSQL), taken before the rows: a group commit may
 * hold several admissions whose chains share no prefix, and two processes' groups locking those
 * rows in opposite orders would deadlock (PostgreSQL would break it after a second by failing one
 * member). With it, transactions that admit against budgets take their rows one after the other;
 * every other write is untouched. (The ledger's lock, every write's until the integrator, played
 * this part before: ledger/integrate.ts.)
 */
const BUDGET_ADMISSION_LOCK = 0x5376_4275; // "SvBu"

/**
 * Locks the budgets of `chain` until the transaction ends (see above) and returns them, in id
 * order. On PostgreSQL the admissions' lock comes first, then `SELECT … FOR UPDATE` on the budget
 * rows. Nothing here waits on anything outside the database, and the provider is called only
 * after commit (thinkReasoning.ts).
 */
async function lockBudgets(tx: Db, engine: Database["engine"], chain: string[]): Promise<BudgetRow[]> {
  if (chain.length === 0) return [];
  const q = sqlIn(tx, engine);
  const placeholders = chain.map((_, i) => `$${i + 1}`).join(", ");
  const select = `SELECT "delegation_id", "limit_usd", "period" FROM "delegation_budget" WHERE "delegation_id" IN (${placeholders}) ORDER BY "delegation_id"`;
  // Raw SQL: every reasoning call's admission reads this, and most chains carry no budget, which
  // this one indexed read answers (through Prisma it cost more than the rest of the admission's reads).
  const rows = await q.query<BudgetSqlRow>(select, chain);
  if (rows.length === 0 || engine !== "postgresql") return rows.map(budgetRow);
  await q.query(`SELECT pg_advisory_xact_lock(${BUDGET_ADMISSION_LOCK})::text`);
  return (await q.query<BudgetSqlRow>(`${select} FOR UPDATE`, chain)).map(budgetRow);
}

interface BudgetRow {
  delegationId: string;
  limitUsd: number;
  period: string;
}
interface BudgetSqlRow {
  delegation_id: string;
  limit_usd: number;
  period: string;
}
const budgetRow = (r: BudgetSqlRow): BudgetRow => ({
  delegationId: r.delegation_id,
  limitUsd: Number(r.limit_usd),
  period: r.period,
});

/**
 * What each budget of the chain has left now, without locking (views). Through Prisma, not the raw
 * read connection: on SQLite that connection also runs the settlements' own transactions, whose
 * charges it would see before they commit (db/client.ts, `sqlIn`).
 */
export async function budgetStates(db: Db, chain: string[]): Promise<BudgetState[]> {
  const rows = await db.delegationBudget.findMany({
    where: { delegationId: { in: chain } },
    orderBy: { delegationId: "asc" },
  });
  return Promise.all(rows.map((b) => stateOf(db, b)));
}

async function stateOf(db: Db, b: BudgetRow, now = new Date()): Promise<BudgetState> {
  const period = b.period as Budget["period"];
  const sums = await db.budgetCharge.groupBy({
    by: ["state"],
    where: { budgetDelegationId: b.delegationId, createdAt: { gte: periodStart(period, now) } },
    _sum: { amountUsd: true },
  });
  return stateFrom(
    b,
    period,
    sums.map((s) => ({ state: s.state, usd: s._sum.amountUsd })),
  );
}

/**
 * Admission, inside the call's transaction: locks the chain's budgets and returns their states
 * (the tightest first). Without budgets it returns [] and costs one indexed read.
 */
export async function lockedBudgetStates(tx: Db, engine: Database["engine"], chain: string[]): Promise<BudgetState[]> {
  const rows = await lockBudgets(tx, engine, chain);
  if (rows.length === 0) return [];
  const q = sqlIn(tx, engine);
  const now = new Date();
  const states: BudgetState[] = [];
  for (const b of rows) {
    const period = b.period as Budget["period"];
    const sums = await q.query<{ state: string; usd: number | null }>(
      `SELECT "state", SUM("amount_usd") AS "usd" FROM "budget_charge" WHERE "budget_delegation_id" = $1 AND "created_at" >= $2 GROUP BY "state"`,
      [b.delegationId, periodStart(period, now)],
    );
    states.push(stateFrom(b, period, sums));
  }
  return states.sort((a, b) => a.remainingUsd - b.remainingUsd);
}

function stateFrom(
  b: BudgetRow,
  period: Budget["period"],
  sums: Array<{ state: string; usd: number | null }>,
): BudgetState {
  const spentUsd = Number(sums.find((s) => s.state === "settled")?.usd ?? 0);
  const reservedUsd = Number(sums.find((s) => s.state === "reserved")?.usd ?? 0);
  return {
    delegationId: b.delegationId,
    limitUsd: b.limitUsd,
    period,
    spentUsd,
    reservedUsd,
    remainingUsd: Math.max(0, b.limitUsd - spentUsd - reservedUsd),
  };
}

/** The 402 for a call whose worst case does not fit the tightest budget. */
export function budgetExceeded(state: BudgetState, requiredUsd: number, detail: string, publicUrl: string) {
  return domainError("budget_exceeded", detail, {
    // The contract names the type by its ending (`budget-exceeded`); the catalogue's code keeps the
    // house's snake case, and its docs anchor is the code's.
    type: `${publicUrl}/docs/errors#${"budget_exceeded".replace("_", "-")}`,
    budget_delegation_id: state.delegationId,
    limit_usd: state.limitUsd,
    period: state.period,
    spent_usd: round(state.spentUsd),
    reserved_usd: round(state.reservedUsd),
    remaining_usd: round(state.remainingUsd),
    required_usd: round(requiredUsd),
  });
}

export const round = (usd: number) => Math.round(usd * 1e9) / 1e9;

/** Reserves `amountUsd` for the call against each budget of the chain (in the admitting transaction). */
export async function reserve(
  tx: Db,
  engine: Database["engine"],
  states: BudgetState[],
  callId: string,
  amountUsd: number,
): Promise<void> {
  const q = sqlIn(tx, engine);
  const now = new Date();
  for (const s of states)
    await q.execute(
      `INSERT INTO "budget_charge" ("id", "budget_delegation_id", "call_id", "amount_usd", "state", "created_at") VALUES ($1, $2, $3, $4, 'reserved', $5)`,
      [newId("bch"), s.delegationId, callId, amountUsd, now],
    );
}

/**
 * Settles the call's reservations to what it really cost (after the provider answered), in the
 * settling transaction `q` (raw SQL: it runs once per call, after the answer's provider round trip).
 * Never below zero: a charge that gave money back would let the next calls pass the limit.
 */
export async function settle(q: RawQueryable, callId: string, amountUsd: number, now = new Date()): Promise<void> {
  await q.execute(
    `UPDATE "budget_charge" SET "amount_usd" = $1, "state" = 'settled', "settled_at" = $2 WHERE "call_id" = $3 AND "state" = 'reserved'`,
    [amountUsd > 0 ? amountUsd : 0, now, callId],
  );
}
