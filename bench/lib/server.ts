import { execFile, spawn, type ChildProcess } from "node:child_process";
import { existsSync, openSync, readFileSync, readdirSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { logLineSays } from "../../server/telemetry/log";

/** The project root: benchmarks run the real start script and CLI from there. */
export const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** A sqlite start should be well under this; a stale `.next` adds a full `next build` on top. */
const READY_TIMEOUT_MS = 120_000;
const BUILD_TIMEOUT_MS = 900_000;

export interface Server {
  baseUrl: string;
  port: number;
  dataDir: string;
  /** The environment the server runs with; the CLI must share it to reach the same database. */
  env: NodeJS.ProcessEnv;
  engine: "sqlite" | "postgresql";
  databaseUrl: string;
  logFile: string;
  /** PID of `scripts/start.mjs`, also the process group of everything it starts. */
  pid: number;
  child: ChildProcess;
}

/** A port nobody listens on right now (another agent's dev server may hold 3000). */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => probe.once("error", reject).listen(0, "127.0.0.1", resolve));
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("could not read the probe socket's port");
  return address.port;
}

/**
 * Starts the production server exactly as operators do (`node scripts/start.mjs`) on a fresh data
 * dir, with the rate limits lifted, and resolves once /livez answers. DATABASE_URL (or
 * `options.databaseUrl`) passes through so the same bench runs against PostgreSQL; `options.env`
 * adds settings (SVC_IN_PROCESS_WORKER=0 beside `npm run worker` processes).
 */
export async function startServer(
  options: { databaseUrl?: string; env?: Record<string, string> } = {},
): Promise<Server> {
  const port = await freePort();
  const dataDir = await mkdtemp(join(tmpdir(), "svc-bench-"));
  const databaseUrl = options.databaseUrl || process.env.DATABASE_URL || `file:${join(dataDir, "svc.db")}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...options.env,
    PORT: String(port),
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    SVC_RATE_LIMIT_PER_MINUTE: "100000000",
    SVC_RATE_LIMIT_ANONYMOUS_PER_MINUTE: "100000000",
    NODE_ENV: "production",
  };
  const logFile = join(dataDir, "server.log");
  const log = openSync(logFile, "a");
  // detached: start.mjs leads a new process group, so one kill(-pid) reaches the server it spawnSyncs.
  const child = spawn(process.execPath, ["scripts/start.mjs"], {
    cwd: ROOT,
    env,
    detached: true,
    stdio: ["ignore", log, log],
  });
  if (child.pid === undefined) throw new Error("could not spawn scripts/start.mjs");
  const engine = /^postgres(ql)?:\/\//.test(databaseUrl) ? "postgresql" : "sqlite";
  const server: Server = {
    baseUrl: `http://127.0.0.1:${port}`,
    port,
    dataDir,
    env,
    engine,
    databaseUrl,
    logFile,
    pid: child.pid,
    child,
  };
  try {
    await waitUntilLive(server);
  } catch (e) {
    await stopServer(server);
    throw e;
  }
  return server;
}

async function waitUntilLive(server: Server): Promise<void> {
  const started = Date.now();
  let announcedBuild = false;
  for (;;) {
    if (server.child.exitCode !== null || server.child.signalCode !== null) {
      throw new Error(
        `the server exited (${server.child.exitCode ?? server.child.signalCode}) before answering /livez:\n${logTail(server)}`,
      );
    }
    if (await answers(`${server.baseUrl}/livez`)) return;
    // start.mjs rebuilds `.next` when the sources are newer; that build is not start-up time.
    const building = readFileSync(server.logFile, "utf8").includes("svc: building");
    if (building && !announcedBuild) {
      console.log("  .next is stale: scripts/start.mjs is running next build first (a few minutes)…");
      announcedBuild = true;
    }
    if (Date.now() - started > (building ? BUILD_TIMEOUT_MS : READY_TIMEOUT_MS)) {
      throw new Error(
        `/livez did not answer 200 within ${Math.round((Date.now() - started) / 1000)} s:\n${logTail(server)}`,
      );
    }
    await sleep(250);
  }
}

async function answers(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}

export function logTail(server: Server, lines = 40): string {
  if (!existsSync(server.logFile)) return "(no server log)";
  return readFileSync(server.logFile, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
}

/**
 * SIGTERM the whole group (start.mjs and the server/main.ts child), then wait for the child to
 * finish its shutdown: the database is only complete once it has closed its connections.
 */
export async function stopServer(server: Server): Promise<void> {
  const serverPid = serverProcessPid(server);
  signalGroup(server.pid, "SIGTERM");
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline && [server.pid, serverPid].some((pid) => pid !== undefined && running(pid)))
    await sleep(100);
  if ([server.pid, serverPid].some((pid) => pid !== undefined && running(pid))) signalGroup(server.pid, "SIGKILL");
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // The group is already gone.
  }
}

/** Alive and not a zombie: an orphaned child may linger as one when PID 1 does not reap. */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

function childrenOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
      readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number),
    );
  } catch {
    return [];
  }
}

function descendantsOf(pid: number): number[] {
  return childrenOf(pid).flatMap((c) => [c, ...descendantsOf(c)]);
}

/** PID of the `node --import tsx server/main.ts` process that start.mjs spawned, once it exists. */
export function serverProcessPid(server: Server): number | undefined {
  return descendantsOf(server.pid).find((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("server/main.ts");
    } catch {
      return false;
    }
  });
}

/** Resident set size in bytes (VmRSS), or undefined once the process is gone. */
export function rssBytes(pid: number): number | undefined {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * CPU time (user + system, all threads) a process has used so far, in ms, or undefined once it is
 * gone. On a loaded machine this tells what the work costs, where wall-clock rates only tell what
 * share of the CPUs the process got. Linux counts it in clock ticks of 10 ms (USER_HZ = 100).
 */
export function cpuMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // utime and stime are fields 14 and 15 of stat(5); the slice starts at field 3.
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}

/** Samples a process's RSS on a timer; `stop()` returns the largest value seen. */
export function sampleRss(pid: number, everyMs: number): { stop: () => number } {
  let max = rssBytes(pid) ?? 0;
  const timer = setInterval(() => {
    max = Math.max(max, rssBytes(pid) ?? 0);
  }, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      return Math.max(max, rssBytes(pid) ?? 0);
    },
  };
}

export interface ApiKey {
  token: string;
  delegation_id: string;
  org_did: string;
  capabilities: string[];
  expires_at: string;
}

/** Mints an API key through the operator CLI, against the server's own database. */
export async function mintApiKey(server: Server): Promise<ApiKey> {
  const { stdout } = await promisify(execFile)(process.execPath, ["bin/svc.mjs", "keys", "create", "--json"], {
    cwd: ROOT,
    env: server.env,
  });
  // The JSON is the last line; anything before it would be start-up chatter.
  const last = stdout.trim().split("\n").pop() ?? "";
  const key = JSON.parse(last) as ApiKey;
  if (typeof key.token !== "string") throw new Error(`svc keys create printed no token: ${stdout}`);
  return key;
}

export interface WorkerProcess {
  pid: number;
  child: ChildProcess;
  logFile: string;
}

/**
 * One more `npm run worker` process (server/worker/main.ts) on the server's database and settings,
 * in a process group of its own; resolves once it says it is running.
 */
export async function startWorkerProcess(server: Server, index: number): Promise<WorkerProcess> {
  const logFile = join(server.dataDir, `worker-${index}.log`);
  const log = openSync(logFile, "a");
  const child = spawn(process.execPath, ["--import", "tsx", "server/worker/main.ts"], {
    cwd: ROOT,
    env: server.env,
    detached: true,
    stdio: ["ignore", log, log],
  });
  if (child.pid === undefined) throw new Error("could not spawn server/worker/main.ts");
  const worker = { pid: child.pid, child, logFile };
  const started = Date.now();
  const running = () =>
    readFileSync(logFile, "utf8")
      .split("\n")
      .some((line) => logLineSays(line, "svc-worker", "running"));
  while (!running()) {
    if (child.exitCode !== null || child.signalCode !== null || Date.now() - started > READY_TIMEOUT_MS) {
      await stopWorkerProcess(worker);
      throw new Error(
        `worker ${index} did not start:\n${readFileSync(logFile, "utf8").trimEnd().split("\n").slice(-20).join("\n")}`,
      );
    }
    await sleep(100);
  }
  return worker;
}

/** SIGTERM (the worker finishes its running jobs), SIGKILL if it has not exited within 15 s. */
export async function stopWorkerProcess(worker: WorkerProcess): Promise<void> {
  signalGroup(worker.pid, "SIGTERM");
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline && running(worker.pid)) await sleep(100);
  if (running(worker.pid)) signalGroup(worker.pid, "SIGKILL");
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
