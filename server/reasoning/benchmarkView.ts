import type { z } from "zod";
import type { ModelBenchmark } from "../db/generated/sqlite/client";
import type { BenchmarkResult } from "./benchmarkSchemas";

/** A stored benchmark as the API answers it (`BenchmarkResult`). */
export function benchmarkView(row: ModelBenchmark): z.input<typeof BenchmarkResult> {
  return {
    id: row.id,
    model_id: row.modelId,
    benchmark_type: row.benchmarkType,
    benchmark_suite: row.benchmarkSuite,
    score: row.score,
    run_at: row.runAt.toISOString(),
    run_by: row.runBy,
    test_cases_passed: row.testCasesPassed,
    test_cases_total: row.testCasesTotal,
    raw_results: (row.rawResults as Record<string, unknown> | null) ?? null,
    created_at: row.createdAt.toISOString(),
  };
}
