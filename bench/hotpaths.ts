/**
 * `npx tsx bench/hotpaths.ts`: the hot write paths of issue 15 in one process, without Next.js
 * and without autocannon: invoke (over svc's own node:http transport, the /v1 fast path), then
 * claim + run of those executions (the worker's calls, made directly), then ingest with one
 * matching trigger. Prints CPU per operation (process.cpuUsage: this process, its threads and the
 * loopback client's share, which is the same before and after a change). A tool to compare two
 * trees back to back (`node --cpu-prof --import tsx bench/hotpaths.ts` for a profile), not a test.
 *
 * HOTPATHS_N (default 400) operations per phase; DATABASE_URL a PostgreSQL database (default a
 * fresh SQLite file).
 */
import { createServer, Agent, request } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHash } from "node:crypto";

const N = Number(process.env.HOTPATHS_N || 400);
const C = 16;
if (!process.env.DATABASE_URL) process.env.DATA_DIR = mkdtempSync(join(tmpdir(), "svc-hotpaths-"));

const { bootstrap, rootOrgDid } = await import("../server/setup/bootstrap");
const { composeServer } = await import("../server/areas");
const { database, closeDatabase } = await import("../server/db/client");
const { handleV1, servesPath } = await import("../server/http/router");
const { createApiKeyAsOperator } = await import("../server/identity/createApiKey");
const { claimJobs } = await import("../server/jobs/claim");
const { RUN_JOB, runExecutionJob } = await import("../server/executions/runExecution");
const { countStatements } = await import("../server/db/statements");
const { shutdownSandbox } = await import("../server/sandbox/pool");

await bootstrap();
composeServer();
const db = await database();
const server = createServer((req, res) => {
  if (servesPath((req.url ?? "/").split("?")[0]!)) void handleV1(req, res);
  else res.writeHead(404).end();
});
await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
const port = (server.address() as AddressInfo).port;
const agent = new Agent({ keepAlive: true, maxSockets: C });
const key = await createApiKeyAsOperator(db, {
  orgDid: (await rootOrgDid(db))!,
  capabilities: ["svc_api:*"],
  durationSeconds: 3600,
});

function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const data = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        method,
        path,
        agent,
        headers: { Authorization: `Bearer ${key.token}`, ...(data ? { "Content-Type": "application/json" } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString();
          resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined });
        });
      },
    );
    req.on("error", reject);
    req.end(data);
  });
}

async function deploy(name: string, code: string, extra: Record<string, unknown> = {}): Promise<string> {
  const bytes = Buffer.from(code);
  const res = await call("POST", "/v1/agents/deploy", {
    manifest: {
      name,
      version: "1.0.0",
      description: `bench ${name}`,
      capabilities: [{ id: "svc_api:agents:read", evidence: ["reads agents"] }],
      ...extra,
    },
    bundleBase64: bytes.toString("base64"),
    bundleHash: `sha256:${createHash("sha256").update(bytes).digest("hex")}`,
    wait: true,
  });
  if (res.status !== 201) throw new Error(`deploy ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.agentId as string;
}

async function pool(n: number, c: number, one: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: c }, async () => {
      while (next < n) await one(next++);
    }),
  );
}

// HOTPATHS_PROFILE=<file.cpuprofile>: a CPU profile of the measured phases only (not start-up).
const profiler = process.env.HOTPATHS_PROFILE ? new (await import("node:inspector/promises")).Session() : undefined;
if (profiler) {
  profiler.connect();
  await profiler.post("Profiler.enable");
}

async function phase(name: string, n: number, fn: () => Promise<void>): Promise<void> {
  if (profiler) await profiler.post("Profiler.start");
  const cpu = process.cpuUsage();
  const t = performance.now();
  const { count } = await countStatements(fn);
  const wall = performance.now() - t;
  const used = process.cpuUsage(cpu);
  if (profiler) {
    const { profile } = await profiler.post("Profiler.stop");
    const { writeFileSync } = await import("node:fs");
    writeFileSync(`${process.env.HOTPATHS_PROFILE}.${name.split(" ")[0]}.cpuprofile`, JSON.stringify(profile));
  }
  const cpuMs = (used.user + used.system) / 1000;
  console.log(
    `${name.padEnd(22)} ${(n / (wall / 1000)).toFixed(0).padStart(6)}/s  ${(cpuMs / n).toFixed(2).padStart(6)} ms CPU/op  ${(count / n).toFixed(1).padStart(5)} statements/op`,
  );
}

const helpers = { signal: new AbortController().signal, log: () => undefined, commit: <T>(f: () => Promise<T>) => f() };
async function drainRuns(n: number): Promise<void> {
  let done = 0;
  while (done < n) {
    const jobs = await claimJobs(db, "bench", RUN_JOB, C, 30_000);
    if (jobs.length === 0) break;
    await Promise.all(jobs.map((j) => runExecutionJob(j as never, helpers)));
    done += jobs.length;
  }
}

const agentId = await deploy("hot", `export default async (input) => ({ echo: input.n ?? null });`);
// warm-up
await pool(40, C, async (i) => void (await call("POST", `/v1/agents/${agentId}/invoke`, { input: { n: i } })));
await drainRuns(40);

console.log(`engine ${db.engine}, N=${N}, c=${C}`);
await phase("invoke", N, () =>
  pool(N, C, async (i) => {
    const r = await call("POST", `/v1/agents/${agentId}/invoke`, { input: { n: i } });
    if (r.status !== 202) throw new Error(`invoke ${r.status} ${JSON.stringify(r.body)}`);
  }),
);
await phase("claim + run", N, () => drainRuns(N));

await deploy("hot-trigger", `export default async () => ({})`, {
  capabilities: [
    { id: "event_trigger", evidence: ["started by events"] },
    { id: "event_trigger:hot.happened", evidence: ["reacts"] },
  ],
  on: [{ event: "hot.happened", description: "on hot" }],
});
await pool(20, C, async () => void (await call("POST", "/v1/events/ingest", { type: "hot.happened" })));
await phase("ingest (1 match)", N, () =>
  pool(N, C, async () => {
    const r = await call("POST", "/v1/events/ingest", { type: "hot.happened" });
    if (r.status >= 300 || r.body.queued_executions !== 1)
      throw new Error(`ingest ${r.status} ${JSON.stringify(r.body)}`);
  }),
);

server.close();
agent.destroy();
await shutdownSandbox();
await closeDatabase();
process.exit(0);
