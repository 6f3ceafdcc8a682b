import { z } from "zod";
import { ListQuery, PaginationInfo } from "../http/listSchemas";
import { EXAMPLE } from "../openapi/examples";

// Pure zod: the console's benchmark pages import these.

/** How large `raw_results` may be, serialized: a suite's per-case detail, not its artefacts. */
export const MAX_RAW_RESULTS_BYTES = 64 * 1024;

/** How far ahead of the service's clock `run_at` may be (clock skew between the runner and svc). */
export const RUN_AT_FUTURE_TOLERANCE_MS = 5 * 60 * 1000;

const ModelId = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .describe("A model of the catalogue (`GET /v1/reasoning/models`), e.g. `gpt-4o-mini`");
const BenchmarkType = z
  .string()
  .trim()
  .min(1)
  .max(64)
  .regex(/^[a-z0-9][a-z0-9_.-]*$/, "lower case letters, digits, `_`, `.` and `-`")
  .describe("The category the suite measures: reasoning, coding, math, summarization, …");
const BenchmarkSuite = z.string().trim().min(1).max(200).describe("The suite's name, e.g. `gsm8k` or `humaneval`");

const BENCHMARK_EXAMPLE = {
  id: "bmk_01m806mp6t2k9d8c7b6a5z4y3x",
  model_id: "gpt-4o-mini",
  benchmark_type: "math",
  benchmark_suite: "gsm8k",
  score: 87.5,
  run_at: EXAMPLE.createdAt,
  run_by: "ci-nightly",
  test_cases_passed: 1154,
  test_cases_total: 1319,
};

export const BenchmarkSubmission = z
  .object({
    model_id: ModelId,
    benchmark_type: BenchmarkType,
    benchmark_suite: BenchmarkSuite,
    score: z.number().min(0).max(100).describe("The suite's score, 0 to 100"),
    run_at: z.iso
      .datetime({ offset: true })
      .optional()
      .describe("When the suite ran (defaults to now); at most five minutes ahead of the service's clock"),
    run_by: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .optional()
      .describe("Who or what ran it (a CI job, a person); defaults to the caller's passport DID"),
    test_cases_passed: z.number().int().min(0).optional().describe("Cases passed; needs test_cases_total"),
    test_cases_total: z.number().int().min(1).optional().describe("Cases run; at least test_cases_passed"),
    raw_results: z
      .record(z.string(), z.unknown())
      .optional()
      .describe("The suite's own detail (per-case results, configuration), at most 64 KiB as JSON"),
  })
  .strict()
  .superRefine((body, ctx) => {
    const { test_cases_passed: passed, test_cases_total: total } = body;
    if (passed !== undefined && total === undefined)
      ctx.addIssue({
        code: "custom",
        path: ["test_cases_total"],
        message: "test_cases_passed needs test_cases_total.",
        params: { code: "REQUIRED_FIELD_MISSING" },
      });
    if (passed !== undefined && total !== undefined && passed > total)
      ctx.addIssue({
        code: "custom",
        path: ["test_cases_passed"],
        message: `test_cases_passed (${passed}) is more than test_cases_total (${total}).`,
        params: { code: "OUT_OF_RANGE" },
      });
    if (body.run_at !== undefined && Date.parse(body.run_at) > Date.now() + RUN_AT_FUTURE_TOLERANCE_MS)
      ctx.addIssue({
        code: "custom",
        path: ["run_at"],
        message: "run_at is in the future.",
        params: { code: "OUT_OF_RANGE" },
      });
    if (body.raw_results !== undefined && JSON.stringify(body.raw_results).length > MAX_RAW_RESULTS_BYTES)
      ctx.addIssue({
        code: "custom",
        path: ["raw_results"],
        message: `raw_results is larger than ${MAX_RAW_RESULTS_BYTES} bytes as JSON.`,
        params: { code: "OUT_OF_RANGE" },
      });
  })
  .meta({
    id: "BenchmarkSubmission",
    example: {
      model_id: BENCHMARK_EXAMPLE.model_id,
      benchmark_type: BENCHMARK_EXAMPLE.benchmark_type,
      benchmark_suite: BENCHMARK_EXAMPLE.benchmark_suite,
      score: BENCHMARK_EXAMPLE.score,
      run_at: BENCHMARK_EXAMPLE.run_at,
      run_by: BENCHMARK_EXAMPLE.run_by,
      test_cases_passed: BENCHMARK_EXAMPLE.test_cases_passed,
      test_cases_total: BENCHMARK_EXAMPLE.test_cases_total,
    },
  });

export const BenchmarkResult = z
  .object({
    id: z.string(),
    model_id: z.string(),
    benchmark_type: z.string(),
    benchmark_suite: z.string(),
    score: z.number().describe("0 to 100"),
    run_at: z.string().describe("ISO 8601 date-time"),
    run_by: z.string(),
    test_cases_passed: z.number().int().nullable().describe("null when the submission did not say"),
    test_cases_total: z.number().int().nullable().describe("null when the submission did not say"),
    raw_results: z.record(z.string(), z.unknown()).nullable().describe("As submitted; null when none was"),
    created_at: z.string().describe("When svc recorded it"),
  })
  .meta({
    id: "BenchmarkResult",
    example: { ...BENCHMARK_EXAMPLE, raw_results: null, created_at: "2026-11-21T09:30:00.020Z" },
  });

export const BenchmarkListQuery = ListQuery.extend({
  model_id: ModelId.optional().describe("Only this model's results"),
  benchmark_type: BenchmarkType.optional().describe("Only this type"),
  benchmark_suite: BenchmarkSuite.optional().describe("Only this suite"),
}).strict();

export const BenchmarkList = z.object({ data: z.array(BenchmarkResult), pagination: PaginationInfo }).meta({
  id: "BenchmarkList",
  description: "Newest run first (run_at, then id).",
  example: {
    data: [{ ...BENCHMARK_EXAMPLE, raw_results: null, created_at: "2026-11-21T09:30:00.020Z" }],
    pagination: { has_more: false, next_cursor: null },
  },
});

/** The window the summary reads by default, and at most. */
export const SUMMARY_DEFAULT_DAYS = 90;
export const SUMMARY_MAX_DAYS = 730;
/** Results the summary reads at most (the newest first): its answer says when it stopped there. */
export const SUMMARY_MAX_RESULTS = 5000;

export const BenchmarkSummaryQuery = z
  .object({
    model_id: z
      .string()
      .max(2000)
      .optional()
      .transform((v, ctx) => {
        if (v === undefined) return undefined;
        const ids = [...new Set(v.split(",").map((id) => id.trim()))].filter(Boolean);
        if (ids.length > 20) {
          ctx.addIssue({ code: "custom", message: "At most 20 models.", params: { code: "OUT_OF_RANGE" } });
          return z.NEVER;
        }
        return ids.length ? ids : undefined;
      })
      .describe("Only these models: model ids separated by commas, at most 20"),
    benchmark_type: BenchmarkType.optional().describe("Only this type"),
    benchmark_suite: BenchmarkSuite.optional().describe("Only this suite"),
    days: z.coerce
      .number()
      .int()
      .min(1)
      .max(SUMMARY_MAX_DAYS)
      .default(SUMMARY_DEFAULT_DAYS)
      .describe("How many days back from now, 1 to 730 (default 90)"),
  })
  .strict();

export const BenchmarkScore = z.object({
  model_id: z.string(),
  benchmark_type: z.string(),
  score: z
    .number()
    .describe("The mean over the type's suites of each suite's latest score: a model's standing now, not its history"),
  best_score: z.number().describe("The best single run in the window"),
  runs: z.number().int(),
  suites: z.array(z.string()).describe("The suites the score averages"),
  latest_run_at: z.string(),
});

export const BenchmarkSuiteScore = z.object({
  model_id: z.string(),
  benchmark_type: z.string(),
  benchmark_suite: z.string(),
  score: z.number().describe("The suite's latest score for the model"),
  runs: z.number().int(),
  latest_run_at: z.string(),
});

export const BenchmarkPoint = z.object({
  model_id: z.string(),
  benchmark_type: z.string(),
  day: z.string().describe("UTC day, YYYY-MM-DD"),
  score: z.number().describe("The mean score of the day's runs"),
  runs: z.number().int(),
});

export const BenchmarkSummary = z
  .object({
    window: z.object({ start: z.string(), end: z.string() }),
    models: z.array(z.string()).describe("Models with results in the window, by name"),
    benchmark_types: z.array(z.string()),
    scores: z.array(BenchmarkScore).describe("Per model and benchmark type"),
    suites: z.array(BenchmarkSuiteScore).describe("Per model and suite"),
    series: z.array(BenchmarkPoint).describe("Per model, type and UTC day, oldest first"),
    results_read: z.number().int(),
    truncated: z
      .boolean()
      .describe("More than 5,000 results in the window: the summary reads the newest 5,000 (narrow it with filters)"),
  })
  .meta({
    id: "BenchmarkSummary",
    example: {
      window: { start: "2026-08-23T09:30:00.000Z", end: "2026-11-21T09:30:00.000Z" },
      models: [BENCHMARK_EXAMPLE.model_id],
      benchmark_types: [BENCHMARK_EXAMPLE.benchmark_type],
      scores: [
        {
          model_id: BENCHMARK_EXAMPLE.model_id,
          benchmark_type: BENCHMARK_EXAMPLE.benchmark_type,
          score: BENCHMARK_EXAMPLE.score,
          best_score: BENCHMARK_EXAMPLE.score,
          runs: 1,
          suites: [BENCHMARK_EXAMPLE.benchmark_suite],
          latest_run_at: BENCHMARK_EXAMPLE.run_at,
        },
      ],
      suites: [
        {
          model_id: BENCHMARK_EXAMPLE.model_id,
          benchmark_type: BENCHMARK_EXAMPLE.benchmark_type,
          benchmark_suite: BENCHMARK_EXAMPLE.benchmark_suite,
          score: BENCHMARK_EXAMPLE.score,
          runs: 1,
          latest_run_at: BENCHMARK_EXAMPLE.run_at,
        },
      ],
      series: [
        {
          model_id: BENCHMARK_EXAMPLE.model_id,
          benchmark_type: BENCHMARK_EXAMPLE.benchmark_type,
          day: BENCHMARK_EXAMPLE.run_at.slice(0, 10),
          score: BENCHMARK_EXAMPLE.score,
          runs: 1,
        },
      ],
      results_read: 1,
      truncated: false,
    },
  });

export type BenchmarkSummaryView = z.infer<typeof BenchmarkSummary>;
