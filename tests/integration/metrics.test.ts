import { spawnSync } from "node:child_process";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as metricsRoute from "@/app/metrics/route";
import { resetConfig } from "@/server/config";
import { database } from "@/server/db/client";
import { catchUp } from "@/server/ledger/buildTree";
import { startMetricsServer } from "@/server/telemetry/metricsServer";
import { metricsRegistry } from "@/server/telemetry/metrics";
import { forgetSnapshot } from "@/server/telemetry/snapshot";
import { startWorker, type Worker } from "@/server/worker/worker";
import { apiKey, call, startOtherProcess, useTestServer, waitFor } from "./harness";
import { deployAndWait } from "./agentsHelpers";
import { putEvent, startReceiver } from "./webhooksHelpers";

/**
 * GET /metrics and the metrics port, on both engines: calls, a refusal, a job and a webhook
 * delivery move the counters; the database gauges follow the queue and the ledger; the capability
 * is enforced on /metrics and the port needs none.
 */
const ctx = useTestServer();
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let worker: Worker | undefined;

beforeAll(async () => {
  receiver = await startReceiver(() => 200);
  process.env.SVC_OUTBOUND_ALLOW = receiver.hostPort;
  resetConfig();
});
afterAll(async () => {
  await worker?.stop();
  await receiver.close();
});

type Families = ReturnType<typeof parsePrometheusTextFormat>;

async function scrape(token = ctx.root.token, base = ctx.server.url): Promise<Families> {
  forgetSnapshot();
  const res = await fetch(`${base}/metrics`, { headers: { Authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return parse(await res.text());
}

/**
 * The families, each histogram also as its `_bucket`, `_sum` and `_count` series:
 * parse-prometheus-text-format keeps a histogram's samples only when it has no labels, so the text
 * is parsed a second time with histograms typed `untyped`, which makes each suffix a family of its
 * own (one per label set: `value` looks through all of them).
 */
function parse(text: string): Families {
  return [
    ...parsePrometheusTextFormat(text),
    ...parsePrometheusTextFormat(text.replace(/^(# TYPE \S+) histogram$/gm, "$1 untyped")).filter((f) =>
      /_(bucket|sum|count)$/.test(f.name),
    ),
  ];
}

/** The value of the sample of `name` whose labels include `labels` (0 when there is none). */
function value(families: Families, name: string, labels: Record<string, string> = {}): number {
  const named = families.filter((f) => f.name === name);
  if (named.length === 0) throw new Error(`no metric family ${name}`);
  const sample = named
    .flatMap((f) => f.metrics)
    .find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  return sample ? Number(sample.value) : 0;
}

const FAMILIES = [
  "svc_requests_total",
  "svc_request_duration_seconds",
  "svc_refusals_total",
  "svc_jobs_total",
  "svc_job_duration_seconds",
  "svc_webhook_deliveries_total",
  "svc_sandbox_threads",
  "svc_sandbox_threads_busy",
  "svc_sandbox_runs_queued",
  "svc_db_pool_connections",
  "svc_db_pool_connections_idle",
  "svc_db_pool_waiting",
  "svc_database_up",
  "svc_job_queue_depth",
  "svc_job_oldest_age_seconds",
  "svc_executions",
  "svc_approvals_pending",
  "svc_model_spend_usd",
  "svc_ledger_records",
  "svc_ledger_checkpoint_tree_size",
  "svc_ledger_checkpoint_age_seconds",
  "svc_process_cpu_seconds_total",
];

describe("GET /metrics", () => {
  it("is refused without a token (401) and without svc_api:metrics:read (403), each refusal recorded", async () => {
    const anonymous = await call(ctx.server.url, "GET", "/metrics");
    expect(anonymous.status).toBe(401);
    const reader = await apiKey(["svc_api:passports:read"]);
    const forbidden = await call(ctx.server.url, "GET", "/metrics", { token: reader.token });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.missing_capability).toBe("svc_api:metrics:read");

    const db = await database();
    const records = await db.read.provenanceRecord.findMany({
      where: { operation: "GET /metrics" },
      orderBy: { seq: "asc" },
    });
    expect(records.map((r) => [r.decision, r.status])).toEqual([
      ["denied", 401],
      ["denied", 403],
    ]);
  });

  it("serves every family to a key holding only svc_api:metrics:read, and records the read", async () => {
    const scraper = await apiKey(["svc_api:metrics:read"]);
    const families = await scrape(scraper.token);
    const names = families.map((f) => f.name);
    for (const name of FAMILIES) expect(names, name).toContain(name);
    expect(value(families, "svc_database_up")).toBe(1);
    expect(value(families, "svc_db_pool_connections")).toBeGreaterThanOrEqual(1);

    const db = await database();
    const last = await db.read.provenanceRecord.findFirst({
      where: { operation: "GET /metrics", delegationId: scraper.delegationId },
    });
    expect(last).toMatchObject({ decision: "allowed", status: 200, capability: "svc_api:metrics:read" });
  });

  it("answers alike through Next.js's route (app/metrics/route.ts)", async () => {
    const viaNext = (headers: Record<string, string>) =>
      metricsRoute.GET(new Request("http://localhost/metrics", { headers }));
    expect((await viaNext({})).status).toBe(401);
    const ok = await viaNext({ Authorization: `Bearer ${ctx.root.token}` });
    expect(ok.status).toBe(200);
    expect(parse(await ok.text()).map((f) => f.name)).toContain("svc_requests_total");
  });

  // Issue 27, item 6: a series born with its first value loses that first burst to increase()
  // (24 answers 500 after a restart read 5.2), and a panel shows "No data" instead of 0.
  it("has the series of known labels at zero from the start: server errors per operation, job outcomes, delivery outcomes", async () => {
    const families = await scrape();
    const sample = (name: string, labels: Record<string, string>) =>
      families
        .filter((f) => f.name === name)
        .flatMap((f) => f.metrics)
        .find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
    for (const status of ["500", "503"]) {
      expect(sample("svc_requests_total", { operation: "invokeAgent", status }), status).toBeDefined();
      expect(sample("svc_request_duration_seconds_count", { operation: "invokeAgent", status }), status).toBeDefined();
    }
    expect(Number(sample("svc_requests_total", { operation: "invokeAgent", status: "500" })?.value)).toBe(0);
    for (const outcome of ["succeeded", "retried", "dead_lettered", "given_back", "lease_lost", "abandoned"])
      expect(sample("svc_jobs_total", { kind: "execution.run", outcome }), outcome).toBeDefined();
    for (const outcome of ["delivered", "retrying", "failed"])
      expect(sample("svc_webhook_deliveries_total", { outcome }), outcome).toBeDefined();
  });

  it("names only counters `_total` (promtool check metrics)", async () => {
    const text = await metricsRegistry().metrics();
    const typed = [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m): [string, string] => [m[1]!, m[2]!]);
    expect(typed.length).toBeGreaterThan(10);
    expect(typed.filter(([name, type]) => name.endsWith("_total") && type !== "counter")).toEqual([]);
  });

  it("counts calls by operation and status, with their latency, and refusals by reason", async () => {
    const before = await scrape();
    const ok = await call(ctx.server.url, "GET", "/v1/passports", { token: ctx.root.token });
    expect(ok.status).toBe(200);
    const narrow = await apiKey(["svc_api:events:read"]);
    expect((await call(ctx.server.url, "GET", "/v1/passports", { token: narrow.token })).status).toBe(403);
    expect((await call(ctx.server.url, "GET", "/v1/passports", { token: "not.a.jwt" })).status).toBe(401);
    const after = await scrape();

    const moved = (name: string, labels: Record<string, string>) =>
      value(after, name, labels) - value(before, name, labels);
    expect(moved("svc_requests_total", { operation: "listPassports", status: "200" })).toBe(1);
    expect(moved("svc_requests_total", { operation: "listPassports", status: "403" })).toBe(1);
    expect(moved("svc_requests_total", { operation: "listPassports", status: "401" })).toBe(1);
    // The latency histogram carries the status too (OpenTelemetry's http.server.request.duration does).
    for (const status of ["200", "403", "401"])
      expect(moved("svc_request_duration_seconds_count", { operation: "listPassports", status })).toBe(1);
    expect(moved("svc_refusals_total", { reason: "forbidden" })).toBe(1);
    expect(moved("svc_refusals_total", { reason: "unauthenticated" })).toBe(1);
    // The scrapes themselves are governed calls too.
    expect(value(after, "svc_requests_total", { operation: "getMetrics", status: "200" })).toBeGreaterThan(0);
  });

  it("follows a webhook delivery: queue depth and oldest age while queued, then the job and delivery counters", async () => {
    const hook = await call(ctx.server.url, "POST", "/v1/webhooks", {
      token: ctx.root.token,
      body: { target_url: `${receiver.url}/ok`, event_types: ["invoice.*"] },
    });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    await putEvent(ctx.root.orgDid, [hook.body.id]);
    await new Promise((r) => setTimeout(r, 20));

    const queued = await scrape();
    expect(value(queued, "svc_job_queue_depth", { kind: "webhook.deliver", state: "queued" })).toBe(1);
    expect(value(queued, "svc_job_oldest_age_seconds", { kind: "webhook.deliver" })).toBeGreaterThan(0);
    const jobsBefore = value(queued, "svc_jobs_total", { kind: "webhook.deliver", outcome: "succeeded" });
    const deliveredBefore = value(queued, "svc_webhook_deliveries_total", { outcome: "delivered" });

    worker = startWorker({ log: () => undefined, tasks: [] });
    await waitFor("the delivery", async () => (receiver.at("/ok").length > 0 ? true : undefined));
    const done = await waitFor("the job's end in the metrics", async () => {
      const f = await scrape();
      return value(f, "svc_jobs_total", { kind: "webhook.deliver", outcome: "succeeded" }) > jobsBefore ? f : undefined;
    });
    expect(value(done, "svc_jobs_total", { kind: "webhook.deliver", outcome: "succeeded" })).toBe(jobsBefore + 1);
    expect(value(done, "svc_job_duration_seconds_count", { kind: "webhook.deliver" })).toBeGreaterThanOrEqual(1);
    expect(value(done, "svc_webhook_deliveries_total", { outcome: "delivered" })).toBe(deliveredBefore + 1);
    expect(value(done, "svc_job_queue_depth", { kind: "webhook.deliver", state: "queued" })).toBe(0);
  });

  it("follows an execution: its status, its job, and the sandbox's threads", async () => {
    const before = await scrape();
    const agentId = await deployAndWait(
      ctx.server.url,
      ctx.root.token,
      "metrics-scalar",
      "export default async () => 42;",
    );
    const invoked = await call(ctx.server.url, "POST", `/v1/agents/${agentId}/invoke`, {
      token: ctx.root.token,
      body: {},
    });
    expect(invoked.status).toBe(202);
    await waitFor("the execution's end", async () => {
      const e = await call(ctx.server.url, "GET", `/v1/executions/${invoked.body.id}`, { token: ctx.root.token });
      return e.body.status === "completed" ? true : undefined;
    });
    const after = await waitFor("the run's job in the metrics", async () => {
      const f = await scrape();
      return value(f, "svc_jobs_total", { kind: "execution.run", outcome: "succeeded" }) >
        value(before, "svc_jobs_total", { kind: "execution.run", outcome: "succeeded" })
        ? f
        : undefined;
    });
    expect(value(after, "svc_executions", { status: "completed" })).toBe(
      value(before, "svc_executions", { status: "completed" }) + 1,
    );
    expect(value(after, "svc_sandbox_threads")).toBeGreaterThanOrEqual(1);
    expect(value(after, "svc_sandbox_threads_busy")).toBe(0);
  });

  it("counts pending approval requests", async () => {
    const before = value(await scrape(), "svc_approvals_pending");
    const asked = await call(ctx.server.url, "POST", "/v1/approvals", {
      token: ctx.root.token,
      body: { task_id: "task-metrics", agent_id: "agt_external", action_description: "Refund", risk_level: "low" },
    });
    expect(asked.status, JSON.stringify(asked.body)).toBe(201);
    expect(value(await scrape(), "svc_approvals_pending")).toBe(before + 1);
    const cancelled = await call(ctx.server.url, "POST", `/v1/approvals/${asked.body.id}/cancel`, {
      token: ctx.root.token,
    });
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    expect(value(await scrape(), "svc_approvals_pending")).toBe(before);
  });

  it("reports the ledger's size and its latest checkpoint", async () => {
    const db = await database();
    await catchUp(db);
    const families = await scrape();
    const records = await db.read.provenanceRecord.count();
    // The scrape's own record is appended after its answer was collected.
    expect(value(families, "svc_ledger_records")).toBeGreaterThanOrEqual(records - 1);
    expect(value(families, "svc_ledger_records")).toBeLessThanOrEqual(records);
    expect(value(families, "svc_ledger_checkpoint_tree_size")).toBeGreaterThan(0);
    expect(value(families, "svc_ledger_checkpoint_age_seconds")).toBeGreaterThanOrEqual(0);
  });
});

describe("two processes on one database", () => {
  it("count their own calls, and report the same database gauges", async () => {
    const other = await startOtherProcess();
    try {
      const asked = await call(ctx.server.url, "POST", "/v1/approvals", {
        token: ctx.root.token,
        body: { task_id: "task-two", agent_id: "agt_external", action_description: "Pay", risk_level: "low" },
      });
      expect(asked.status).toBe(201);
      const here = await scrape();
      for (let i = 0; i < 3; i++)
        expect((await call(other.url, "GET", "/v1/passports", { token: ctx.root.token })).status).toBe(200);
      // The other process's snapshot is its own: it reads the database at its first scrape.
      const there = await scrape(ctx.root.token, other.url);
      const hereAfter = await scrape();

      const calls = { operation: "listPassports", status: "200" };
      expect(value(there, "svc_requests_total", calls)).toBe(3);
      expect(value(hereAfter, "svc_requests_total", calls)).toBe(value(here, "svc_requests_total", calls));
      expect(value(there, "svc_approvals_pending")).toBe(value(hereAfter, "svc_approvals_pending"));
      expect(value(there, "svc_approvals_pending")).toBeGreaterThanOrEqual(1);
      expect(value(there, "svc_ledger_checkpoint_tree_size")).toBe(value(hereAfter, "svc_ledger_checkpoint_tree_size"));
    } finally {
      other.stop();
    }
  });
});

describe("the metrics port (SVC_METRICS_PORT)", () => {
  let server: Server | undefined;
  afterAll(() => server?.close());

  it("serves the same metrics without a token on loopback, nothing else, and records nothing", async () => {
    process.env.SVC_METRICS_PORT = "0";
    resetConfig();
    server = await startMetricsServer(() => undefined);
    delete process.env.SVC_METRICS_PORT;
    resetConfig();
    const { address, port } = server!.address() as AddressInfo;
    expect(address).toBe("127.0.0.1");
    const base = `http://127.0.0.1:${port}`;

    const db = await database();
    const recordsBefore = await db.read.provenanceRecord.count();
    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(200);
    const names = parse(await res.text()).map((f) => f.name);
    for (const name of FAMILIES) expect(names, name).toContain(name);
    expect(await db.read.provenanceRecord.count()).toBe(recordsBefore);

    expect((await fetch(`${base}/other`)).status).toBe(404);
    expect((await fetch(`${base}/metrics`, { method: "POST" })).status).toBe(405);
  });

  // Issue 27, item 6: the real linter, on what this file's calls, jobs, deliveries and runs left
  // in the registry (Debian's prometheus package ships promtool; .ci/run installs it).
  it("passes `promtool check metrics` with no complaint", async () => {
    const { port } = server!.address() as AddressInfo;
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(text).toContain("svc_requests_total{");
    const lint = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" });
    expect(lint.error, "promtool is not installed (apt-get install prometheus)").toBeUndefined();
    expect([lint.status, lint.stdout + lint.stderr]).toEqual([0, ""]);
  });
});
