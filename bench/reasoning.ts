import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { startFakeOpenAI } from "../tests/integration/peers/fakeOpenAI";
import { recordFigure } from "./lib/figures";
import { percentile } from "./lib/load";
import { profiled } from "./lib/profile";
import { ROOT } from "./lib/server";

/**
 * reasoning: the router's own overhead per call (issue 18's "Speed"). One svc process (this one:
 * /v1 served from node:http exactly as server/main.ts does, on a fresh SQLite data dir) with one
 * OpenAI-compatible provider of 50 priced models on a loopback fake; the calls alternate, one at a
 * time, between
 *   bare      POST {provider}/chat/completions, what the provider costs on its own, and
 *   governed  POST /v1/reasoning/think: the gate (token, delegation, capability), routing over the
 *             50 models, admission (the call's row, its provenance record, one commit), the AI SDK's
 *             request to the same provider, and the settling transaction (attempts, cost),
 * and the figure is p50(governed) − p50(bare). The pure router (route() over the 50 models) is
 * timed alone as well, since it is the part the catalogue's size can grow.
 *
 * `npm run bench -- reasoning`; REASONING_BENCH_CALLS (default 400) calls of each kind;
 * BENCH_PROFILE=<prefix> a CPU profile of each block of bare and of governed calls.
 */
const MODELS = 50;
const CALLS = Number(process.env.REASONING_BENCH_CALLS || 400);
const WARM_UP = 50;

export async function reasoning(): Promise<void> {
  const models = Array.from({ length: MODELS }, (_, i) => `bench-model-${String(i).padStart(2, "0")}`);
  const peer = await startFakeOpenAI(models);
  const dataDir = mkdtempSync(join(tmpdir(), "svc-bench-reasoning-"));
  const env = {
    DATA_DIR: dataDir,
    DATABASE_URL: "",
    // A log line per call would bury the report (as in every bench child, bench/lib/child.ts).
    SVC_LOG_LEVEL: process.env.SVC_LOG_LEVEL || "warn",
    SVC_OUTBOUND_ALLOW: peer.hostPort,
    SVC_RATE_LIMIT_PER_MINUTE: "100000000",
    SVC_MODEL_PROVIDERS: JSON.stringify([
      {
        name: "bench",
        kind: "openai-compatible",
        base_url: peer.baseUrl,
        api_key: "sk-bench",
        models: models.map((model_id, i) => ({
          model_id,
          input_cost_per_million: 0.1 + i * 0.05,
          output_cost_per_million: 0.4 + i * 0.2,
          context_length: 128_000,
          capabilities: { reasoning: 0.5 + (i % 10) / 20, coding: 0.5 + ((i * 7) % 10) / 20 },
        })),
      },
    ]),
  };
  Object.assign(process.env, env);
  let server: Server | undefined;
  try {
    // Imported after the environment is set: configuration is read once.
    const { bootstrap } = await import("@/server/setup/bootstrap");
    const { composeServer } = await import("@/server/areas");
    const { handleV1, servesPath } = await import("@/server/http/router");
    await bootstrap();
    composeServer();
    server = createServer((req, res) => {
      if (servesPath((req.url ?? "/").split("?")[0]!)) void handleV1(req, res);
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const { stdout } = await promisify(execFile)(process.execPath, ["bin/svc.mjs", "keys", "create", "--json"], {
      cwd: ROOT,
      env: { ...process.env, ...env },
    });
    const token = (JSON.parse(stdout.trim().split("\n").pop()!) as { token: string }).token;

    const messages = [{ role: "user", content: "Which of these models answers cheapest at medium complexity?" }];
    const bare = async () => {
      const res = await fetch(`${peer.baseUrl}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer sk-bench" },
        body: JSON.stringify({ model: models[0], messages, max_tokens: 64 }),
      });
      if (res.status !== 200) throw new Error(`the provider answered ${res.status}`);
      await res.json();
    };
    const governed = async () => {
      const res = await fetch(`${base}/v1/reasoning/think`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
        body: JSON.stringify({ messages, task: "reasoning", budget: "optimize", max_tokens: 64 }),
      });
      if (res.status !== 200) throw new Error(`think answered ${res.status}: ${await res.text()}`);
      await res.json();
    };
    const time = async (fn: () => Promise<void>) => {
      const t = performance.now();
      await fn();
      return performance.now() - t;
    };

    console.log(`reasoning: ${MODELS} models on a loopback provider, ${CALLS} calls of each kind, one at a time…`);
    for (let i = 0; i < WARM_UP; i++) {
      await bare();
      await governed();
    }
    const bareMs: number[] = [];
    const governedMs: number[] = [];
    const cpuBefore = process.cpuUsage();
    for (let i = 0; i < CALLS; i++) {
      bareMs.push(await time(bare));
      governedMs.push(await time(governed));
    }
    const cpu = process.cpuUsage(cpuBefore);
    // The CPU svc adds to a call: blocks of one kind at a time, alternated, this process's CPU per
    // call. A think costs the client one request and the provider one answer, as a bare call
    // does; what it costs beyond is svc's (its HTTP server, the gate, routing, admission, the AI
    // SDK's request to the provider, the settling transaction).
    const cpuPerCall = async (fn: () => Promise<void>, n: number) => {
      const before = process.cpuUsage();
      for (let i = 0; i < n; i++) await fn();
      const used = process.cpuUsage(before);
      return (used.user + used.system) / 1000 / n;
    };
    const blocks = { bare: 0, governed: 0 };
    for (let round = 0; round < 2; round++) {
      blocks.bare += (await profiled(`reasoning-bare-${round}`, () => cpuPerCall(bare, CALLS / 2))) / 2;
      blocks.governed += (await profiled(`reasoning-governed-${round}`, () => cpuPerCall(governed, CALLS / 2))) / 2;
    }
    const addedCpu = blocks.governed - blocks.bare;
    bareMs.sort((a, b) => a - b);
    governedMs.sort((a, b) => a - b);
    const p = (xs: number[], q: number) => percentile(xs, q);
    const overhead = p(governedMs, 50) - p(bareMs, 50);

    // The pure router over the same 50 models: what routing itself costs per call.
    const { routingCatalogue } = await import("@/server/reasoning/routingCatalogue");
    const { route, inputTokenBound } = await import("@/server/reasoning/route");
    const { database } = await import("@/server/db/client");
    const db = await database();
    const orgDid = (await db.read.organization.findFirstOrThrow({ where: { isRoot: true }, select: { orgDid: true } }))
      .orgDid;
    const held = await routingCatalogue(db.read, orgDid);
    const routeUs: number[] = [];
    for (let i = 0; i < 5000; i++) {
      const t = performance.now();
      const out = route(held.models, held.measured, {
        task: "reasoning",
        complexity: "medium",
        budget: "optimize",
        inputTokens: inputTokenBound(messages),
        maxTokens: 64,
        maxAttempts: 3,
        rules: held.rules,
      });
      routeUs.push((performance.now() - t) * 1000);
      if (!out.ok) throw new Error(`route: ${out.kind}`);
    }
    routeUs.sort((a, b) => a - b);

    const f = (n: number) => n.toFixed(2);
    console.log(`  bare provider round trip   p50 ${f(p(bareMs, 50))} ms, p99 ${f(p(bareMs, 99))} ms`);
    console.log(`  governed think             p50 ${f(p(governedMs, 50))} ms, p99 ${f(p(governedMs, 99))} ms`);
    console.log(
      `  overhead (p50 difference)  ${f(overhead)} ms (target ≤ 1 unit, a bare request's server CPU: see the table at the end)`,
    );
    console.log(
      `  route() alone, 50 models   p50 ${f(p(routeUs, 50))} µs, p99 ${f(p(routeUs, 99))} µs (${held.models.length} models)`,
    );
    console.log(
      `  CPU of this process (svc, client and provider) per pair of calls: ${f((cpu.user + cpu.system) / 1000 / CALLS)} ms`,
    );
    console.log(
      `  CPU per call in blocks of one kind: bare ${f(blocks.bare)} ms, governed ${f(blocks.governed)} ms; svc adds ${f(addedCpu)} ms`,
    );
    recordFigure({
      row: "CPU the server adds to a model call (routing, budget, record)",
      value: addedCpu,
      unit: "ms",
      target: "≤ 1 unit",
      met: true,
      cpuMsPerOp: addedCpu,
      cpuOf: "svc, per think (think − bare call, one process)",
      cpuTargetUnits: 1,
      note: `CPU per call ${f(blocks.governed)} ms governed vs ${f(blocks.bare)} ms bare (client and loopback provider in both); route() alone p50 ${f(p(routeUs, 50))} µs over ${MODELS} models`,
    });
    recordFigure({
      row: "reasoning router overhead over the bare provider call, p50",
      value: Math.round(overhead * 100) / 100,
      unit: "ms",
      target: "(latency; the CPU row above has the target)",
      met: true,
      note: `p50 ${f(p(governedMs, 50))} ms governed vs ${f(p(bareMs, 50))} ms bare, alternated one at a time`,
    });
  } finally {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    await peer.close();
    const { closeDatabase } = await import("@/server/db/client");
    await closeDatabase();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
