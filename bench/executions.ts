import { createHash } from "node:crypto";
import { rmSync } from "node:fs";
import { resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import type { ChildProcess } from "node:child_process";
import { exited, message, spawnChild } from "./lib/child";
import { openReader, type DbReader } from "./lib/db";
import { percentile } from "./lib/load";
import { recordFigure } from "./lib/figures";
import { machineLoad, mib } from "./lib/machine";
import { createDatabase, PG_ADMIN_URL, postgresAnswers, redact, type BenchDatabase } from "./lib/postgres";
import {
  cpuMs,
  mintApiKey,
  rssBytes,
  sampleRss,
  serverProcessPid,
  sleep,
  startServer,
  startWorkerProcess,
  stopServer,
  stopWorkerProcess,
  type Server,
  type WorkerProcess,
} from "./lib/server";

/**
 * executions: agents run as durable executions (issue 9's "Speed").
 *
 *   1. sandbox cold start: runBundle of a trivial bundle on a warm pool, reusing the organization's
 *      instance, and with a new organization each run (a fresh QuickJS instance);
 *   2. invoke → completed at c=1 on a production server on SQLite, from the moment the POST is
 *      sent to the execution's completed_at (read from the database, so polling adds no load);
 *   3. sustained executions completed per second: SQLite, one process; PostgreSQL, the web
 *      process (SVC_IN_PROCESS_WORKER=0) and two `npm run worker` processes;
 *   4. the peer: no-op jobs through svc's queue (server/jobs) and through graphile-worker, each with
 *      two worker processes of concurrency 10 on the same PostgreSQL; svc/peer must be ≥ 1.
 *
 * `npm run bench -- executions`; BENCH_EXECUTIONS_ENGINES=sqlite skips PostgreSQL (and the peer),
 * BENCH_EXECUTIONS_N sets the executions per round, BENCH_EXECUTIONS_JOBS the no-op jobs. The
 * server's own settings pass through (SVC_SANDBOX_THREADS sizes the sandbox pool and the claims).
 */

const SELF = fileURLToPath(import.meta.url);
const TARGETS = { coldStartMs: 25, latencyP50Ms: 30, latencyP99Ms: 100, sqlitePerSecond: 300, peerRatio: 1 };
const COLD_RUNS = 300;
const LATENCY_RUNS = 200;
const WARM_UP = 20;
const N = Number(process.env.BENCH_EXECUTIONS_N || 1000);
// More than N: each worker's start-up (connecting, LISTEN) falls inside the measured drain.
const JOBS = Number(process.env.BENCH_EXECUTIONS_JOBS || 2000);
const INVOKE_CONCURRENCY = 16;
const QUEUE_CONCURRENCY = 10;
const DRAIN_TIMEOUT_MS = 300_000;
const FINAL = `('completed', 'failed', 'cancelled')`;
const TRIVIAL = `export default async (input) => ({ echo: input.n ?? null });`;

const log = (line: string) => console.log(`  ${line}`);
const ms = (v: number) => `${v.toFixed(1)} ms`;
const perSecond = (n: number, elapsedMs: number) => (n / elapsedMs) * 1000;
const verdict = (ok: boolean) => (ok ? "met" : "MISSED");

export async function executions(): Promise<void> {
  console.log(`\nexecutions: ${machineLoad()}`);
  console.log("\nsandbox cold start (runBundle, one thread, in a child process)…");
  const code = await exited(spawnChild(SELF, ["--part", "sandbox"]));
  if (code !== 0) throw new Error(`the sandbox part failed (exit ${code})`);

  let sqliteCpuPerExecution: number | undefined;
  const wanted = (process.env.BENCH_EXECUTIONS_ENGINES || "sqlite,postgresql").split(",").map((e) => e.trim());
  if (wanted.includes("sqlite")) {
    console.log("\nSQLite: the production server (scripts/start.mjs), one process with its in-process worker…");
    await onServer({}, async (server, token) => {
      const agentId = await deploy(server, token, "bench-latency");
      await latency(server, token, agentId);
      const { rate, cpuPerExecution } = await sustained(
        server,
        token,
        await deploy(server, token, "bench-throughput"),
        [],
        TARGETS.sqlitePerSecond,
      );
      sqliteCpuPerExecution = cpuPerExecution;
      recordFigure({
        row: "CPU per execution (invoke + run), SQLite, one process, c=16",
        value: cpuPerExecution,
        unit: "ms",
        target: "≤ 1.5 units",
        met: true,
        cpuMsPerOp: cpuPerExecution,
        cpuOf: "server",
        cpuTargetUnits: 1.5,
      });
      recordFigure({
        row: "executions completed/s, SQLite, one process",
        value: rate,
        unit: "/s",
        target: "(a rate: read the CPU row)",
        met: true,
        cpuMsPerOp: cpuPerExecution,
        cpuOf: "server",
      });
    });
  }

  if (!wanted.includes("postgresql")) return;
  if (!(await postgresAnswers())) {
    console.log(`\nPostgreSQL: skipped, nobody answers at ${redact(PG_ADMIN_URL)}`);
    return;
  }
  // With 1 worker, then 2 on a fresh database: more processes must give more (the ratio is printed).
  const rates: number[] = [];
  for (const count of [1, 2]) {
    console.log(
      `\nPostgreSQL: the web process (SVC_IN_PROCESS_WORKER=0) and ${count} \`npm run worker\` process${count > 1 ? "es" : ""}…`,
    );
    const serverDb = await createDatabase();
    try {
      await onServer({ databaseUrl: serverDb.url, env: { SVC_IN_PROCESS_WORKER: "0" } }, async (server, token) => {
        const workers: WorkerProcess[] = [];
        try {
          for (let i = 1; i <= count; i++) workers.push(await startWorkerProcess(server, i));
          const { rate, cpuPerExecution } = await sustained(
            server,
            token,
            await deploy(server, token, "bench-throughput"),
            workers,
          );
          rates.push(rate);
          const ratio = count > 1 && rates[0] ? rate / rates[0] : undefined;
          recordFigure({
            row: `executions/s, PostgreSQL, web + ${count} worker${count > 1 ? "s" : ""}`,
            value: rate,
            unit: "/s",
            target: count > 1 ? "≥ 150/s, more than 1 worker" : "(the base of the ratio)",
            met: count > 1 ? rate >= 150 && (ratio ?? 0) > 1 : true,
            cpuMsPerOp: cpuPerExecution,
            cpuOf: "web + workers",
            note: ratio === undefined ? undefined : `2 workers / 1 worker = ${ratio.toFixed(2)}`,
          });
          if (ratio !== undefined) {
            log(`2 workers / 1 worker: ${ratio.toFixed(2)}`);
            recordFigure({
              row: "PostgreSQL, 2 workers / 1 worker",
              value: ratio,
              unit: "×",
              target: "≥ ×1.7",
              met: ratio >= 1.7,
              note: `${Math.round(rates[0]!)} and ${Math.round(rate)} executions/s`,
            });
          }
          if (count === 1 && sqliteCpuPerExecution !== undefined)
            recordFigure({
              row: "PostgreSQL CPU per execution vs SQLite's",
              value: cpuPerExecution / sqliteCpuPerExecution,
              unit: "×",
              target: "≤ ×1.5",
              met: cpuPerExecution / sqliteCpuPerExecution <= 1.5,
              cpuMsPerOp: cpuPerExecution,
              cpuOf: "web + 1 worker",
              note: `${cpuPerExecution.toFixed(2)} ms (PostgreSQL, web + 1 worker) vs ${sqliteCpuPerExecution.toFixed(2)} ms (SQLite)`,
            });
        } finally {
          await Promise.all(workers.map(stopWorkerProcess));
        }
      });
    } finally {
      await serverDb.drop();
    }
  }

  console.log(
    `\npeer: ${JOBS} no-op jobs, 2 worker processes of concurrency ${QUEUE_CONCURRENCY} each, on one fresh PostgreSQL database…`,
  );
  const peerDb = await createDatabase();
  try {
    const svc = await drainInChildren(peerDb, "svc");
    const peer = await drainInChildren(peerDb, "graphile");
    const ratio = svc.rate / peer.rate;
    log(
      `svc / graphile-worker: ${ratio.toFixed(2)} (target ≥ ${TARGETS.peerRatio}: ${verdict(ratio >= TARGETS.peerRatio)}); CPU per job ${svc.cpuPerJob.toFixed(3)} vs ${peer.cpuPerJob.toFixed(3)} ms`,
    );
    recordFigure({
      row: "svc queue vs graphile-worker, no-op jobs on PostgreSQL",
      value: ratio,
      unit: "×",
      target: `≥ ×${TARGETS.peerRatio}`,
      met: ratio >= TARGETS.peerRatio,
      cpuMsPerOp: svc.cpuPerJob,
      cpuOf: "svc's 2 worker processes, per job",
      note: `${Math.round(svc.rate)} vs ${Math.round(peer.rate)} jobs/s; CPU per job (both worker processes) ${svc.cpuPerJob.toFixed(3)} ms vs graphile-worker's ${peer.cpuPerJob.toFixed(3)} ms`,
    });
  } finally {
    await peerDb.drop();
  }
  console.log(`\nexecutions: done; ${machineLoad()}`);
}

/** Starts a server with a key, runs `body`, and stops it; the data dir is kept when `body` fails (its log is the first thing to read). */
async function onServer(
  options: Parameters<typeof startServer>[0],
  body: (server: Server, token: string) => Promise<void>,
): Promise<void> {
  const server = await startServer(options);
  log(`${server.baseUrl}, ${server.engine}, data in ${server.dataDir}`);
  // The server runs in its own process group, so Ctrl-C would not reach it: stop it here.
  const stopOnSignal = () => void stopServer(server).finally(() => process.exit(130));
  process.once("SIGINT", stopOnSignal);
  process.once("SIGTERM", stopOnSignal);
  try {
    await body(server, (await mintApiKey(server)).token);
    await stopServer(server);
    rmSync(server.dataDir, { recursive: true, force: true });
  } finally {
    process.off("SIGINT", stopOnSignal);
    process.off("SIGTERM", stopOnSignal);
    await stopServer(server);
  }
}

interface Answer {
  status: number;
  body: { id?: unknown; data?: { agentId?: unknown } } | null;
}

async function api(server: Server, token: string, method: string, path: string, body?: unknown): Promise<Answer> {
  const res = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "Content-Type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** POST /v1/agents/deploy of the trivial bundle with wait: true; the agent's id once it is active. */
async function deploy(server: Server, token: string, name: string): Promise<string> {
  const bytes = Buffer.from(TRIVIAL, "utf8");
  const res = await api(server, token, "POST", "/v1/agents/deploy", {
    manifest: {
      name,
      version: "1.0.0",
      description: "returns its input",
      capabilities: [{ id: "svc_api:agents:read", evidence: ["none: a bench agent"] }],
    },
    bundleBase64: bytes.toString("base64"),
    bundleHash: `sha256:${createHash("sha256").update(bytes).digest("hex")}`,
    wait: true,
  });
  const agentId = res.body?.data?.agentId;
  if (res.status !== 201 || typeof agentId !== "string")
    throw new Error(`deploy of ${name} answered ${res.status}: ${JSON.stringify(res.body)}`);
  return agentId;
}

async function invoke(server: Server, token: string, agentId: string, n: number): Promise<string> {
  const res = await api(server, token, "POST", `/v1/agents/${agentId}/invoke`, { input: { n } });
  const id = res.body?.id;
  if (res.status !== 202 || typeof id !== "string")
    throw new Error(`invoke answered ${res.status}: ${JSON.stringify(res.body)}`);
  return id;
}

/** A DATETIME as epoch ms: SQLite may hold it as a number or as text, PostgreSQL's is read through extract(). */
function epochMs(v: unknown): number {
  if (typeof v === "number" || typeof v === "bigint") return Number(v);
  if (typeof v === "string")
    return /^\d+(\.\d+)?$/.test(v)
      ? Number(v)
      : Date.parse(/Z|[+-]\d\d:?\d\d$/.test(v) ? v : `${v.replace(" ", "T")}Z`);
  return Number.NaN;
}

async function completedAt(
  db: DbReader,
  engine: Server["engine"],
  id: string,
): Promise<{ status: string; completedMs: number } | undefined> {
  const column = engine === "postgresql" ? `extract(epoch from "completed_at") * 1000` : `"completed_at"`;
  const [row] = await db.query<{ status: string; completed: unknown }>(
    `SELECT "status", ${column} AS completed FROM "async_execution" WHERE "id" = $1`,
    [id],
  );
  return row && row.completed !== null ? { status: row.status, completedMs: epochMs(row.completed) } : undefined;
}

/**
 * c=1: one invoke at a time. The latency is from just before the POST to the completed_at the
 * worker recorded (both on this machine's clock, to the millisecond); the database is polled
 * every millisecond only to know when to send the next one.
 */
async function latency(server: Server, token: string, agentId: string): Promise<void> {
  const db = await openReader(server.databaseUrl);
  try {
    const samples: number[] = [];
    const observed: number[] = [];
    const statuses = new Map<string, number>();
    for (let i = 0; i < WARM_UP + LATENCY_RUNS; i++) {
      const sent = Date.now();
      const t0 = performance.now();
      const id = await invoke(server, token, agentId, i);
      const deadline = t0 + 30_000;
      let done: Awaited<ReturnType<typeof completedAt>>;
      while (!(done = await completedAt(db, server.engine, id))) {
        if (performance.now() > deadline) throw new Error(`execution ${id} did not end within 30 s`);
        await sleep(1);
      }
      if (i < WARM_UP) continue;
      statuses.set(done.status, (statuses.get(done.status) ?? 0) + 1);
      samples.push(done.completedMs - sent);
      observed.push(performance.now() - t0);
    }
    samples.sort((a, b) => a - b);
    observed.sort((a, b) => a - b);
    const [p50, p99] = [percentile(samples, 50), percentile(samples, 99)];
    log(
      `invoke → completed, c=1, ${LATENCY_RUNS} runs after ${WARM_UP} warm-up (${[...statuses].map(([s, n]) => `${n} ${s}`).join(", ")}):`,
    );
    log(
      `  POST sent → completed_at: p50 ${ms(p50)} (target ≤ ${TARGETS.latencyP50Ms}: ${verdict(p50 <= TARGETS.latencyP50Ms)}), p99 ${ms(p99)} (target ≤ ${TARGETS.latencyP99Ms}: ${verdict(p99 <= TARGETS.latencyP99Ms)}), max ${ms(samples.at(-1)!)}`,
    );
    log(
      `  as the client sees it (POST → the poll that finds it ended): p50 ${ms(percentile(observed, 50))}, p99 ${ms(percentile(observed, 99))}`,
    );
  } finally {
    await db.close();
  }
}

/**
 * N invokes sent as fast as INVOKE_CONCURRENCY connections allow, while the workers run them;
 * the rate is N over the time from the first POST until the last execution has ended.
 */
async function sustained(
  server: Server,
  token: string,
  agentId: string,
  workers: WorkerProcess[],
  target?: number,
): Promise<{ rate: number; cpuPerExecution: number }> {
  const serverPid = serverProcessPid(server);
  if (serverPid === undefined) throw new Error("could not find the server/main.ts process under scripts/start.mjs");
  const db = await openReader(server.databaseUrl);
  const idle = rssBytes(serverPid) ?? 0;
  const pids = [serverPid, ...workers.map((w) => w.pid)];
  const rss = pids.map((pid) => sampleRss(pid, 250));
  const cpu = () => pids.reduce((sum, pid) => sum + (cpuMs(pid) ?? Number.NaN), 0);
  const cpuBefore = cpu();
  try {
    const t0 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: INVOKE_CONCURRENCY }, async () => {
        while (next < N) await invoke(server, token, agentId, next++);
      }),
    );
    const invoked = performance.now() - t0;
    const count = async (where: string) =>
      Number(
        (
          await db.query<{ n: unknown }>(
            `SELECT count(*) AS n FROM "async_execution" WHERE "agent_id" = $1 AND ${where}`,
            [agentId],
          )
        )[0]?.n,
      );
    // What the workers still had to do once the front stopped feeding them: tells a slow worker from a slow invoke.
    const backlog = N - (await count(`"status" IN ${FINAL}`));
    const cpuInvoked = cpu();
    while ((await count(`"status" IN ${FINAL}`)) < N) {
      if (performance.now() - t0 > DRAIN_TIMEOUT_MS)
        throw new Error(`not every execution ended within ${DRAIN_TIMEOUT_MS / 1000} s`);
      await sleep(20);
    }
    const elapsed = performance.now() - t0;
    const cpuPerExecution = (cpu() - cpuBefore) / N;
    const completed = await count(`"status" = 'completed'`);
    const [serverMax, ...workerMax] = rss.map((r) => r.stop());
    const rate = perSecond(N, elapsed);
    const label = workers.length > 0 ? `web + ${workers.length} workers` : "one process";
    log(
      `sustained, ${N} invokes at c=${INVOKE_CONCURRENCY} (${label}): ${Math.round(rate)} executions ended/s over ${(elapsed / 1000).toFixed(1)} s` +
        (target === undefined ? " (no target)" : ` (target ≥ ${target}: ${verdict(rate >= target)})`),
    );
    log(
      `  invokes accepted at ${Math.round(perSecond(N, invoked))}/s; the ${backlog} left after the last one ended at ${Math.round(perSecond(backlog, elapsed - invoked))}/s; ${completed} of ${N} completed, ${N - completed} failed or cancelled`,
    );
    log(
      `  CPU per execution (invoke and run, ${workers.length > 0 ? "web and workers" : "the server process"}): ${ms(cpuPerExecution)}, so at most ~${Math.round(1000 / cpuPerExecution)}/s per fully used core;`,
    );
    // Approximate split: the first phase also ran the N - backlog executions that got through.
    log(
      `    of which ~${ms((cpuInvoked - cpuBefore) / N)} per invoke while invoking, ~${ms((cpu() - cpuInvoked) / Math.max(1, backlog))} per run of the backlog`,
    );
    log(
      `  RSS: server ${mib(idle)} idle, ${mib(serverMax ?? 0)} max` +
        workerMax.map((b, i) => `; worker ${i + 1} ${mib(b)} max`).join(""),
    );
    return { rate, cpuPerExecution };
  } finally {
    rss.forEach((r) => r.stop());
    await db.close();
  }
}

type QueueName = "svc" | "graphile";
const QUEUE_LABEL: Record<QueueName, string> = { svc: "svc (server/jobs)", graphile: "graphile-worker 0.17" };
const PENDING: Record<QueueName, string> = {
  svc: `SELECT count(*) AS n FROM "job" WHERE "kind" = 'bench.noop'`,
  graphile: `SELECT count(*) AS n FROM graphile_worker._private_jobs`,
};

/**
 * Fills the queue with JOBS no-op jobs (in a child), starts two worker processes that load their
 * modules and connect, then says go to both at once: the rate is JOBS over the time from go until
 * the queue holds no job (polled every 20 ms, alike for both queues), in jobs/s; and the two
 * workers' CPU per job over the same time.
 */
async function drainInChildren(
  database: BenchDatabase,
  queue: QueueName,
): Promise<{ rate: number; cpuPerJob: number }> {
  const env = { ...process.env, DATABASE_URL: database.url };
  const filler = spawnChild(SELF, ["--part", `${queue}-fill`], env);
  if ((await exited(filler)) !== 0) throw new Error(`filling the ${queue} queue failed`);
  const workers: ChildProcess[] = [1, 2].map(() => spawnChild(SELF, ["--part", `${queue}-worker`], env));
  const db = await openReader(database.url);
  try {
    await Promise.all(workers.map((w) => message(w, "ready")));
    const pending = async () => Number((await db.query<{ n: unknown }>(PENDING[queue]))[0]?.n);
    if ((await pending()) !== JOBS) throw new Error(`the ${queue} queue holds ${await pending()} jobs, not ${JOBS}`);
    const rss = workers.map((w) => sampleRss(w.pid!, 250));
    const cpu = () => workers.reduce((sum, w) => sum + (cpuMs(w.pid!) ?? Number.NaN), 0);
    const cpuBefore = cpu();
    const t0 = performance.now();
    workers.forEach((w) => w.send({ type: "go" }));
    while ((await pending()) > 0) {
      if (performance.now() - t0 > DRAIN_TIMEOUT_MS)
        throw new Error(`the ${queue} queue did not drain within ${DRAIN_TIMEOUT_MS / 1000} s`);
      await sleep(20);
    }
    const elapsed = performance.now() - t0;
    const cpuPerJob = (cpu() - cpuBefore) / JOBS;
    const rate = perSecond(JOBS, elapsed);
    log(
      `${QUEUE_LABEL[queue].padEnd(22)} ${Math.round(rate)} jobs/s (${(elapsed / 1000).toFixed(2)} s), ${cpuPerJob.toFixed(3)} ms CPU per job (both workers); worker RSS ${rss.map((r) => mib(r.stop())).join(", ")}`,
    );
    return { rate, cpuPerJob };
  } finally {
    workers.forEach((w) => w.connected && w.send({ type: "stop" }));
    const codes = await Promise.all(workers.map(exited));
    await db.close();
    if (codes.some((c) => c !== 0)) throw new Error(`a ${queue} worker exited with ${codes.join(", ")}`);
  }
}

// ---- the child processes --------------------------------------------------------------------

const noop = async () => undefined;

async function sandboxPart(): Promise<void> {
  const { SandboxPool } = await import("../server/sandbox/pool");
  // One thread: each figure is one run's own time, not a share of several running at once.
  const pool = new SandboxPool({ size: 1 });
  const t0 = performance.now();
  await pool.warm();
  log(`pool of 1 thread warm in ${ms(performance.now() - t0)}`);
  const run = async (orgDid: string, n: number) => {
    const start = performance.now();
    const outcome = await pool.run({ code: TRIVIAL, input: { n }, memoryMb: 64, timeoutMs: 5000, orgDid });
    if (!outcome.ok) throw new Error(`the trivial bundle failed: ${JSON.stringify(outcome.error)}`);
    return performance.now() - start;
  };
  try {
    for (const [label, orgOf] of [
      ["same organization (its instance reused)", () => "did:svc:bench-org"],
      ["a new organization each run (a fresh instance)", (i: number) => `did:svc:bench-org-${i}`],
    ] as const) {
      for (let i = 0; i < WARM_UP; i++) await run(orgOf(-1 - i), i);
      const samples: number[] = [];
      for (let i = 0; i < COLD_RUNS; i++) samples.push(await run(orgOf(i), i));
      samples.sort((a, b) => a - b);
      const [p50, p99] = [percentile(samples, 50), percentile(samples, 99)];
      const ok = p50 <= TARGETS.coldStartMs && p99 <= TARGETS.coldStartMs;
      log(
        `${label}: p50 ${ms(p50)}, p99 ${ms(p99)}, max ${ms(samples.at(-1)!)} over ${COLD_RUNS} runs (target ≤ ${TARGETS.coldStartMs} ms: ${verdict(ok)})`,
      );
    }
    log(`RSS of this process (with its thread) ${mib(process.memoryUsage().rss)}`);
  } finally {
    await pool.shutdown();
  }
}

async function svcFillPart(): Promise<void> {
  const { migrate } = await import("../server/db/migrate");
  const { database, closeDatabase } = await import("../server/db/client");
  const { enqueue } = await import("../server/jobs");
  await migrate();
  const db = await database();
  for (let i = 0; i < JOBS; i += 100)
    await db.writeTx(
      async (tx) =>
        void (await Promise.all(
          Array.from({ length: Math.min(100, JOBS - i) }, (_, k) => enqueue(tx, "bench.noop", { i: i + k })),
        )),
    );
  await closeDatabase();
}

async function graphileFillPart(): Promise<void> {
  const { makeWorkerUtils } = await import("graphile-worker");
  const utils = await makeWorkerUtils({ connectionString: process.env.DATABASE_URL });
  try {
    await utils.migrate();
    for (let i = 0; i < JOBS; i += 500)
      await utils.addJobs(
        Array.from({ length: Math.min(500, JOBS - i) }, (_, k) => ({ identifier: "noop", payload: { i: i + k } })),
      );
  } finally {
    await utils.release();
  }
}

/** Waits for "go", runs the queue's worker until "stop", then stops it cleanly. */
async function workerPart(queue: QueueName): Promise<void> {
  const when = (type: string) =>
    new Promise<void>((res) => process.on("message", (m: { type?: string }) => m.type === type && res()));
  const go = when("go");
  const stop = when("stop");
  let halt: () => Promise<void>;
  if (queue === "svc") {
    const { database, closeDatabase } = await import("../server/db/client");
    const q = await import("../server/jobs");
    q.registerJobKind("bench.noop", { concurrency: QUEUE_CONCURRENCY, handler: noop });
    await database();
    process.send!({ type: "ready" });
    await go;
    const worker = q.startJobWorker({ kinds: ["bench.noop"], log: () => undefined });
    halt = async () => {
      await worker.stop();
      await closeDatabase();
    };
  } else {
    const { run, Logger } = await import("graphile-worker");
    process.send!({ type: "ready" });
    await go;
    const runner = await run({
      connectionString: process.env.DATABASE_URL,
      concurrency: QUEUE_CONCURRENCY,
      noHandleSignals: true,
      logger: new Logger(() => noop),
      taskList: { noop },
    });
    halt = () => runner.stop();
  }
  await stop;
  await halt();
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === SELF) {
  const part = process.argv[process.argv.indexOf("--part") + 1];
  const parts: Record<string, () => Promise<void>> = {
    sandbox: sandboxPart,
    "svc-fill": svcFillPart,
    "graphile-fill": graphileFillPart,
    "svc-worker": () => workerPart("svc"),
    "graphile-worker": () => workerPart("graphile"),
  };
  const body = part === undefined ? undefined : parts[part];
  if (!body) {
    console.error(
      `usage: npx tsx bench/executions.ts --part ${Object.keys(parts).join("|")} (npm run bench -- executions runs them all)`,
    );
    process.exit(2);
  }
  try {
    await body();
    process.exit(0);
  } catch (e) {
    console.error(`\nexecutions (${part}) failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    process.exit(1);
  }
}
