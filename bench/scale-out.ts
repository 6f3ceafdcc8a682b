import { createHash, generateKeyPairSync, randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { openReader } from "./lib/db";
import { runLoad, type LoadResult } from "./lib/load";
import { machineLoad } from "./lib/machine";
import { createDatabase, PG_ADMIN_URL, postgresAnswers, redact } from "./lib/postgres";
import {
  mintApiKey,
  sleep,
  startServer,
  startWorkerProcess,
  stopServer,
  stopWorkerProcess,
  type Server,
  type WorkerProcess,
} from "./lib/server";

/**
 * scale-out (issue 20, item 5): svc's processes on one PostgreSQL, nothing shared but the database.
 *
 *   1. governed reads (GET /v1/agents, each authenticated, rate-limited in the shared table and
 *      recorded) per second on 1 web process, then on 2 web processes loaded at once;
 *   2. executions completed per second with 1, 2 and 4 `npm run worker` processes (the web
 *      processes' own workers off), from the first invoke to the last execution's end.
 *
 * The production server (scripts/start.mjs, the built console) with the settings every process must
 * share: DATABASE_URL, SVC_SIGNING_KEYS, SVC_LEDGER_KEYS, SVC_SECRET. On a 2-core machine more
 * processes contend for the same cores: the figures say what the database lets through, not a
 * cluster's capacity. `npm run bench -- scale-out`; BENCH_SCALE_OUT_SECONDS (default 8) sets each
 * read round, BENCH_SCALE_OUT_N (default 200) the executions per worker round.
 */
const SECONDS = Number(process.env.BENCH_SCALE_OUT_SECONDS || 8);
const N = Number(process.env.BENCH_SCALE_OUT_N || 200);
const CONNECTIONS = 16;
const INVOKE_CONCURRENCY = 16;
const TRIVIAL = `export default async (input) => ({ echo: input.n ?? null });`;
const log = (line: string) => console.log(`  ${line}`);
const perSecond = (n: number) => `${Math.round(n).toLocaleString("en-US")}/s`;

export async function scaleOut(): Promise<void> {
  console.log(`\nscale-out: ${machineLoad()}`);
  if (!(await postgresAnswers())) {
    console.log(`scale-out: skipped, nobody answers at ${redact(PG_ADMIN_URL)}`);
    return;
  }
  const db = await createDatabase("svc_bench_scaleout");
  const jwk = () => JSON.stringify([generateKeyPairSync("ed25519").privateKey.export({ format: "jwk" })]);
  const env = {
    SVC_IN_PROCESS_WORKER: "0",
    SVC_SIGNING_KEYS: jwk(),
    SVC_LEDGER_KEYS: jwk(),
    SVC_SECRET: randomBytes(32).toString("base64url"),
  };
  const servers: Server[] = [];
  const workers: WorkerProcess[] = [];
  const stopAll = async () => {
    await Promise.all(workers.map(stopWorkerProcess));
    await Promise.all(servers.map(stopServer));
  };
  const onSignal = () => void stopAll().finally(() => process.exit(130));
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    // The first start migrates; the second finds the database ready.
    servers.push(await startServer({ databaseUrl: db.url, env }));
    servers.push(await startServer({ databaseUrl: db.url, env }));
    const [a, b] = servers as [Server, Server];
    log(`web processes ${a.baseUrl} and ${b.baseUrl} on ${redact(db.url)}`);
    const token = (await mintApiKey(a)).token;
    const headers = { Authorization: `Bearer ${token}` };
    const reads = (s: Server, label: string) =>
      runLoad({ label, url: `${s.baseUrl}/v1/agents?limit=1`, connections: CONNECTIONS, headers, seconds: SECONDS });
    await reads(a, "warm-up"); // the first calls compile and warm caches

    console.log(`\ngoverned reads (GET /v1/agents), c=${CONNECTIONS} per process, ${SECONDS} s each…`);
    const one = await reads(a, "1 web");
    const both = await Promise.all([reads(a, "2 web: a"), reads(b, "2 web: b")]);
    const total = (rs: LoadResult[]) => rs.reduce((s, r) => s + r.responses, 0) / Math.max(...rs.map((r) => r.seconds));
    const errors = (rs: LoadResult[]) => rs.reduce((s, r) => s + r.non2xx + r.errors, 0);
    log(`1 web process:  ${perSecond(total([one]))} (p50 ${one.p50Ms.toFixed(1)} ms, p99 ${one.p99Ms.toFixed(1)} ms)`);
    log(
      `2 web processes: ${perSecond(total(both))} (${both.map((r) => perSecond(r.rps)).join(" + ")}); 2/1 = ${(total(both) / total([one])).toFixed(2)}`,
    );
    if (errors([one, ...both]) > 0) log(`non-2xx or errors: ${errors([one, ...both])}`);

    console.log(`\nexecutions completed/s, ${N} per round, invoked on both web processes…`);
    workers.push(await startWorkerProcess(a, 1));
    const agentId = await deploy(a, token);
    const reader = await openReader(db.url);
    try {
      const base: number[] = [];
      for (const count of [1, 2, 4]) {
        while (workers.length < count) workers.push(await startWorkerProcess(a, workers.length + 1));
        const t0 = performance.now();
        let next = 0;
        const ids: string[] = [];
        await Promise.all(
          Array.from({ length: INVOKE_CONCURRENCY }, async (_, c) => {
            while (next < N) ids.push(await invoke(c % 2 ? b : a, token, agentId, next++));
          }),
        );
        for (;;) {
          const [row] = await reader.query<{ n: string }>(
            `SELECT count(*) AS n FROM "async_execution" WHERE "id" = ANY($1) AND "status" IN ('completed','failed','cancelled')`,
            [ids],
          );
          if (Number(row?.n) === ids.length) break;
          if (performance.now() - t0 > 120_000) throw new Error(`${count} workers: executions left after 120 s`);
          await sleep(20);
        }
        const rate = (N / (performance.now() - t0)) * 1000;
        base.push(rate);
        log(
          `${count} worker${count > 1 ? "s" : ""}: ${perSecond(rate)}${count > 1 ? ` (×${(rate / base[0]!).toFixed(2)})` : ""}`,
        );
      }
    } finally {
      await reader.close();
    }
    await stopAll();
    for (const s of servers) rmSync(s.dataDir, { recursive: true, force: true });
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    await stopAll();
    await db.drop();
  }
  console.log(`\nscale-out: done; ${machineLoad()}`);
}

async function post(server: Server, token: string, path: string, body: unknown) {
  const res = await fetch(`${server.baseUrl}${path}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as { id?: string; data?: { agentId?: string } } };
}

async function deploy(server: Server, token: string): Promise<string> {
  const bytes = Buffer.from(TRIVIAL, "utf8");
  const res = await post(server, token, "/v1/agents/deploy", {
    manifest: {
      name: "bench-scale-out",
      version: "1.0.0",
      description: "returns its input",
      capabilities: [{ id: "svc_api:agents:read", evidence: ["none: a bench agent"] }],
    },
    bundleBase64: bytes.toString("base64"),
    bundleHash: `sha256:${createHash("sha256").update(bytes).digest("hex")}`,
    wait: true,
  });
  if (res.status !== 201 || !res.body.data?.agentId) throw new Error(`deploy answered ${res.status}`);
  return res.body.data.agentId;
}

async function invoke(server: Server, token: string, agentId: string, n: number): Promise<string> {
  const res = await post(server, token, `/v1/agents/${agentId}/invoke`, { input: { n } });
  if (res.status !== 202 || !res.body.id) throw new Error(`invoke answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.id;
}
