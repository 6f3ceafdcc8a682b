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
import { machineLoad, mib } from "./lib/machine";
import { profiled } from "./lib/profile";
import { createDatabase, PG_ADMIN_URL, postgresAnswers, redact } from "./lib/postgres";

/**
 * webhooks: delivery throughput (server/webhooks) on SQLite, in a child process of its own. N
 * events are ingested for one webhook with the worker stopped, then one job worker delivers them
 * to a loopback receiver answering 204: each delivery is a signed POST plus one write
 * transaction (the attempt's log row, the job's end and a provenance record). Target ≥ 500
 * deliveries/s.
 *
 * `npm run bench -- webhooks`; BENCH_WEBHOOKS_N sets the deliveries; BENCH_WEBHOOKS_ENGINES
 * (default `sqlite`; `sqlite,postgresql` adds a fresh database on the local PostgreSQL) the engines;
 * BENCH_PROFILE=<prefix> a CPU profile of the deliveries alone and of the deliveries with their ingest.
 */
const SELF = fileURLToPath(import.meta.url);
const N = Number(process.env.BENCH_WEBHOOKS_N || 2000);

export async function webhooks(): Promise<void> {
  const engines = (process.env.BENCH_WEBHOOKS_ENGINES || "sqlite").split(",").map((e) => e.trim());
  if (engines.includes("sqlite")) {
    console.log(`\nwebhooks (sqlite): ${N} deliveries to a loopback receiver, in a child process…`);
    const code = await exited(spawnChild(SELF, ["--child"]));
    if (code !== 0) throw new Error(`the webhooks bench failed (exit ${code})`);
  }
  if (!engines.includes("postgresql")) return;
  if (!(await postgresAnswers())) {
    console.log(`\nwebhooks (PostgreSQL): skipped, nobody answers at ${redact(PG_ADMIN_URL)}`);
    return;
  }
  console.log(`\nwebhooks (PostgreSQL): ${N} deliveries to a loopback receiver, in a child process…`);
  const db = await createDatabase();
  try {
    const code = await exited(spawnChild(SELF, ["--child"], { ...process.env, BENCH_WEBHOOKS_DATABASE_URL: db.url }));
    if (code !== 0) throw new Error(`the webhooks bench on PostgreSQL failed (exit ${code})`);
  } finally {
    await db.drop();
  }
}

const log = (line: string) => console.log(`  ${line}`);

async function child(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), "svc-bench-webhooks-"));
  try {
    let received = 0;
    const receiver = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        received++;
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
    const receiverPort = (receiver.address() as AddressInfo).port;
    process.env.DATA_DIR = dataDir;
    process.env.DATABASE_URL = process.env.BENCH_WEBHOOKS_DATABASE_URL || `file:${join(dataDir, "svc.db")}`;
    const engine = process.env.BENCH_WEBHOOKS_DATABASE_URL ? ", PostgreSQL" : "";
    process.env.SVC_RATE_LIMIT_PER_MINUTE = "100000000";
    process.env.SVC_IN_PROCESS_WORKER = "0";
    process.env.SVC_OUTBOUND_ALLOW = `127.0.0.1:${receiverPort}`;

    const { bootstrap, rootOrgDid } = await import("../server/setup/bootstrap");
    const { database, closeDatabase } = await import("../server/db/client");
    const { createApiKeyAsOperator } = await import("../server/identity/createApiKey");
    const { handleV1, servesPath } = await import("../server/http/router");
    const { startJobWorker } = await import("../server/jobs");
    const { DELIVER_JOB } = await import("../server/webhooks/deliveryJob");
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
    const hook = await fetch(`${base}/v1/webhooks`, {
      method: "POST",
      headers,
      body: JSON.stringify({ target_url: `http://127.0.0.1:${receiverPort}/hook`, event_types: ["bench.*"] }),
    });
    if (hook.status !== 201) throw new Error(`create webhook answered ${hook.status}: ${await hook.text()}`);
    const { id } = (await hook.json()) as { id: string };

    const ingest = async (from: number) => {
      let next = from;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (next < from + N) {
            const i = next++;
            const res = await fetch(`${base}/v1/events/ingest`, {
              method: "POST",
              headers,
              body: JSON.stringify({ type: "bench.invoice.paid", payload: { i } }),
            });
            if (res.status !== 202) throw new Error(`ingest answered ${res.status}: ${await res.text()}`);
          }
        }),
      );
    };
    await ingest(0);

    // 1. Alone: the events are in; one worker delivers them.
    let cpu0 = process.cpuUsage();
    const t0 = performance.now();
    let worker = startJobWorker({ kinds: [DELIVER_JOB], log: () => undefined });
    await profiled("webhooks-delivery", () => worker.drain());
    const ms = performance.now() - t0;
    const cpuAlone = ownCpuMs(cpu0) / N;
    await worker.stop();
    const ok = await db.read.webhookDelivery.count({ where: { subscriptionId: id, success: true } });
    if (ok !== N) throw new Error(`${ok} of ${N} deliveries succeeded (${received} received)`);
    const alone = (N / ms) * 1000;
    log(
      `deliveries, 1 worker (${N}, signed POST + log row + provenance record each): ${Math.round(alone).toLocaleString("en-US")} deliveries/s (target ≥ 500); CPU per delivery ${cpuAlone.toFixed(2)} ms (receiver in this process)`,
    );
    recordFigure({
      row: `webhook deliveries to a loopback receiver, alone${engine}`,
      value: alone,
      unit: "/s",
      target: "≥ 500/s",
      met: alone >= 500,
      cpuMsPerOp: cpuAlone,
      cpuOf: "server + receiver, one process",
    });

    // 2. With the ingest that causes them: events arrive while the worker delivers.
    cpu0 = process.cpuUsage();
    const t1 = performance.now();
    worker = startJobWorker({ kinds: [DELIVER_JOB], log: () => undefined });
    await profiled("webhooks-with-ingest", async () => {
      await ingest(N);
      while ((await db.read.webhookDelivery.count({ where: { subscriptionId: id, success: true } })) < 2 * N)
        await new Promise((r) => setTimeout(r, 20));
    });
    const ms2 = performance.now() - t1;
    await worker.stop();
    const cpuWith = ownCpuMs(cpu0) / N;
    const withIngest = (N / ms2) * 1000;
    log(
      `deliveries while their ${N} events are ingested (c=16): ${Math.round(withIngest).toLocaleString("en-US")} deliveries/s (target ≥ 500); CPU per event and its delivery ${cpuWith.toFixed(2)} ms`,
    );
    recordFigure({
      row: `CPU per event ingested and delivered to a webhook${engine}`,
      value: withIngest,
      unit: "/s",
      target: "≤ 1.0 units",
      met: true,
      cpuMsPerOp: cpuWith,
      // An upper bound on svc's own share: the client and the receiver share the process.
      cpuOf: "ingest + delivery + client + receiver",
      cpuTargetUnits: 1.0,
    });
    await new Promise((r) => server.close(r));
    log(`RSS ${mib(process.memoryUsage().rss)}; ${machineLoad()}`);
    await new Promise((r) => receiver.close(r));
    await closeDatabase();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await runIfChild(SELF, "webhooks", child);
