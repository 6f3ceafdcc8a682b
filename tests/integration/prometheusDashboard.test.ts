import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import type { Server } from "node:http";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resetConfig } from "@/server/config";
import { startMetricsServer } from "@/server/telemetry/metricsServer";
import { call, useTestServer, waitFor } from "./harness";

/**
 * Issue 27, item 6: every query of the shipped Grafana dashboard, evaluated by a real Prometheus
 * (Debian's package; .ci/run installs it) that scrapes this process's metrics port as a job of its
 * own, after a short load. A query that parses but selects nothing would be a panel showing
 * "No data" for ever.
 */
const ctx = useTestServer();
const JOB = "svc-dashboard-test";
const dashboard = JSON.parse(readFileSync(join(process.cwd(), "ops/grafana/svc-dashboard.json"), "utf8")) as {
  panels: { title: string; targets?: { expr: string }[] }[];
};
/**
 * Queries whose series only a model provider's calls create (spend and usage anomalies are by
 * provider, and no provider is configured here): they are evaluated, not required to have data.
 */
const NEEDS_A_MODEL_PROVIDER = /svc_model_(spend_usd|usage_anomalies_total)/;

let metrics: Server | undefined;
let prometheus: ChildProcess | undefined;
let work: string;
let base: string;

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise((resolve) => s.close(resolve));
  return port;
}

async function query(expr: string): Promise<{ status: string; data: { result: unknown[] }; error?: string }> {
  const res = await fetch(`${base}/api/v1/query?query=${encodeURIComponent(expr)}`);
  return (await res.json()) as { status: string; data: { result: unknown[] }; error?: string };
}

beforeAll(async () => {
  process.env.SVC_METRICS_PORT = "0";
  resetConfig();
  metrics = await startMetricsServer(() => undefined);
  delete process.env.SVC_METRICS_PORT;
  resetConfig();
  const target = `127.0.0.1:${(metrics!.address() as AddressInfo).port}`;
  work = mkdtempSync(join(tmpdir(), "svc-prometheus-"));
  writeFileSync(
    join(work, "prometheus.yml"),
    `global: { scrape_interval: 1s, evaluation_interval: 1s }\nscrape_configs:\n  - job_name: ${JOB}\n    static_configs: [{ targets: ["${target}"] }]\n`,
  );
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  prometheus = spawn(
    "prometheus",
    [
      `--config.file=${join(work, "prometheus.yml")}`,
      `--storage.tsdb.path=${join(work, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: "ignore" },
  );
  await waitFor("Prometheus scrapes svc", async () => {
    const up = await query(`up{job="${JOB}"} == 1`).catch(() => undefined);
    return up && up.data.result.length > 0 ? true : undefined;
  });
}, 60_000);
afterAll(async () => {
  prometheus?.kill("SIGTERM");
  metrics?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("ops/grafana/svc-dashboard.json against a real Prometheus", () => {
  it("every panel's query evaluates, and each returns data after a short load", async () => {
    // The load: calls answered and refused, across a few scrapes so that rates have two samples.
    for (let round = 0; round < 3; round++) {
      expect((await call(ctx.server.url, "GET", "/v1/passports", { token: ctx.root.token })).status).toBe(200);
      expect((await call(ctx.server.url, "GET", "/v1/passports")).status).toBe(401);
      await new Promise((r) => setTimeout(r, 1100));
    }
    const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ title: p.title, expr: t.expr })));
    expect(exprs.length).toBeGreaterThan(20);
    const empty: string[] = [];
    await waitFor("a rate over the load", async () => {
      const r = await query(`sum(rate(svc_requests_total{job="${JOB}"}[10s]))`);
      return r.data.result.length > 0 ? true : undefined;
    });
    for (const { title, expr } of exprs) {
      const r = await query(expr.replaceAll("$__rate_interval", "10s").replaceAll("$job", JOB));
      expect([title, r.status, r.error]).toEqual([title, "success", undefined]);
      if (r.data.result.length === 0 && !NEEDS_A_MODEL_PROVIDER.test(expr)) empty.push(`${title}: ${expr}`);
    }
    expect(empty).toEqual([]);
  });
});
