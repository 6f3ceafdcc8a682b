import { rmSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { exited, spawnChild } from "./lib/child";
import { machineLoad, mib } from "./lib/machine";
import { createDatabase, PG_ADMIN_URL, postgresAnswers, redact, type BenchDatabase } from "./lib/postgres";

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
const N = Number(process.env.BENCH_JOBS_N || 2000);
const ENQUEUE_C1 = 500;
const CONCURRENCY = 32;

export async function jobs(): Promise<void> {
  const wanted = (process.env.BENCH_JOBS_ENGINES || "sqlite,postgresql").split(",").map((e) => e.trim());
  const failed: string[] = [];
  for (const engine of ["sqlite", "postgresql"] as const) {
    if (!wanted.includes(engine)) continue;
    if (engine === "postgresql" && !(await postgresAnswers())) {
      console.log(`\njobs (postgresql): skipped, nobody answers at ${redact(PG_ADMIN_URL)}`);
      continue;
    }
    console.log(`\njobs (${engine}): ${N} no-op jobs per round, in a child process…`);
    const code = await exited(spawnChild(SELF, ["--engine", engine]));
    if (code !== 0) failed.push(`${engine} (exit ${code})`);
  }
  if (failed.length > 0) throw new Error(`the jobs bench failed on ${failed.join(", ")}`);
}

const log = (line: string) => console.log(`  ${line}`);
const rate = (n: number, ms: number) => `${Math.round((n / ms) * 1000).toLocaleString("en-US")} jobs/s`;

async function child(engine: Engine): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), "svc-bench-jobs-"));
  let pgDb: BenchDatabase | undefined;
  try {
    process.env.DATA_DIR = dataDir;
    if (engine === "postgresql") {
      pgDb = await createDatabase();
      process.env.DATABASE_URL = pgDb.url;
    } else {
      process.env.DATABASE_URL = `file:${join(dataDir, "svc.db")}`;
    }
    const { migrate } = await import("../server/db/migrate");
    const { database, closeDatabase } = await import("../server/db/client");
    const q = await import("../server/jobs");
    await migrate();
    const db = await database();

    q.registerJobKind("bench.noop", { concurrency: CONCURRENCY, handler: async () => undefined });
    q.registerJobKind("bench.tx", {
      concurrency: CONCURRENCY,
      handler: async (job) => db.writeTx((tx) => q.finishJob(tx, job)),
    });

    const fill = async (kind: string, n: number) => {
      for (let i = 0; i < n; i += 100)
        await db.writeTx(
          async (tx) =>
            void (await Promise.all(Array.from({ length: Math.min(100, n - i) }, () => q.enqueue(tx, kind, { i })))),
        );
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
    log(`RSS ${mib(process.memoryUsage().rss)}; ${machineLoad()}`);
    await closeDatabase();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    await pgDb?.drop();
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
