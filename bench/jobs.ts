import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { ROOT } from "./lib/server";

/**
 * jobs: the durable job queue (server/jobs) on no-op jobs, in-process, per engine in a child
 * process of its own (the server modules keep one database per process):
 *
 *   1. enqueue: one transaction per job (c=1), the way a call enqueues its work;
 *   2. drain with one worker: handlers that just return (the worker deletes them in batches);
 *   3. drain with one worker: handlers that finish their job in their own write transaction,
 *      the shape of a real handler (domain writes + fenced finishJob, one commit per job);
 *   4. PostgreSQL only: (2) with two workers sharing the queue.
 *
 * `npm run bench -- jobs`; BENCH_JOBS_ENGINES=sqlite limits the engines, BENCH_JOBS_N the jobs per round.
 */

type Engine = "sqlite" | "postgresql";
const SELF = fileURLToPath(import.meta.url);
const PG_ADMIN_URL = process.env.BENCH_PG_ADMIN_URL || "postgresql://postgres@127.0.0.1:5432/postgres";
const N = Number(process.env.BENCH_JOBS_N || 2000);
const ENQUEUE_C1 = 500;
const CONCURRENCY = 32;

export async function jobs(): Promise<void> {
  const wanted = (process.env.BENCH_JOBS_ENGINES || "sqlite,postgresql").split(",").map((e) => e.trim());
  const failed: string[] = [];
  for (const engine of ["sqlite", "postgresql"] as const) {
    if (!wanted.includes(engine)) continue;
    if (engine === "postgresql" && !(await postgresAnswers())) {
      console.log(`\njobs (postgresql): skipped, nobody answers at ${PG_ADMIN_URL}`);
      continue;
    }
    console.log(`\njobs (${engine}): ${N} no-op jobs per round, in a child process…`);
    const child = spawn(process.execPath, ["--import", "tsx", SELF, "--engine", engine], { cwd: ROOT, stdio: "inherit" });
    const code = await new Promise<number>((res, rej) => child.once("error", rej).once("exit", (c, s) => res(c ?? (s ? 128 : 1))));
    if (code !== 0) failed.push(`${engine} (exit ${code})`);
  }
  if (failed.length > 0) throw new Error(`the jobs bench failed on ${failed.join(", ")}`);
}

async function postgresAnswers(): Promise<boolean> {
  const client = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

const log = (line: string) => console.log(`  ${line}`);
const rate = (n: number, ms: number) => `${Math.round((n / ms) * 1000).toLocaleString("en-US")} jobs/s`;

async function child(engine: Engine): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), "svc-bench-jobs-"));
  let pgName: string | undefined;
  try {
    process.env.DATA_DIR = dataDir;
    if (engine === "postgresql") {
      pgName = `svc_bench_${randomBytes(4).toString("hex")}`;
      await admin(`CREATE DATABASE "${pgName}"`);
      const url = new URL(PG_ADMIN_URL);
      url.pathname = `/${pgName}`;
      process.env.DATABASE_URL = url.toString();
    } else {
      process.env.DATABASE_URL = `file:${join(dataDir, "svc.db")}`;
    }
    const { migrate } = await import("../server/db/migrate");
    const { database, closeDatabase } = await import("../server/db/client");
    const q = await import("../server/jobs");
    await migrate();
    const db = await database();

    q.registerJobKind("bench.noop", { concurrency: CONCURRENCY, handler: async () => undefined });
    q.registerJobKind("bench.tx", { concurrency: CONCURRENCY, handler: async (job) => db.writeTx((tx) => q.finishJob(tx, job)) });

    const fill = async (kind: string, n: number) => {
      for (let i = 0; i < n; i += 100) await db.writeTx(async (tx) => void (await Promise.all(Array.from({ length: Math.min(100, n - i) }, () => q.enqueue(tx, kind, { i })))));
    };
    const drain = async (kind: string, workers: number) => {
      const t0 = performance.now();
      const ws = Array.from({ length: workers }, () => q.startJobWorker({ kinds: [kind], log: () => undefined }));
      await Promise.all(ws.map((w) => w.drain()));
      const ms = performance.now() - t0;
      await Promise.all(ws.map((w) => w.stop()));
      const left = await db.read.job.count({ where: { kind } });
      if (left !== 0) throw new Error(`${left} ${kind} jobs left after draining`);
      return ms;
    };

    let t0 = performance.now();
    for (let i = 0; i < ENQUEUE_C1; i++) await db.writeTx((tx) => q.enqueue(tx, "bench.noop", { i }));
    log(`enqueue, one transaction per job (c=1, ${ENQUEUE_C1}): ${rate(ENQUEUE_C1, performance.now() - t0)}`);
    t0 = performance.now();
    await fill("bench.noop", N - ENQUEUE_C1);
    log(`enqueue, 100 per transaction (${N - ENQUEUE_C1}): ${rate(N - ENQUEUE_C1, performance.now() - t0)}`);

    log(`drain, 1 worker, handler returns (batched delete): ${rate(N, await drain("bench.noop", 1))}`);
    await fill("bench.tx", N);
    log(`drain, 1 worker, handler commits finishJob in its own transaction: ${rate(N, await drain("bench.tx", 1))}`);
    if (engine === "postgresql") {
      await fill("bench.noop", N);
      log(`drain, 2 workers, handler returns: ${rate(N, await drain("bench.noop", 2))}`);
    }
    log(`RSS ${Math.round(process.memoryUsage().rss / 2 ** 20)} MiB; load average ${loadavg().map((l) => l.toFixed(1)).join(" ")} on ${availableParallelism()} cpus (figures scale with a quiet machine)`);
    await closeDatabase();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    if (pgName) await admin(`DROP DATABASE IF EXISTS "${pgName}" WITH (FORCE)`).catch((e: unknown) => console.error(`  could not drop ${pgName}: ${String(e)}`));
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === SELF) {
  const i = process.argv.indexOf("--engine");
  const engine = process.argv[i + 1];
  if (i < 0 || (engine !== "sqlite" && engine !== "postgresql")) {
    console.error("usage: npx tsx bench/jobs.ts --engine sqlite|postgresql");
    process.exit(2);
  }
  try {
    await child(engine);
    process.exit(0);
  } catch (e) {
    console.error(`\njobs (${engine}) failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    process.exit(1);
  }
}
