import { rmSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { exited, spawnChild, runIfChild } from "./lib/child";
import { recordFigure } from "./lib/figures";
import { machineLoad } from "./lib/machine";

/**
 * marketplace-invoke: what governing a connector invocation costs over calling the provider
 * directly, on SQLite, in a child process of its own. A loopback provider answers a small JSON
 * body. "Bare" is a client's keep-alive HTTP call straight to it; "governed" is the same action
 * through `POST /v1/marketplace/installations/{id}/invoke` on svc's own HTTP transport:
 * authentication, authorization, input validation (ajv), the invocation row and its provenance
 * record in one transaction, the provider call through the SSRF guard, the outcome's update.
 * Sequential calls (c=1), p50 and p99 of each; the overhead is the difference of the p50s.
 * Target ≤ 2 ms p50.
 *
 * `npm run bench -- marketplace-invoke`; BENCH_MARKETPLACE_INVOKE_N sets the calls.
 */
const SELF = fileURLToPath(import.meta.url);
const N = Number(process.env.BENCH_MARKETPLACE_INVOKE_N || 2000);

export async function marketplaceInvoke(): Promise<void> {
  console.log(`\nmarketplace-invoke (sqlite): ${N} governed invocations vs ${N} bare calls to a loopback provider…`);
  const code = await exited(spawnChild(SELF, ["--child"]));
  if (code !== 0) throw new Error(`the marketplace-invoke bench failed (exit ${code})`);
}

const log = (line: string) => console.log(`  ${line}`);
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

async function timed(n: number, fn: () => Promise<void>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    out.push(performance.now() - t);
  }
  return out.sort((a, b) => a - b);
}

async function child(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), "svc-bench-marketplace-"));
  try {
    const body = JSON.stringify({ id: 1, title: "A small answer", labels: ["a", "b"] });
    const provider = createServer((req, res) => {
      req.resume();
      req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end(body));
    });
    await new Promise<void>((r) => provider.listen(0, "127.0.0.1", r));
    const providerPort = (provider.address() as AddressInfo).port;
    process.env.DATA_DIR = dataDir;
    process.env.DATABASE_URL = `file:${join(dataDir, "svc.db")}`;
    process.env.SVC_RATE_LIMIT_PER_MINUTE = "100000000";
    process.env.SVC_IN_PROCESS_WORKER = "0";
    process.env.SVC_OUTBOUND_ALLOW = `127.0.0.1:${providerPort}`;

    const { bootstrap, rootOrgDid } = await import("../server/setup/bootstrap");
    const { database, closeDatabase } = await import("../server/db/client");
    const { createApiKeyAsOperator } = await import("../server/identity/createApiKey");
    const { handleV1, servesPath } = await import("../server/http/router");
    await bootstrap();
    (await import("../server/areas")).composeServer();
    const db = await database();
    const key = await createApiKeyAsOperator(db, {
      orgDid: (await rootOrgDid(db))!,
      capabilities: ["svc_api:*"],
      durationSeconds: 3600,
    });
    const server = createServer((req, res) => {
      if (servesPath((req.url ?? "/").split("?")[0]!)) void handleV1(req, res);
      else res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const headers = { Authorization: `Bearer ${key.token}`, "Content-Type": "application/json" };
    const providerUrl = `http://127.0.0.1:${providerPort}`;
    const installed = await fetch(`${base}/v1/marketplace/connectors/http-json/install`, {
      method: "POST",
      headers,
      body: JSON.stringify({ deployment_mode: "cloud", config: {}, base_url: providerUrl }),
    });
    if (installed.status !== 201) throw new Error(`install answered ${installed.status}: ${await installed.text()}`);
    const { installation_id } = (await installed.json()) as { installation_id: string };

    const bare = async () => {
      const res = await fetch(`${providerUrl}/issues?state=open`, { headers: { accept: "application/json" } });
      await res.json();
    };
    const governed = async () => {
      const res = await fetch(`${base}/v1/marketplace/installations/${installation_id}/invoke`, {
        method: "POST",
        headers,
        body: JSON.stringify({ action: "get_json", input: { resource: "issues", state: "open" } }),
      });
      const out = (await res.json()) as { status_code?: number };
      if (res.status !== 200 || out.status_code !== 200)
        throw new Error(`invoke answered ${res.status}: ${JSON.stringify(out)}`);
    };
    // Warm both paths (JIT, connection pools, the catalogue's compiled schemas).
    await timed(100, bare);
    await timed(100, governed);
    const b = await timed(N, bare);
    const g = await timed(N, governed);
    const overhead = pct(g, 0.5) - pct(b, 0.5);
    log(`bare call to the provider: p50 ${pct(b, 0.5).toFixed(2)} ms, p99 ${pct(b, 0.99).toFixed(2)} ms`);
    log(`governed invoke:           p50 ${pct(g, 0.5).toFixed(2)} ms, p99 ${pct(g, 0.99).toFixed(2)} ms`);
    log(`overhead of governing it: ${overhead.toFixed(2)} ms p50 (target ≤ 2 ms)`);
    recordFigure({
      row: "governed connector invoke overhead over the bare call, p50",
      value: overhead,
      unit: "ms",
      target: "≤ 2 ms",
      met: overhead <= 2,
      note: `bare p50 ${pct(b, 0.5).toFixed(2)} ms, governed p50 ${pct(g, 0.5).toFixed(2)} ms`,
    });
    const rows = await db.read.connectorInvocation.count({ where: { installationId: installation_id } });
    log(`${rows} invocation records; ${machineLoad()}`);
    await new Promise((r) => server.close(r));
    await new Promise((r) => provider.close(r));
    await closeDatabase();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await runIfChild(SELF, "marketplace-invoke", child);
