import { describe, expect, it } from "vitest";
import { apiKey, call, lastProvenance, secondOrg, useTestServer } from "./harness";

// The catalogue knows these models (api-contract.md's SVC_MODEL_PROVIDERS format). Nothing here
// calls the provider: benchmarks are submitted results.
process.env.SVC_MODEL_PROVIDERS = JSON.stringify([
  {
    name: "loopback",
    kind: "openai-compatible",
    base_url: "http://127.0.0.1:9/v1",
    models: [{ model_id: "bench-alpha" }, { model_id: "bench-beta" }, { model_id: "bench-gamma" }],
  },
]);

const t = useTestServer();
const api = (method: string, path: string, token: string | undefined, body?: unknown) =>
  call(t.server.url, method, path, { token, body });

const submission = (over: Record<string, unknown> = {}) => ({
  model_id: "bench-alpha",
  benchmark_type: "math",
  benchmark_suite: "gsm8k",
  score: 81.5,
  ...over,
});

const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString();

describe("POST /v1/reasoning/benchmarks", () => {
  it("records a result (201) with defaults for run_at and run_by, and a provenance record naming it", async () => {
    const before = Date.now();
    const res = await api("POST", "/v1/reasoning/benchmarks", t.root.token, submission({ raw_results: { n: 3 } }));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({
      model_id: "bench-alpha",
      benchmark_type: "math",
      benchmark_suite: "gsm8k",
      score: 81.5,
      run_by: t.root.orgDid,
      test_cases_passed: null,
      test_cases_total: null,
      raw_results: { n: 3 },
    });
    expect(res.body.id).toMatch(/^bmk_/);
    expect(Date.parse(res.body.run_at)).toBeGreaterThanOrEqual(before - 1000);
    const record = await lastProvenance();
    expect(record).toMatchObject({
      decision: "allowed",
      status: 201,
      resourceType: "benchmark",
      resourceId: res.body.id,
      capability: "svc_api:benchmarks:write",
    });
  });

  it("keeps run_at, run_by and the test-case counts as sent", async () => {
    const res = await api(
      "POST",
      "/v1/reasoning/benchmarks",
      t.root.token,
      submission({
        run_at: "2026-01-02T03:04:05.000Z",
        run_by: "ci-nightly",
        test_cases_passed: 7,
        test_cases_total: 7,
      }),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({
      run_at: "2026-01-02T03:04:05.000Z",
      run_by: "ci-nightly",
      test_cases_passed: 7,
      test_cases_total: 7,
    });
  });

  it.each([
    ["score above 100", { score: 100.01 }, "score", "OUT_OF_RANGE"],
    ["score below 0", { score: -1 }, "score", "OUT_OF_RANGE"],
    ["score not a number", { score: "90" }, "score", "INVALID_TYPE"],
    ["passed above total", { test_cases_passed: 11, test_cases_total: 10 }, "test_cases_passed", "OUT_OF_RANGE"],
    ["passed without total", { test_cases_passed: 3 }, "test_cases_total", "REQUIRED_FIELD_MISSING"],
    ["negative passed", { test_cases_passed: -1, test_cases_total: 10 }, "test_cases_passed", "OUT_OF_RANGE"],
    ["total of zero", { test_cases_total: 0 }, "test_cases_total", "OUT_OF_RANGE"],
    ["fractional total", { test_cases_total: 2.5 }, "test_cases_total", "INVALID_TYPE"],
    ["run_at in the future", { run_at: daysAgo(-1) }, "run_at", "OUT_OF_RANGE"],
    ["run_at not a date-time", { run_at: "yesterday" }, "run_at", "INVALID_FORMAT"],
    ["benchmark_type with capitals", { benchmark_type: "Math" }, "benchmark_type", "INVALID_FORMAT"],
    ["empty suite", { benchmark_suite: "" }, "benchmark_suite", "OUT_OF_RANGE"],
    ["raw_results over 64 KiB", { raw_results: { blob: "x".repeat(70_000) } }, "raw_results", "OUT_OF_RANGE"],
    ["an unknown field", { accuracy: 0.9 }, "accuracy", "UNKNOWN_FIELD"],
  ])("refuses %s: 400 with errors[] and nothing recorded", async (_name, over, field, code) => {
    const before = await api("GET", "/v1/reasoning/benchmarks?limit=100", t.root.token);
    const res = await api("POST", "/v1/reasoning/benchmarks", t.root.token, submission(over));
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.headers.get("content-type")).toMatch(/application\/problem\+json/);
    expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field, code })]));
    const after = await api("GET", "/v1/reasoning/benchmarks?limit=100", t.root.token);
    expect(after.body.data.length).toBe(before.body.data.length);
  });

  it("refuses each required field missing", async () => {
    for (const field of ["model_id", "benchmark_type", "benchmark_suite", "score"]) {
      const body: Record<string, unknown> = submission();
      delete body[field];
      const res = await api("POST", "/v1/reasoning/benchmarks", t.root.token, body);
      expect(res.status, field).toBe(400);
      expect(res.body.errors[0]).toMatchObject({ field, code: "REQUIRED_FIELD_MISSING" });
    }
  });

  it("accepts the bounds themselves: score 0 and 100, passed equal to total, passed 0", async () => {
    for (const over of [{ score: 0 }, { score: 100 }, { test_cases_passed: 0, test_cases_total: 1 }]) {
      const res = await api("POST", "/v1/reasoning/benchmarks", t.root.token, submission(over));
      expect(res.status, JSON.stringify(over)).toBe(201);
    }
  });

  it("a model the catalogue does not know is 404, recorded as refused", async () => {
    const res = await api("POST", "/v1/reasoning/benchmarks", t.root.token, submission({ model_id: "no-such-model" }));
    expect(res.status).toBe(404);
    expect(res.body.detail).toContain("no-such-model");
    expect(await lastProvenance()).toMatchObject({ status: 404, capability: "svc_api:benchmarks:write" });
  });

  it("needs svc_api:benchmarks:write to submit and svc_api:models:read to list", async () => {
    const reader = await apiKey(["svc_api:models:read"]);
    const denied = await api("POST", "/v1/reasoning/benchmarks", reader.token, submission());
    expect(denied.status).toBe(403);
    expect(JSON.stringify(denied.body)).toContain("svc_api:benchmarks:write");
    const writer = await apiKey(["svc_api:benchmarks:write"]);
    expect((await api("POST", "/v1/reasoning/benchmarks", writer.token, submission())).status).toBe(201);
    expect((await api("GET", "/v1/reasoning/benchmarks", writer.token)).status).toBe(403);
    expect((await api("GET", "/v1/reasoning/benchmarks", reader.token)).status).toBe(200);
  });
});

describe("GET /v1/reasoning/benchmarks", () => {
  it("filters by model, type and suite, newest run first, and pages with cursors", async () => {
    const b = await secondOrg(t.server.url, t.root.token, "Bench filters");
    const seeded = [
      { model_id: "bench-alpha", benchmark_type: "math", benchmark_suite: "gsm8k", score: 70, run_at: daysAgo(5) },
      { model_id: "bench-alpha", benchmark_type: "math", benchmark_suite: "math500", score: 60, run_at: daysAgo(4) },
      {
        model_id: "bench-alpha",
        benchmark_type: "coding",
        benchmark_suite: "humaneval",
        score: 50,
        run_at: daysAgo(3),
      },
      { model_id: "bench-beta", benchmark_type: "math", benchmark_suite: "gsm8k", score: 90, run_at: daysAgo(2) },
      { model_id: "bench-beta", benchmark_type: "coding", benchmark_suite: "humaneval", score: 40, run_at: daysAgo(1) },
    ];
    for (const s of seeded) expect((await api("POST", "/v1/reasoning/benchmarks", b.token, s)).status).toBe(201);

    const all = await api("GET", "/v1/reasoning/benchmarks", b.token);
    expect(all.status).toBe(200);
    expect(all.body.data.map((r: { score: number }) => r.score)).toEqual([40, 90, 50, 60, 70]);

    const alpha = await api("GET", "/v1/reasoning/benchmarks?model_id=bench-alpha", b.token);
    expect(alpha.body.data.map((r: { score: number }) => r.score)).toEqual([50, 60, 70]);
    const math = await api("GET", "/v1/reasoning/benchmarks?benchmark_type=math", b.token);
    expect(math.body.data.map((r: { score: number }) => r.score)).toEqual([90, 60, 70]);
    const gsm = await api("GET", "/v1/reasoning/benchmarks?benchmark_suite=gsm8k&model_id=bench-beta", b.token);
    expect(gsm.body.data.map((r: { score: number }) => r.score)).toEqual([90]);

    const seen: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const path: string = `/v1/reasoning/benchmarks?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
      const page = await api("GET", path, b.token);
      expect(page.status).toBe(200);
      seen.push(...page.body.data.map((r: { score: number }) => r.score));
      cursor = page.body.pagination.next_cursor;
      expect(page.body.pagination.has_more).toBe(cursor !== null);
      pages += 1;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([40, 90, 50, 60, 70]);
  });

  it("shows an organization only its own results", async () => {
    const b = await secondOrg(t.server.url, t.root.token, "Bench tenant");
    await api("POST", "/v1/reasoning/benchmarks", t.root.token, submission({ benchmark_suite: "root-only" }));
    const res = await api("GET", "/v1/reasoning/benchmarks?benchmark_suite=root-only", b.token);
    expect(res.body.data).toEqual([]);
  });

  it("refuses a tampered cursor, a limit out of range and an unknown filter with errors[]", async () => {
    const cases: Array<[string, string, string]> = [
      ["cursor=bad.cursor", "cursor", "INVALID_CURSOR"],
      ["limit=0", "limit", "OUT_OF_RANGE"],
      ["limit=101", "limit", "OUT_OF_RANGE"],
      ["suite=gsm8k", "suite", "UNKNOWN_FIELD"],
    ];
    for (const [q, field, code] of cases) {
      const res = await api("GET", `/v1/reasoning/benchmarks?${q}`, t.root.token);
      expect(res.status, q).toBe(400);
      expect(res.body.errors[0], q).toMatchObject({ field, code });
    }
  });
});

describe("GET /v1/reasoning/benchmarks/summary", () => {
  it("folds results per model and type (mean of each suite's latest), per suite and per day", async () => {
    const b = await secondOrg(t.server.url, t.root.token, "Bench summary");
    const seeded = [
      // alpha math: gsm8k ran twice (the latest, 80, counts), math500 once.
      { model_id: "bench-alpha", benchmark_type: "math", benchmark_suite: "gsm8k", score: 40, run_at: daysAgo(10) },
      { model_id: "bench-alpha", benchmark_type: "math", benchmark_suite: "gsm8k", score: 80, run_at: daysAgo(3) },
      { model_id: "bench-alpha", benchmark_type: "math", benchmark_suite: "math500", score: 60, run_at: daysAgo(3) },
      { model_id: "bench-beta", benchmark_type: "math", benchmark_suite: "gsm8k", score: 90, run_at: daysAgo(3) },
      {
        model_id: "bench-beta",
        benchmark_type: "coding",
        benchmark_suite: "humaneval",
        score: 33.333,
        run_at: daysAgo(1),
      },
      // Outside a 30-day window.
      { model_id: "bench-gamma", benchmark_type: "math", benchmark_suite: "gsm8k", score: 10, run_at: daysAgo(40) },
    ];
    for (const s of seeded) expect((await api("POST", "/v1/reasoning/benchmarks", b.token, s)).status).toBe(201);

    const res = await api("GET", "/v1/reasoning/benchmarks/summary?days=30", b.token);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.models).toEqual(["bench-alpha", "bench-beta"]);
    expect(res.body.benchmark_types).toEqual(["coding", "math"]);
    expect(res.body.results_read).toBe(5);
    expect(res.body.truncated).toBe(false);
    expect(res.body.scores).toEqual([
      expect.objectContaining({
        model_id: "bench-alpha",
        benchmark_type: "math",
        score: 70,
        best_score: 80,
        runs: 3,
        suites: ["gsm8k", "math500"],
      }),
      expect.objectContaining({ model_id: "bench-beta", benchmark_type: "coding", score: 33.33, runs: 1 }),
      expect.objectContaining({ model_id: "bench-beta", benchmark_type: "math", score: 90, runs: 1 }),
    ]);
    expect(res.body.suites).toContainEqual(
      expect.objectContaining({ model_id: "bench-alpha", benchmark_suite: "gsm8k", score: 80, runs: 2 }),
    );
    const alphaMath = res.body.series.filter(
      (p: { model_id: string; benchmark_type: string }) => p.model_id === "bench-alpha" && p.benchmark_type === "math",
    );
    expect(alphaMath).toEqual([
      expect.objectContaining({ day: daysAgo(10).slice(0, 10), score: 40, runs: 1 }),
      expect.objectContaining({ day: daysAgo(3).slice(0, 10), score: 70, runs: 2 }),
    ]);

    const within = await api(
      "GET",
      "/v1/reasoning/benchmarks/summary?days=60&model_id=bench-gamma,bench-beta",
      b.token,
    );
    expect(within.body.models).toEqual(["bench-beta", "bench-gamma"]);
    const coding = await api("GET", "/v1/reasoning/benchmarks/summary?benchmark_type=coding", b.token);
    expect(coding.body.scores.map((s: { model_id: string }) => s.model_id)).toEqual(["bench-beta"]);
  });

  it("refuses days out of range and more than 20 models with errors[]", async () => {
    for (const q of ["days=0", "days=731"]) {
      const res = await api("GET", `/v1/reasoning/benchmarks/summary?${q}`, t.root.token);
      expect(res.status, q).toBe(400);
      expect(res.body.errors[0]).toMatchObject({ field: "days", code: "OUT_OF_RANGE" });
    }
    const many = Array.from({ length: 21 }, (_, i) => `m${i}`).join(",");
    const res = await api("GET", `/v1/reasoning/benchmarks/summary?model_id=${many}`, t.root.token);
    expect(res.status).toBe(400);
    expect(res.body.errors[0]).toMatchObject({ field: "model_id", code: "OUT_OF_RANGE" });
  });
});
