/**
 * `npx tsx bench/readpath.ts`: the governed read path alone (GET /v1/passports/{did} with an API
 * key: authenticate → rate limit → authorize → run → record) on svc's node:http transport, without
 * Next.js, in a child process loaded by autocannon from this one. Prints the child's CPU per
 * request (from /proc) for the governed read and for a bare node:http answer on the same server,
 * and their ratio. A tool to compare two trees back to back, and to profile: READPATH_PROFILE=<file>
 * writes a CPU profile (.cpuprofile) of the measured governed run; READPATH_HEAP=<file> a heap
 * snapshot after it. Not part of `npm run bench` (governed-call measures the production server).
 *
 * READPATH_N (default 6000) requests per run, READPATH_C (default 32) connections, READPATH_ROUNDS
 * (default 2); DATABASE_URL a PostgreSQL database (default a fresh SQLite file).
 */
import { mkdtempSync, openSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { spawn } from "node:child_process";
import { exited, message, runIfChild } from "./lib/child";
import { runLoad } from "./lib/load";
import { machineLoad } from "./lib/machine";
import { cpuMs, ROOT, rssBytes } from "./lib/server";

const SELF = fileURLToPath(import.meta.url);
const N = Number(process.env.READPATH_N || 6000);
const C = Number(process.env.READPATH_C || 32);
const ROUNDS = Number(process.env.READPATH_ROUNDS || 2);

type Ready = { type: "ready"; port: number; token: string; did: string };

async function parent(): Promise<void> {
  // As the production server runs: NODE_ENV=production, an access log line per call (to a file).
  const log = join(mkdtempSync(join(tmpdir(), "svc-readpath-log-")), "server.log");
  const child = spawn(process.execPath, ["--import", "tsx", SELF, "--child"], {
    cwd: ROOT,
    env: { ...process.env, NODE_ENV: "production", SVC_LOG_LEVEL: process.env.SVC_LOG_LEVEL || "info" },
    stdio: ["ignore", openSync(log, "a"), "inherit", "ipc"],
  });
  const { port, token, did } = await message<Ready>(child, "ready");
  const pid = child.pid!;
  const base = `http://127.0.0.1:${port}`;
  const governed = {
    url: `${base}/v1/passports/${encodeURIComponent(did)}`,
    headers: { Authorization: `Bearer ${token}` },
  };
  const bare = { url: `${base}/bare` };
  const run = async (label: string, spec: { url: string; headers?: Record<string, string> }, amount: number) => {
    const before = cpuMs(pid)!;
    const r = await runLoad({ label, ...spec, connections: C, amount });
    const cpu = (cpuMs(pid)! - before) / r.responses;
    if (r.non2xx || r.errors) throw new Error(`${label}: ${r.non2xx} non-2xx, ${r.errors} errors`);
    return { cpu, r };
  };
  console.log(`readpath: c=${C}, ${N} requests per run, ${machineLoad()}`);
  await run("warm-up bare", bare, 2000);
  await run("warm-up governed", governed, 3000);
  const sums = { bare: 0, governed: 0 };
  for (let i = 0; i < ROUNDS; i++) {
    const b = await run("bare", bare, N);
    if (i === ROUNDS - 1) child.send({ type: "profile-start" });
    if (i === ROUNDS - 1 && process.env.READPATH_PROFILE) await message(child, "profiling");
    const g = await run("governed", governed, N);
    if (i === ROUNDS - 1) {
      child.send({ type: "profile-stop" });
      await message(child, "profiled");
    }
    sums.bare += b.cpu;
    sums.governed += g.cpu;
    console.log(
      `  round ${i + 1}: bare ${b.cpu.toFixed(3)} ms CPU/req (${Math.round(b.r.rps)}/s), governed ${g.cpu.toFixed(3)} ms CPU/req (${Math.round(g.r.rps)}/s, p50 ${g.r.p50Ms.toFixed(2)} ms, p99 ${g.r.p99Ms.toFixed(2)} ms); RSS ${Math.round((rssBytes(pid) ?? 0) / 2 ** 20)} MiB`,
    );
  }
  console.log(
    `  mean: bare ${(sums.bare / ROUNDS).toFixed(3)} ms, governed ${(sums.governed / ROUNDS).toFixed(3)} ms CPU per request (×${(sums.governed / sums.bare).toFixed(2)}); ${machineLoad()}`,
  );
  child.send({ type: "stop" });
  if ((await exited(child)) !== 0) throw new Error("the readpath child failed");
}

async function childMain(): Promise<void> {
  if (!process.env.DATABASE_URL) process.env.DATA_DIR = mkdtempSync(join(tmpdir(), "svc-readpath-"));
  process.env.SVC_RATE_LIMIT_PER_MINUTE = "100000000";
  const { bootstrap, rootOrgDid } = await import("../server/setup/bootstrap");
  const { composeServer } = await import("../server/areas");
  const { database, closeDatabase } = await import("../server/db/client");
  const { handleV1, servesPath } = await import("../server/http/router");
  const { createApiKeyAsOperator } = await import("../server/identity/createApiKey");
  const { generateKeyPairSync } = await import("node:crypto");
  await bootstrap();
  composeServer();
  const db = await database();
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0]!;
    if (servesPath(path)) void handleV1(req, res);
    else res.writeHead(200, { "Content-Type": "application/json" }).end('{"status":"ok"}');
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  const key = await createApiKeyAsOperator(db, {
    orgDid: (await rootOrgDid(db))!,
    capabilities: ["svc_api:*"],
    durationSeconds: 3600,
  });
  const { publicKey } = generateKeyPairSync("ed25519");
  const res = await fetch(`http://127.0.0.1:${port}/v1/passports`, {
    method: "POST",
    headers: { Authorization: `Bearer ${key.token}`, "Content-Type": "application/json" },
    body: JSON.stringify({ type: "agent", name: "readpath", public_key: publicKey.export({ format: "jwk" }) }),
  });
  const did = ((await res.json()) as { did: string }).did;

  const inspector = process.env.READPATH_PROFILE ? new (await import("node:inspector/promises")).Session() : undefined;
  if (inspector) {
    inspector.connect();
    await inspector.post("Profiler.enable");
    await inspector.post("Profiler.setSamplingInterval", { interval: 200 });
  }
  process.on("message", (m: { type?: string }) => {
    void (async () => {
      if (m.type === "profile-start" && inspector) {
        await inspector.post("Profiler.start");
        process.send!({ type: "profiling" });
      } else if (m.type === "profile-stop") {
        if (inspector) {
          const { profile } = await inspector.post("Profiler.stop");
          writeFileSync(process.env.READPATH_PROFILE!, JSON.stringify(profile));
        }
        if (process.env.READPATH_HEAP) {
          const { writeHeapSnapshot } = await import("node:v8");
          writeHeapSnapshot(process.env.READPATH_HEAP);
        }
        const mib = (n: number) => `${Math.round(n / 2 ** 20)} MiB`;
        const m = process.memoryUsage();
        const { getHeapSpaceStatistics } = await import("node:v8");
        process.stderr.write(
          `  child memory: rss ${mib(m.rss)}, V8 heap ${mib(m.heapUsed)} used of ${mib(m.heapTotal)} (${getHeapSpaceStatistics()
            .map((sp) => `${sp.space_name.replace("_space", "")} ${mib(sp.space_size)}`)
            .join(", ")}), external ${mib(m.external)} (array buffers ${mib(m.arrayBuffers)})\n`,
        );
        process.send!({ type: "profiled" });
      } else if (m.type === "stop") {
        server.close();
        await closeDatabase();
        process.exit(0);
      }
    })();
  });
  process.send!({ type: "ready", port, token: key.token, did } satisfies Ready);
  await new Promise(() => undefined);
}

await runIfChild(SELF, "readpath", childMain);
if (!process.argv.includes("--child")) await parent();
