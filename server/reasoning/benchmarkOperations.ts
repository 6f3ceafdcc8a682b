import { defineOperation } from "../http/operation";
import * as s from "./benchmarkSchemas";
import { listBenchmarks } from "./listBenchmarks";
import { submitBenchmark } from "./submitBenchmark";
import { summarizeBenchmarks } from "./summarizeBenchmarks";

const tag = "Reasoning";
const read = "svc_api:models:read";
const write = "svc_api:benchmarks:write";

export const submitBenchmarkOp = defineOperation({
  id: "submitBenchmark",
  method: "POST",
  path: "/v1/reasoning/benchmarks",
  tag,
  summary: "Record a benchmark result",
  description:
    "A model of the catalogue scored on a suite (score 0 to 100; test_cases_passed at most test_cases_total). svc records results, it does not run suites. A model the catalogue does not know is 404.",
  capability: write,
  resourceType: "benchmark",
  body: s.BenchmarkSubmission,
  response: s.BenchmarkResult,
  successStatus: 201,
  problems: ["not_found"],
  async handler(ctx) {
    const created = await submitBenchmark(ctx.db, ctx.principal, ctx.body);
    ctx.setResource(created.id);
    return created;
  },
});

export const listBenchmarksOp = defineOperation({
  id: "listBenchmarks",
  method: "GET",
  path: "/v1/reasoning/benchmarks",
  tag,
  summary: "List benchmark results",
  description: "Newest run first, filtered by model, benchmark type and suite.",
  capability: read,
  resourceType: "benchmark",
  query: s.BenchmarkListQuery,
  response: s.BenchmarkList,
  successStatus: 200,
  handler: (ctx) => listBenchmarks(ctx.db, ctx.principal, ctx.query, ctx.secret),
});

export const summarizeBenchmarksOp = defineOperation({
  id: "summarizeBenchmarks",
  method: "GET",
  path: "/v1/reasoning/benchmarks/summary",
  tag,
  summary: "Benchmark scores per model, type, suite and day",
  description:
    "What the console charts: each model's standing per benchmark type (the mean of its latest score in each of the type's suites), per suite, and its mean score per UTC day, over the last `days` days (default 90).",
  capability: read,
  resourceType: "benchmark",
  query: s.BenchmarkSummaryQuery,
  response: s.BenchmarkSummary,
  successStatus: 200,
  handler: (ctx) => summarizeBenchmarks(ctx.db, ctx.principal, ctx.query),
});

/** The benchmark operations; the reasoning area's operations include them. */
export const benchmarkOperations = [submitBenchmarkOp, listBenchmarksOp, summarizeBenchmarksOp];
