import type { z } from "zod";
import type { Db } from "../db/client";
import type { Principal } from "../governance/principal";
import { SUMMARY_MAX_RESULTS, type BenchmarkSummaryQuery, type BenchmarkSummaryView } from "./benchmarkSchemas";

const DAY_MS = 86_400_000;
const round = (n: number) => Math.round(n * 100) / 100;

/**
 * The organization's benchmarks folded for the console's charts, in one read: each model's
 * standing per benchmark type, per suite, and its scores per UTC day. A model's standing in a type
 * is the mean of its latest score in each of the type's suites, so a suite run ten times does not
 * outweigh one run once, and an old bad run stops counting once the suite ran again.
 *
 * It folds in memory over at most the newest 5,000 results of the window (`truncated` says when
 * there were more): portable across both engines, and far below what a chart can show.
 */
export async function summarizeBenchmarks(
  db: Db,
  principal: Principal,
  query: z.output<typeof BenchmarkSummaryQuery>,
): Promise<BenchmarkSummaryView> {
  const end = new Date();
  const start = new Date(end.getTime() - query.days * DAY_MS);
  const rows = await db.modelBenchmark.findMany({
    where: {
      orgDid: principal.orgDid,
      runAt: { gte: start },
      ...(query.model_id ? { modelId: { in: query.model_id } } : {}),
      ...(query.benchmark_type ? { benchmarkType: query.benchmark_type } : {}),
      ...(query.benchmark_suite ? { benchmarkSuite: query.benchmark_suite } : {}),
    },
    orderBy: [{ runAt: "desc" }, { id: "desc" }],
    take: SUMMARY_MAX_RESULTS + 1,
    select: { modelId: true, benchmarkType: true, benchmarkSuite: true, score: true, runAt: true },
  });
  const truncated = rows.length > SUMMARY_MAX_RESULTS;
  const read = truncated ? rows.slice(0, SUMMARY_MAX_RESULTS) : rows;

  // Newest first, so the first row seen of a (model, type, suite) is its latest.
  const suites = new Map<string, BenchmarkSummaryView["suites"][number]>();
  const days = new Map<string, { model_id: string; benchmark_type: string; day: string; sum: number; runs: number }>();
  for (const r of read) {
    const suiteKey = JSON.stringify([r.modelId, r.benchmarkType, r.benchmarkSuite]);
    const suite = suites.get(suiteKey);
    if (suite) suite.runs += 1;
    else
      suites.set(suiteKey, {
        model_id: r.modelId,
        benchmark_type: r.benchmarkType,
        benchmark_suite: r.benchmarkSuite,
        score: r.score,
        runs: 1,
        latest_run_at: r.runAt.toISOString(),
      });
    const day = r.runAt.toISOString().slice(0, 10);
    const dayKey = JSON.stringify([r.modelId, r.benchmarkType, day]);
    const point = days.get(dayKey) ?? { model_id: r.modelId, benchmark_type: r.benchmarkType, day, sum: 0, runs: 0 };
    point.sum += r.score;
    point.runs += 1;
    days.set(dayKey, point);
  }

  const best = new Map<string, number>();
  for (const r of read) {
    const key = JSON.stringify([r.modelId, r.benchmarkType]);
    best.set(key, Math.max(best.get(key) ?? 0, r.score));
  }
  const scores = new Map<string, BenchmarkSummaryView["scores"][number]>();
  for (const s of suites.values()) {
    const key = JSON.stringify([s.model_id, s.benchmark_type]);
    const score = scores.get(key);
    if (score) {
      score.suites.push(s.benchmark_suite);
      score.score += s.score; // a sum until divided below
      score.runs += s.runs;
      if (s.latest_run_at > score.latest_run_at) score.latest_run_at = s.latest_run_at;
    } else
      scores.set(key, {
        model_id: s.model_id,
        benchmark_type: s.benchmark_type,
        score: s.score,
        best_score: best.get(key)!,
        runs: s.runs,
        suites: [s.benchmark_suite],
        latest_run_at: s.latest_run_at,
      });
  }
  const byName = (a: { model_id: string; benchmark_type: string }, b: { model_id: string; benchmark_type: string }) =>
    a.model_id.localeCompare(b.model_id) || a.benchmark_type.localeCompare(b.benchmark_type);

  return {
    window: { start: start.toISOString(), end: end.toISOString() },
    models: [...new Set(read.map((r) => r.modelId))].sort(),
    benchmark_types: [...new Set(read.map((r) => r.benchmarkType))].sort(),
    scores: [...scores.values()]
      .map((s) => ({ ...s, score: round(s.score / s.suites.length), suites: s.suites.sort() }))
      .sort(byName),
    suites: [...suites.values()].sort((a, b) => byName(a, b) || a.benchmark_suite.localeCompare(b.benchmark_suite)),
    series: [...days.values()]
      .map(({ sum, ...p }) => ({ ...p, score: round(sum / p.runs) }))
      .sort((a, b) => a.day.localeCompare(b.day) || byName(a, b)),
    results_read: read.length,
    truncated,
  };
}
