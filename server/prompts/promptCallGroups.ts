import type { Database, Db } from "../db/client";
import { forEngine, sqliteTimestamp } from "../db/raw";

/** The recorded reasoning calls of one (prompt, model, provider), summed by the database. */
export interface PromptCallGroup {
  promptKey: string;
  modelId: string;
  provider: string;
  calls: number;
  succeeded: number;
  /** Calls with a duration (completed ones), and the sum of their durations. */
  timed: number;
  durationSum: number;
  costSum: number;
  tokenSum: number;
  positive: number;
  negative: number;
  rephrases: number;
  corrections: number;
}

type Sums = Record<
  "n" | "ok" | "timed" | "dur" | "cost" | "tok" | "pos" | "neg" | "reph" | "corr",
  number | bigint | string | null
>;
type Row = Record<"k" | "m" | "p", string> & Sums;

const num = (v: number | bigint | string | null) => (v === null ? 0 : Number(v));
const DAY_MS = 86_400_000;
/** Keys compared as the report orders them (by code unit), not by PostgreSQL's locale collation. */
const bytewise = (engine: Database["engine"]) => (engine === "postgresql" ? ` COLLATE "C"` : "");

/**
 * Per prompt, model and provider, the completed calls since `since` (pending ones, not answered
 * yet, are left out): their successes, durations, costs, tokens and feedback signals. Sums, not
 * averages, so callers can combine groups exactly.
 *
 * Read from the rollup (`prompt_call_rollup`, one row per prompt version, model, provider and UTC
 * day of the call, kept by triggers as calls settle and feedback arrives) for the whole days after
 * `since`, and from the calls themselves for the part of `since`'s own day that the window
 * covers: the same sums as over the calls alone, at the cost of a few rows per day and at most one
 * day of calls.
 */
export async function promptCallGroups(
  db: Db,
  engine: Database["engine"],
  orgDid: string,
  opts: { since: Date; promptKey?: string; fromPromptKey?: string; minSample?: number },
): Promise<PromptCallGroup[]> {
  const dayAfter = new Date((Math.floor(opts.since.getTime() / DAY_MS) + 1) * DAY_MS);
  const params: unknown[] = [orgDid, opts.since.toISOString().slice(0, 10)];
  let filter = "";
  if (opts.promptKey !== undefined) {
    params.push(opts.promptKey);
    filter = ` AND "prompt_key" = $${params.length}`;
  }
  if (opts.fromPromptKey !== undefined) {
    params.push(opts.fromPromptKey);
    filter += ` AND "prompt_key"${bytewise(engine)} >= $${params.length}`;
  }
  const days = await db.$queryRawUnsafe<Row[]>(
    ...forEngine(
      engine,
      `SELECT "prompt_key" AS "k", "model" AS "m", "provider" AS "p", SUM("calls") AS "n", SUM("succeeded") AS "ok",
              SUM("timed") AS "timed", SUM("duration_sum") AS "dur", SUM("cost_sum") AS "cost", SUM("token_sum") AS "tok",
              SUM("positive") AS "pos", SUM("negative") AS "neg", SUM("rephrases") AS "reph", SUM("corrections") AS "corr"
         FROM "prompt_call_rollup"
        WHERE "org_did" = $1 AND "day" > $2${filter}
        GROUP BY "prompt_key", "model", "provider"`,
      params,
    ),
  );
  const edge = await callRows(db, engine, orgDid, {
    since: opts.since,
    until: dayAfter,
    promptKey: opts.promptKey,
    fromPromptKey: opts.fromPromptKey,
  });
  return folded([...days, ...edge]).filter((g) => g.calls >= (opts.minSample ?? 1));
}

/**
 * The same sums as `promptCallGroups`, from the calls alone, created in `[since, until)` (no end
 * when `until` is absent): the rollup's edge days, and its reference in tests.
 */
export async function promptCallGroupsFromCalls(
  db: Db,
  engine: Database["engine"],
  orgDid: string,
  opts: { since: Date; until?: Date; promptKey?: string },
): Promise<PromptCallGroup[]> {
  return folded(await callRows(db, engine, orgDid, opts));
}

async function callRows(
  db: Db,
  engine: Database["engine"],
  orgDid: string,
  opts: { since: Date; until?: Date; promptKey?: string; fromPromptKey?: string },
): Promise<Row[]> {
  const at = (d: Date) => (engine === "sqlite" ? sqliteTimestamp(d) : d);
  const params: unknown[] = [orgDid, at(opts.since)];
  let filter = "";
  if (opts.promptKey !== undefined) {
    params.push(opts.promptKey);
    filter += ` AND "prompt_key" = $${params.length}`;
  } else filter += ` AND "prompt_key" IS NOT NULL`;
  if (opts.fromPromptKey !== undefined) {
    params.push(opts.fromPromptKey);
    filter += ` AND "prompt_key"${bytewise(engine)} >= $${params.length}`;
  }
  if (opts.until !== undefined) {
    params.push(at(opts.until));
    filter += ` AND "created_at" < $${params.length}`;
  }
  // Grouped by status and signal too, with plain sums; the few groups per (prompt, model,
  // provider) are folded after.
  const rows = await db.$queryRawUnsafe<(Row & { s: string; f: string | null })[]>(
    ...forEngine(
      engine,
      `SELECT "prompt_key" AS "k", "model" AS "m", "provider" AS "p", "status" AS "s", "feedback_signal" AS "f",
              COUNT(*) AS "n", COUNT("duration_ms") AS "timed", SUM("duration_ms") AS "dur",
              SUM("cost_usd") AS "cost", SUM("input_tokens") + SUM("output_tokens") AS "tok"
         FROM "reasoning_call"
        WHERE "org_did" = $1${filter} AND "created_at" >= $2
          AND "status" <> 'pending' AND "model" IS NOT NULL AND "provider" IS NOT NULL
        GROUP BY "prompt_key", "model", "provider", "status", "feedback_signal"`,
      params,
    ),
  );
  return rows.map(({ s, f, ...r }) => ({
    ...r,
    ok: s === "succeeded" ? r.n : 0,
    pos: f === "positive" ? r.n : 0,
    neg: f === "negative" ? r.n : 0,
    reph: f === "rephrase" ? r.n : 0,
    corr: f === "correction" ? r.n : 0,
  }));
}

/** Rows of sums folded into one group per (prompt, model, provider). */
function folded(rows: Row[]): PromptCallGroup[] {
  const groups = new Map<string, PromptCallGroup>();
  for (const r of rows) {
    const id = JSON.stringify([r.k, r.m, r.p]);
    let g = groups.get(id);
    if (!g) {
      g = {
        promptKey: r.k,
        modelId: r.m,
        provider: r.p,
        calls: 0,
        succeeded: 0,
        timed: 0,
        durationSum: 0,
        costSum: 0,
        tokenSum: 0,
        positive: 0,
        negative: 0,
        rephrases: 0,
        corrections: 0,
      };
      groups.set(id, g);
    }
    g.calls += num(r.n);
    g.succeeded += num(r.ok);
    g.timed += num(r.timed);
    g.durationSum += num(r.dur);
    g.costSum += num(r.cost);
    g.tokenSum += num(r.tok);
    g.positive += num(r.pos);
    g.negative += num(r.neg);
    g.rephrases += num(r.reph);
    g.corrections += num(r.corr);
  }
  return [...groups.values()];
}
/** The averages of a group (or of groups summed): latency, cost, tokens, success rate. */
export function averagesOf(
  g: Pick<PromptCallGroup, "calls" | "succeeded" | "timed" | "durationSum" | "costSum" | "tokenSum">,
) {
  return {
    avg_latency_ms: g.timed ? Math.round(g.durationSum / g.timed) : 0,
    avg_cost_usd: g.calls ? roundUsd(g.costSum / g.calls) : 0,
    avg_tokens: g.calls ? Math.round(g.tokenSum / g.calls) : 0,
    success_rate: g.calls ? Math.round((g.succeeded / g.calls) * 10_000) / 10_000 : 0,
  };
}

const roundUsd = (usd: number) => Math.round(usd * 1e8) / 1e8;
