import { execFileSync } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { countProvenance } from "./lib/ledger";
import { percentile, runCounted, runLoad, type LoadResult } from "./lib/load";
import {
  cpuMs,
  mintApiKey,
  ROOT,
  rssBytes,
  sampleRss,
  serverProcessPid,
  sleep,
  startServer,
  stopServer,
  type Server,
} from "./lib/server";
import { recordFigure } from "./lib/figures";

/**
 * governed-call: what governance costs per call. The same server answers a bare route (/livez,
 * no auth, no database) and a governed read (/v1/passports/{did}: token verification,
 * delegation and revocation checks, one provenance record), so the ratio of the two is the
 * price of the gate. Afterwards the ledger must hold exactly one record per governed call.
 */

// Issue 30: governed reads at least 2.5× a bare Next route at c=32, and no slower at p99 at c=1.
const TARGETS = { throughputRatio: 2.5, p99RatioAtC1: 1.0, maxRssMiB: 400, lostRecords: 0 };
const SECONDS = 10;
const WARM_UP_SECONDS = 2;
const HIGH = 32;
const RSS_SAMPLE_MS = 500;

type Kind = "bare" | "governed";
type Phase = "warm-up" | "measured";
interface Run extends LoadResult {
  kind: Kind;
  phase: Phase;
}

interface Measurements {
  runs: Run[];
  /** Before any load, after start-up, the key and the passport. */
  idleRssBytes: number;
  maxRssBytes: number;
  /** After every run: tells growth that stays from load that passes. */
  finalRssBytes: number;
}

export async function governedCall(): Promise<void> {
  console.log("governed-call: starting the production server (scripts/start.mjs) on a fresh data dir…");
  const server = await startServer();
  console.log(`  ${server.baseUrl}, ${server.engine}, data in ${server.dataDir}`);
  // The server runs in its own process group, so Ctrl-C would not reach it: stop it here.
  const stopOnSignal = () =>
    void stopServer(server).finally(() => {
      rmSync(server.dataDir, { recursive: true, force: true });
      process.exit(130);
    });
  process.once("SIGINT", stopOnSignal);
  process.once("SIGTERM", stopOnSignal);
  try {
    // Counted before the CLI and the passport POST, which each add one record of their own.
    const recordsBefore = await countProvenance(server);
    const key = await mintApiKey(server);
    const did = await registerPassport(server, key.token);
    const measured = await measure(server, key.token, did);
    // Stopped first: the count is only final once the server has flushed and closed the database.
    await stopServer(server);
    const records = (await countProvenance(server)) - recordsBefore;
    report(server, measured, records);
    // Kept on failure: the server log in it is the first thing to read.
    rmSync(server.dataDir, { recursive: true, force: true });
  } finally {
    process.off("SIGINT", stopOnSignal);
    process.off("SIGTERM", stopOnSignal);
    await stopServer(server);
  }
}

/** POST /v1/passports with a fresh Ed25519 public key; its DID is what the governed runs read. */
async function registerPassport(server: Server, token: string): Promise<string> {
  const { publicKey } = generateKeyPairSync("ed25519");
  const res = await fetch(`${server.baseUrl}/v1/passports`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify({ type: "agent", name: "bench agent", public_key: publicKey.export({ format: "jwk" }) }),
  });
  const body = (await res.json()) as { did?: unknown };
  if (res.status !== 201 || typeof body.did !== "string")
    throw new Error(`POST /v1/passports answered ${res.status}: ${JSON.stringify(body)}`);
  return body.did;
}

/**
 * Interleaved rounds (bare, governed, bare, governed) so drift in the machine's state hits both
 * sides alike. Governed runs send counted batches (see runCounted) rather than run on a timer,
 * because only a run that ends on its own has an exact request count for the ledger check.
 */
async function measure(server: Server, token: string, did: string): Promise<Measurements> {
  const serverPid = serverProcessPid(server);
  if (serverPid === undefined) throw new Error("could not find the server/main.ts process under scripts/start.mjs");
  const runs: Run[] = [];
  const rate = new Map<number, number>(); // the last governed req/s per concurrency sizes the next run
  const bare = async (name: string, connections: number, seconds: number) => {
    const cpuBefore = cpuMs(serverPid) ?? Number.NaN;
    const run = await load("bare", name, connections, seconds, (label) =>
      runLoad({ label, url: `${server.baseUrl}/livez`, connections, seconds }),
    );
    if (name !== "warm-up") addCpu(bareCpu, connections, (cpuMs(serverPid) ?? Number.NaN) - cpuBefore, run.responses);
    runs.push(run);
  };
  const governed = async (name: string, connections: number, seconds: number) => {
    const spec = {
      url: `${server.baseUrl}/v1/passports/${encodeURIComponent(did)}`,
      connections,
      headers: { Authorization: `Bearer ${token}` },
    };
    const cpuBefore = cpuMs(serverPid) ?? Number.NaN;
    const run = await load("governed", name, connections, seconds, (label) =>
      runCounted({ label, ...spec }, seconds, rate.get(connections)),
    );
    // The work the calls left behind (the ledger sealing their records) is theirs too, not the
    // next bare run's: counted until the server is back to its idle rate.
    const settled = await settle(serverPid, idleCpuPerSecond);
    if (name !== "warm-up") addCpu(governedCpu, connections, settled.cpuMs - cpuBefore - settled.idleMs, run.responses);
    rate.set(connections, run.rps);
    runs.push(run);
  };

  const idleRssBytes = rssBytes(serverPid) ?? 0;
  const idleCpuPerSecond = await idleCpuRate(serverPid);
  const rss = sampleRss(serverPid, RSS_SAMPLE_MS);
  await bare("warm-up", HIGH, WARM_UP_SECONDS);
  await governed("warm-up", HIGH, WARM_UP_SECONDS);
  for (const round of ["#1", "#2"]) {
    await bare(round, HIGH, SECONDS);
    await governed(round, HIGH, SECONDS);
  }
  const maxRssBytes = rss.stop();

  // No warm-up at c=1: the server is warm by now.
  for (const round of ["#1", "#2"]) {
    await bare(round, 1, SECONDS);
    await governed(round, 1, SECONDS);
  }
  return { runs, idleRssBytes, maxRssBytes, finalRssBytes: rssBytes(serverPid) ?? 0 };
}

const SETTLE_STEP_MS = 500;
const SETTLE_MAX_MS = 15_000;

/** The server's CPU per second at rest (its worker's pollers, timers), over 3 s. */
async function idleCpuRate(pid: number): Promise<number> {
  const before = cpuMs(pid) ?? Number.NaN;
  await sleep(3_000);
  return ((cpuMs(pid) ?? Number.NaN) - before) / 3;
}

/**
 * Waits until the server's CPU over a half-second step is back to its idle rate (or 15 s), and
 * returns its CPU time then and the idle share of the wait (what it would have spent anyway).
 */
async function settle(pid: number, idlePerSecond: number): Promise<{ cpuMs: number; idleMs: number }> {
  const started = performance.now();
  let last = cpuMs(pid) ?? Number.NaN;
  for (;;) {
    await sleep(SETTLE_STEP_MS);
    const now = cpuMs(pid) ?? Number.NaN;
    const waited = performance.now() - started;
    // Ticks are 10 ms: a step at rest may read one or two more than the mean.
    if (now - last <= idlePerSecond * (SETTLE_STEP_MS / 1000) + 20 || waited > SETTLE_MAX_MS)
      return { cpuMs: now, idleMs: (idlePerSecond * waited) / 1000 };
    last = now;
  }
}

/** `name` is "warm-up" or the round ("#1"); only rounds count towards the summary. */
async function load(
  kind: Kind,
  name: string,
  connections: number,
  seconds: number,
  run: (label: string) => Promise<LoadResult>,
): Promise<Run> {
  const label = `${kind} c=${connections} ${name}`;
  process.stdout.write(`  ${label.padEnd(24)} ~${seconds} s…`);
  const result = await run(label);
  process.stdout.write(` ${result.responses} requests, ${Math.round(result.rps)} req/s\n`);
  return { ...result, kind, phase: name === "warm-up" ? "warm-up" : "measured" };
}

interface Summary {
  throughputRatio: number;
  bareRpsC32: number;
  governedRpsC32: number;
  governedP99MsC1: number;
  bareP99MsC1: number;
  idleRssMiB: number;
  maxRssMiB: number;
  finalRssMiB: number;
  provenance: { records: number; expected: number; lost: number; exact: boolean };
}

function summarise(measured: Measurements, records: number): Summary {
  const pick = (kind: Kind, connections: number) =>
    measured.runs.filter((r) => r.kind === kind && r.phase === "measured" && r.connections === connections);
  const meanRps = (runs: Run[]) => runs.reduce((sum, r) => sum + r.rps, 0) / runs.length;
  const bareRpsC32 = meanRps(pick("bare", HIGH));
  const governedRpsC32 = meanRps(pick("governed", HIGH));
  // p99 over every c=1 governed response of both rounds, not the worse of two per-round figures.
  const c1 = pick("governed", 1)
    .flatMap((r) => r.latencies)
    .sort((a, b) => a - b);
  const governedRuns = measured.runs.filter((r) => r.kind === "governed");
  // Every governed response, plus `svc keys create` and the passport POST: one record each.
  const expected = governedRuns.reduce((sum, r) => sum + r.responses, 0) + 2;
  // A timed-out or failed request may or may not have reached the handler, which blurs the count.
  const exact = governedRuns.every((r) => r.errors === 0 && r.sent === r.responses);
  const bareC1 = pick("bare", 1)
    .flatMap((r) => r.latencies)
    .sort((a, b) => a - b);
  return {
    bareP99MsC1: percentile(bareC1, 99),
    throughputRatio: governedRpsC32 / bareRpsC32,
    bareRpsC32,
    governedRpsC32,
    governedP99MsC1: percentile(c1, 99),
    idleRssMiB: measured.idleRssBytes / 2 ** 20,
    maxRssMiB: measured.maxRssBytes / 2 ** 20,
    finalRssMiB: measured.finalRssBytes / 2 ** 20,
    provenance: { records, expected, lost: expected - records, exact },
  };
}

// The server's CPU over the measured runs of each kind, per concurrency.
type CpuTally = Record<number, { ms: number; requests: number }>;
const governedCpu: CpuTally = {};
const bareCpu: CpuTally = {};
function addCpu(tally: CpuTally, connections: number, ms: number, requests: number): void {
  const c = (tally[connections] ??= { ms: 0, requests: 0 });
  c.ms += ms;
  c.requests += requests;
}
const perRequest = (tally: CpuTally, c: number) =>
  tally[c] ? tally[c].ms / Math.max(1, tally[c].requests) : undefined;

function report(server: Server, measured: Measurements, records: number): void {
  const summary = summarise(measured, records);
  const [governedMs, bareMs] = [perRequest(governedCpu, HIGH), perRequest(bareCpu, HIGH)];
  recordFigure({
    row: "governed read vs a bare Next route, c=32",
    value: summary.throughputRatio * 100,
    unit: "%",
    target: `≥ ${TARGETS.throughputRatio * 100} %`,
    met: summary.throughputRatio >= TARGETS.throughputRatio,
    cpuMsPerOp: governedMs,
    cpuOf: "server, per governed read",
    note: `${summary.governedRpsC32.toFixed(0)} governed / ${summary.bareRpsC32.toFixed(0)} bare req/s`,
  });
  // What a server with a core to itself would serve: the same ratio from the server's CPU per
  // request (a rate only says what share of the cores the server got while autocannon and the
  // other engineers' processes ran beside it).
  if (governedMs !== undefined && bareMs !== undefined)
    recordFigure({
      row: "governed read vs a bare Next route, c=32, by server CPU per request",
      value: (bareMs / governedMs) * 100,
      unit: "%",
      target: `≥ ${TARGETS.throughputRatio * 100} %`,
      met: bareMs / governedMs >= TARGETS.throughputRatio,
      cpuMsPerOp: governedMs,
      cpuOf: "server, per governed read",
      cpuTargetUnits: 1 / TARGETS.throughputRatio,
      note: `${governedMs.toFixed(3)} ms per governed read vs ${bareMs.toFixed(3)} ms per bare request, both at c=${HIGH} in the same run`,
    });
  const p99Ratio = summary.governedP99MsC1 / summary.bareP99MsC1;
  recordFigure({
    row: "governed read p99 at c=1 vs bare p99 at c=1",
    value: p99Ratio,
    unit: "×",
    target: `≤ ×${TARGETS.p99RatioAtC1}`,
    met: p99Ratio <= TARGETS.p99RatioAtC1,
    cpuMsPerOp: perRequest(governedCpu, 1),
    cpuOf: "server, per governed read",
    note: `${summary.governedP99MsC1.toFixed(2)} ms governed vs ${summary.bareP99MsC1.toFixed(2)} ms bare`,
  });
  recordFigure({
    row: "server RSS, max under the governed-call load",
    value: summary.maxRssMiB,
    unit: "MiB",
    target: `≤ ${TARGETS.maxRssMiB} MiB`,
    met: summary.maxRssMiB <= TARGETS.maxRssMiB,
    note: `${summary.idleRssMiB.toFixed(0)} MiB before the load, ${summary.finalRssMiB.toFixed(0)} MiB after it`,
  });
  console.log();
  printTable(measured.runs);
  console.log();
  printSummary(summary);
  if (governedMs !== undefined && bareMs !== undefined)
    console.log(
      `  server CPU per request at c=${HIGH}:  governed ${governedMs.toFixed(3)} ms, bare ${bareMs.toFixed(3)} ms (bare/governed ${((bareMs / governedMs) * 100).toFixed(0)} %); at c=1: governed ${perRequest(governedCpu, 1)?.toFixed(3)} ms, bare ${perRequest(bareCpu, 1)?.toFixed(3)} ms`,
    );
  const file = writeResults(server, measured, summary);
  console.log(`\n  figures written to ${file}`);
}

function printTable(runs: Run[]): void {
  const header = ["run", "requests", "req/s", "p50 ms", "p99 ms", "non-2xx", "errors", "seconds"];
  const rows = runs.map((r) => [
    r.label,
    String(r.responses),
    r.rps.toFixed(0),
    r.p50Ms.toFixed(2),
    r.p99Ms.toFixed(2),
    String(r.non2xx),
    String(r.errors),
    r.seconds.toFixed(1),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    "  " + cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  console.log(line(header));
  console.log(line(widths.map((w) => "-".repeat(w))));
  rows.forEach((row) => console.log(line(row)));
}

function printSummary(s: Summary): void {
  const verdict = (ok: boolean) => (ok ? "PASS" : "MISS");
  const { provenance: p } = s;
  console.log(
    `  governed/bare throughput at c=${HIGH}: ${(s.throughputRatio * 100).toFixed(1)} % (${s.governedRpsC32.toFixed(0)} / ${s.bareRpsC32.toFixed(0)} req/s)   target ≥ ${TARGETS.throughputRatio * 100} %   ${verdict(s.throughputRatio >= TARGETS.throughputRatio)}`,
  );
  console.log(
    `  governed p99 at c=1:              ${s.governedP99MsC1.toFixed(2)} ms vs bare ${s.bareP99MsC1.toFixed(2)} ms   target ≤ ×${TARGETS.p99RatioAtC1}   ${verdict(s.governedP99MsC1 / s.bareP99MsC1 <= TARGETS.p99RatioAtC1)}`,
  );
  console.log(
    `  server max RSS at c=${HIGH}:          ${s.maxRssMiB.toFixed(0)} MiB (before load ${s.idleRssMiB.toFixed(0)}, after all runs ${s.finalRssMiB.toFixed(0)})   target ≤ ${TARGETS.maxRssMiB} MiB   ${verdict(s.maxRssMiB <= TARGETS.maxRssMiB)}`,
  );
  console.log(
    `  provenance records: ${p.records}, /v1 requests + CLI: ${p.expected}, lost: ${p.lost}   target ${TARGETS.lostRecords}   ${verdict(p.lost === TARGETS.lostRecords)}`,
  );
  if (!p.exact)
    console.log("  note: some governed requests failed or went unanswered, so the expected count is only approximate");
}

function writeResults(server: Server, measured: Measurements, summary: Summary): string {
  const dir = join(ROOT, "bench/results");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `governed-call-${server.engine}.json`);
  const runs = measured.runs.map(({ latencies: _latencies, ...run }) => run);
  const environment = {
    node: process.version,
    cpus: availableParallelism(),
    commit: gitCommit(),
    date: new Date().toISOString(),
  };
  writeFileSync(
    file,
    JSON.stringify(
      { bench: "governed-call", engine: server.engine, environment, targets: TARGETS, summary, runs },
      null,
      2,
    ) + "\n",
  );
  return file;
}

function gitCommit(): string | null {
  try {
    return execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim();
  } catch {
    return null;
  }
}
