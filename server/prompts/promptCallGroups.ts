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

type Row = Record<"k" | "m" | "p" | "s", string> & { f: string | null } & Record<
    "n" | "timed" | "dur" | "cost" | "tok",
    number | bigint | string | null
  >;

const num = (v: number | bigint | string | null) => (v === null ? 0 : Number(v));

/**
 * One GROUP BY over `reasoning_call`: per prompt, model and provider, the completed calls since
 * `since`, their successes, durations, costs, tokens and feedback signals. Sums, not averages, so callers can combine groups
 * exactly. Pending calls (not answered yet) are left out.
 */
export async function promptCallGroups(
  db: Db,
  engine: Database["engine"],
  orgDid: string,
  opts: { since: Date; promptKey?: string; minSample?: number },
): Promise<PromptCallGroup[]> {
  const params: unknown[] = [orgDid, engine === "sqlite" ? sqliteTimestamp(opts.since) : opts.since];
  let filter = "";
  if (opts.promptKey !== undefined) {
    params.push(opts.promptKey);
    filter = ` AND "prompt_key" = $${params.length}`;
  } else filter = ` AND "prompt_key" IS NOT NULL`;
  // Grouped by status and signal too, with plain sums: the covering index
  // `reasoning_call_prompt_affinity_idx` holds every column read here, in the GROUP BY's order, so
  // the database walks the index once, no table lookups and no sort; the few groups per
  // (prompt, model, provider) are folded below.
  const rows = await db.$queryRawUnsafe<Row[]>(
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
    const n = num(r.n);
    g.calls += n;
    if (r.s === "succeeded") g.succeeded += n;
    g.timed += num(r.timed);
    g.durationSum += num(r.dur);
    g.costSum += num(r.cost);
    g.tokenSum += num(r.tok);
    if (r.f === "positive") g.positive += n;
    else if (r.f === "negative") g.negative += n;
    else if (r.f === "rephrase") g.rephrases += n;
    else if (r.f === "correction") g.corrections += n;
  }
  return [...groups.values()].filter((g) => g.calls >= (opts.minSample ?? 1));
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
