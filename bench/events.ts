import { createHash } from "node:crypto";
import { rmSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { exited, spawnChild, runIfChild } from "./lib/child";
import { ownCpuMs, recordFigure } from "./lib/figures";
import { runLoad } from "./lib/load";
import { machineLoad, mib } from "./lib/machine";
import { profiled } from "./lib/profile";
import { createDatabase, PG_ADMIN_URL, postgresAnswers, redact } from "./lib/postgres";
import { cpuMs, mintApiKey, serverProcessPid, startServer, stopServer } from "./lib/server";

/**
 * events: the event bus (server/events), on SQLite, in a child process of its own:
 *
 *   1. matching: one organization with 10,000 subscriptions (half exact types, half `prefix.*`),
 *      the time to match one event type against them (target ≤ 20 µs);
 *   2. ingest end to end: `POST /v1/events/ingest` over loopback HTTP at c=32, each event matching
 *      one agent trigger, so every call writes the event, its match, an execution, its delegation
 *      and its job with the call's provenance record (target ≥ 1,000 events/s on SQLite). The
 *      worker is not running: this measures the bus, not the agents. The server and its client
 *      share this one process (and its one thread);
 *   3. the same against the production server (`scripts/start.mjs`) with the load from autocannon
 *      in the parent process, as clients meet it; CPU per event is the server process's. On each
 *      engine of BENCH_EVENTS_ENGINES (default `sqlite`; `sqlite,postgresql` adds a fresh database
 *      on the local PostgreSQL).
 *
 * `npm run bench -- events`; BENCH_EVENTS_N sets the events measured (after BENCH_EVENTS_WARM_UP, 1,000,
 * not measured), BENCH_EVENTS_C the concurrency; BENCH_PROFILE=<prefix> a CPU profile of the in-process
 * ingest (2., server and client).
 */
const SELF = fileURLToPath(import.meta.url);
const N = Number(process.env.BENCH_EVENTS_N || 2000);
const CONCURRENCY = Number(process.env.BENCH_EVENTS_C || 32);
// Ingested before the measured ones, as the executions bench warms up: the first few hundred calls
// of a fresh process run cold code (JIT) and would be counted as the bus's steady cost (2,000
// events measured from cold gave 715/s; 8,000 gave 901/s).
const WARM_UP = Number(process.env.BENCH_EVENTS_WARM_UP || 1000);
const SUBSCRIPTIONS = 10_000;
const MATCHES = 200_000;

export async function events(): Promise<void> {
  console.log(
    `\nevents (sqlite): matching against ${SUBSCRIPTIONS.toLocaleString("en-US")} subscriptions, then ${N} ingests end to end, in a child process…`,
  );
  const code = await exited(spawnChild(SELF, ["--child"]));
  if (code !== 0) throw new Error(`the events bench failed (exit ${code})`);
  const engines = (process.env.BENCH_EVENTS_ENGINES || "sqlite").split(",").map((e) => e.trim());
  if (engines.includes("sqlite")) await productionIngest();
  if (!engines.includes("postgresql")) return;
  if (!(await postgresAnswers())) {
    console.log(`events, PostgreSQL: skipped, nobody answers at ${redact(PG_ADMIN_URL)}`);
    return;
  }
  const db = await createDatabase();
  try {
    await productionIngest(db.url);
  } finally {
    await db.drop();
  }
}

/**
 * Ingest as clients meet it: the production server (`scripts/start.mjs`, its in-process worker off
 * so the queued runs wait) and the load from autocannon in this process, so the client's CPU is
 * not the server's. A warm-up round, then a counted one; CPU per event is the server process's.
 */
async function productionIngest(databaseUrl?: string): Promise<void> {
  const engine = databaseUrl ? ", PostgreSQL" : "";
  console.log(
    `events, the production server${engine}: ingest with one matching trigger, autocannon at c=${CONCURRENCY}…`,
  );
  const server = await startServer({ databaseUrl, env: { SVC_IN_PROCESS_WORKER: "0" } });
  try {
    const { token } = await mintApiKey(server);
    const headers = { Authorization: `Bearer ${token}`, "Content-Type": "application/json" };
    await deployTrigger(server.baseUrl, headers);
    const pid = serverProcessPid(server);
    if (pid === undefined) throw new Error("could not find the server/main.ts process");
    const spec = {
      url: `${server.baseUrl}/v1/events/ingest`,
      connections: CONCURRENCY,
      headers,
      method: "POST" as const,
      body: JSON.stringify({ type: "bench.invoice.paid", payload: { amount: 42 } }),
    };
    const warm = await runLoad({ label: "warm-up", ...spec, amount: WARM_UP });
    if (warm.non2xx + warm.errors > 0) throw new Error(`warm-up: ${warm.non2xx} non-2xx, ${warm.errors} errors`);
    const cpu0 = cpuMs(pid) ?? Number.NaN;
    const run = await runLoad({ label: "ingest", ...spec, amount: N });
    const cpuPerEvent = ((cpuMs(pid) ?? Number.NaN) - cpu0) / run.responses;
    if (run.non2xx + run.errors > 0) throw new Error(`ingest: ${run.non2xx} non-2xx, ${run.errors} errors`);
    recordFigure({
      row: `CPU per ingested event with one matching trigger${engine}`,
      value: run.rps,
      unit: "events/s",
      target: "≤ 0.5 units",
      met: true,
      cpuMsPerOp: cpuPerEvent,
      cpuOf: "server process",
      cpuTargetUnits: 0.5,
    });
    log(
      `ingest (c=${CONCURRENCY}, ${N} after ${WARM_UP} to warm up): ${Math.round(run.rps).toLocaleString("en-US")} events/s (target ≥ 1,000), p50 ${run.p50Ms.toFixed(1)} ms, p99 ${run.p99Ms.toFixed(1)} ms`,
    );
    log(`  CPU per event: ${cpuPerEvent.toFixed(2)} ms (the server process); ${machineLoad()}`);
  } finally {
    await stopServer(server);
  }
}

const log = (line: string) => console.log(`  ${line}`);

/** Deploys (and waits for) the agent whose trigger every bench event matches. */
async function deployTrigger(base: string, headers: Record<string, string>): Promise<void> {
  const code = Buffer.from("export default async (input) => ({ ok: true })", "utf8");
  const deployed = await fetch(`${base}/v1/agents/deploy`, {
    method: "POST",
    headers,
    body: JSON.stringify({
      manifest: {
        name: "bench-trigger",
        version: "1.0.0",
        capabilities: [
          { id: "event_trigger", evidence: ["bench"] },
          { id: "event_trigger:bench.*", evidence: ["bench"] },
        ],
        on: [{ event: "bench.*", description: "every bench event" }],
      },
      bundleBase64: code.toString("base64"),
      bundleHash: `sha256:${createHash("sha256").update(code).digest("hex")}`,
      wait: true,
    }),
  });
  if (deployed.status !== 201) throw new Error(`deploy answered ${deployed.status}: ${await deployed.text()}`);
}

async function child(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), "svc-bench-events-"));
  try {
    process.env.DATA_DIR = dataDir;
    process.env.DATABASE_URL = `file:${join(dataDir, "svc.db")}`;
    process.env.SVC_RATE_LIMIT_PER_MINUTE = "100000000";
    process.env.SVC_IN_PROCESS_WORKER = "0";
    const { SubscriptionIndex } = await import("../server/events/matcher");

    // 1. Matching.
    const index = new SubscriptionIndex();
    const org = "did:svc:bench";
    for (let i = 0; i < SUBSCRIPTIONS / 2; i++) index.add(org, `sub_e${i}`, [`area${i % 500}.thing${i}.happened`]);
    for (let i = 0; i < SUBSCRIPTIONS / 2; i++) index.add(org, `sub_p${i}`, [`area${i % 500}.group${i % 2000}.*`]);
    const types = Array.from({ length: 1000 }, (_, i) =>
      i % 3 === 0
        ? `area${i % 500}.thing${i}.happened`
        : i % 3 === 1
          ? `area${i % 500}.group${i % 2000}.line.added`
          : `nobody.listens${i}`,
    );
    let hits = 0;
    for (let i = 0; i < 20_000; i++) hits += index.match(org, types[i % types.length]!).length; // warm-up
    const t0 = performance.now();
    for (let i = 0; i < MATCHES; i++) hits += index.match(org, types[i % types.length]!).length;
    const perMatch = ((performance.now() - t0) * 1000) / MATCHES;
    log(
      `match one event against ${index.subscriptionCount.toLocaleString("en-US")} subscriptions: ${perMatch.toFixed(2)} µs (target ≤ 20 µs; ${hits} matches found)`,
    );

    // 2. Ingest end to end.
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
    await deployTrigger(base, headers);

    let next = 0;
    let queued = 0;
    const ingest = async (until: number, prefix: string) =>
      Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next < until) {
            const i = next++;
            const res = await fetch(`${base}/v1/events/ingest`, {
              method: "POST",
              headers,
              body: JSON.stringify({ type: "bench.invoice.paid", payload: { i }, id: `${prefix}-${i}` }),
            });
            if (res.status !== 202) throw new Error(`ingest answered ${res.status}: ${await res.text()}`);
            queued += ((await res.json()) as { queued_executions: number }).queued_executions;
          }
        }),
      );
    await ingest(WARM_UP, "warm");
    next = 0;
    queued = 0;
    const cpu0 = process.cpuUsage();
    const t1 = performance.now();
    await profiled("events-ingest", () => ingest(N, "bench"));
    const ms = performance.now() - t1;
    const cpuPerEvent = ownCpuMs(cpu0) / N;
    const rate = (N / ms) * 1000;
    recordFigure({
      row: "ingest with one matching trigger, end to end",
      value: rate,
      unit: "events/s",
      target: "≥ 1,000 events/s",
      met: rate >= 1000,
      cpuMsPerOp: cpuPerEvent,
      cpuOf: "server + its client, one process",
    });
    log(
      `ingest end to end (c=${CONCURRENCY}, each queuing one execution, after ${WARM_UP} to warm up): ${Math.round((N / ms) * 1000).toLocaleString("en-US")} events/s (target ≥ 1,000; ${queued} executions queued)`,
    );
    log(`  CPU per event: ${cpuPerEvent.toFixed(2)} ms (the server and its HTTP client share this process)`);
    log(`RSS ${mib(process.memoryUsage().rss)}; ${machineLoad()}`);
    await new Promise((r) => server.close(r));
    await closeDatabase();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await runIfChild(SELF, "events", child);
