import type { ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { exited, message, runIfChild, spawnChild } from "./lib/child";
import { recordFigure } from "./lib/figures";
import { percentile } from "./lib/load";
import { machineLoad } from "./lib/machine";
import { createDatabase, PG_ADMIN_URL, postgresAnswers, redact, type BenchDatabase } from "./lib/postgres";
import { cpuMs } from "./lib/server";

/**
 * ledger-writes (issue 30): the ledger's write path on PostgreSQL, off the global lock. Each
 * writer connection loops: one transaction that appends a record (`appendInRawTransaction`: the
 * INSERT into ledger_pending a governed write makes), its commit, then the wait for the record's
 * position (`awaitIntegrated`, as the gate waits before it answers). With 1, 2, 4 and 8 writer
 * connections, in three set-ups:
 *
 *   integrator, 1 process    the connections are one process's: its waiters share integration rounds;
 *   integrator, N processes  one connection per process: rounds meet across processes (a round
 *                            waits for the lock, then integrates what the holder left);
 *   lock held to commit      the previous protocol, emulated: each transaction takes the ledger's
 *                            advisory lock at its append and integrates its own record under it,
 *                            holding the lock through its commit (as every write did before).
 *
 * Per set-up and connection count: writes/s; the time inside the global critical section per write
 * (integrator: the rounds' time under the lock as the database measured it, and the whole
 * statement's wall time, commit and round trip included; lock: from the lock granted to the commit
 * returned); commit to position p50/p99 (the wait a call adds after its commit); and CPU per write,
 * the writers' processes plus the database's backends for this database (from /proc), in ms and in
 * units of a bare request's CPU when `npm run bench` measured the unit. Machines here differ, and
 * the machine is shared: CPU per write is the figure to carry to a bigger machine.
 *
 * `npm run bench -- ledger-writes`; BENCH_LEDGER_WRITES_SECONDS (default 4) sets each measured
 * window (after 1 s of warm-up), BENCH_LEDGER_WRITES_CONNECTIONS (default 1,2,4,8) the counts,
 * BENCH_LEDGER_WRITES_SETUPS (default all three: integrator,integrator-processes,lock) the set-ups.
 */
const SECONDS = Number(process.env.BENCH_LEDGER_WRITES_SECONDS || 4);
const WARM_UP_SECONDS = 1;
const COUNTS = (process.env.BENCH_LEDGER_WRITES_CONNECTIONS || "1,2,4,8").split(",").map(Number);
const TARGET_CRITICAL_US = 50;
const SELF = fileURLToPath(import.meta.url);

type Setup = "integrator" | "integrator-processes" | "lock";
const SETUPS: Array<{ setup: Setup; label: string }> = [
  { setup: "integrator" as const, label: "integrator, 1 process" },
  { setup: "integrator-processes" as const, label: "integrator, N processes" },
  { setup: "lock" as const, label: "lock held to commit" },
].filter(({ setup }) => (process.env.BENCH_LEDGER_WRITES_SETUPS || setup).split(",").includes(setup));

interface WriterReport {
  type: "done";
  writes: number;
  seconds: number;
  cpuMs: number;
  /** Commit to position, ms, one per write. */
  waits: number[];
  /** Integrator: rounds' statements, time under the lock (µs), statements' wall (ms). */
  passes: number;
  heldUs: number;
  passMs: number;
  /** Lock set-up: from the lock granted to the commit returned, ms summed. */
  lockHeldMs: number;
  errors: string[];
}

/** The integration statement alone, on a connection of its own: its backend's CPU from /proc, per round. */
interface CriticalSection {
  type: "critical-section";
  rounds: Array<{ batch: number; cpuUs: number; heldUs: number; wallUs: number }>;
}

interface Row {
  setup: Setup;
  label: string;
  connections: number;
  writesPerSecond: number;
  criticalUsPerWrite: number;
  criticalWallUsPerWrite: number;
  p50: number;
  p99: number;
  cpuMsPerWrite: number;
  writerCpuMsPerWrite: number;
  passes: number;
  errors: string[];
}

// ---------------------------------------------------------------------------------------------
// Parent: the database, the writer processes, the backends' CPU.

export async function ledgerWrites(): Promise<void> {
  console.log(`\nledger-writes: ${machineLoad()}`);
  if (!(await postgresAnswers())) {
    console.log(`ledger-writes: skipped, nobody answers at ${redact(PG_ADMIN_URL)}`);
    return;
  }
  const database = await createDatabase("svc_bench_ledger_writes");
  const dataDir = mkdtempSync(join(tmpdir(), "svc-bench-ledger-writes-"));
  const env = { ...process.env, DATABASE_URL: database.url, DATA_DIR: dataDir, SVC_PG_POOL_SIZE: "12" };
  const children: ChildProcess[] = [];
  try {
    const setup = spawnChild(SELF, ["--child", "migrate"], env);
    children.push(setup);
    if ((await exited(setup)) !== 0) throw new Error("migrating the bench database failed");
    const cs = spawnChild(SELF, ["--child", "critical-section"], env);
    children.push(cs);
    const section = await message<CriticalSection>(cs, "critical-section");
    if ((await exited(cs)) !== 0) throw new Error("measuring the critical section failed");
    for (const r of section.rounds)
      console.log(
        `  critical section, one round of ${String(r.batch).padStart(3)} records alone: CPU ${fmtUs(r.cpuUs)} µs` +
          ` (${fmtUs(r.cpuUs / r.batch)} µs per record), ${fmtUs(r.heldUs)} µs under the lock by the clock, statement ${fmtUs(r.wallUs)} µs`,
      );
    const rows: Row[] = [];
    for (const { setup: kind, label } of SETUPS)
      for (const connections of COUNTS) {
        const row = await measure(kind, label, connections, database, env, children);
        rows.push(row);
        console.log(
          `  ${label.padEnd(24)} ${String(connections).padStart(2)} conn  ${fmt(row.writesPerSecond).padStart(6)} writes/s` +
            `  critical section ${row.criticalUsPerWrite.toFixed(1)} µs/write (statement wall ${row.criticalWallUsPerWrite.toFixed(0)} µs)` +
            `  commit→position p50 ${row.p50.toFixed(2)} ms p99 ${row.p99.toFixed(2)} ms` +
            `  CPU ${row.cpuMsPerWrite.toFixed(3)} ms/write (writers ${row.writerCpuMsPerWrite.toFixed(3)})` +
            (kind === "lock" ? "" : `  rounds ${row.passes}`) +
            (row.errors.length ? `  ERRORS ${row.errors.length}: ${row.errors[0]}` : ""),
        );
      }
    report(rows, section);
  } finally {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function measure(
  setup: Setup,
  label: string,
  connections: number,
  database: BenchDatabase,
  env: NodeJS.ProcessEnv,
  children: ChildProcess[],
): Promise<Row> {
  const processes = setup === "integrator-processes" ? connections : 1;
  const loops = setup === "integrator-processes" ? 1 : connections;
  const writers = Array.from({ length: processes }, (_, i) =>
    spawnChild(SELF, ["--child", "writer", "--setup", setup, "--loops", String(loops), "--index", String(i)], env),
  );
  children.push(...writers);
  await Promise.all(writers.map((w) => message(w, "ready")));
  writers.forEach((w) => w.send({ type: "go", warmUpSeconds: WARM_UP_SECONDS, seconds: SECONDS }));
  // The backends' CPU over the measured window: read when it starts and before the writers exit.
  await new Promise((r) => setTimeout(r, WARM_UP_SECONDS * 1000));
  const before = await backendCpu(database.name);
  const reports = await Promise.all(writers.map((w) => message<WriterReport>(w, "done")));
  const after = await backendCpu(database.name);
  writers.forEach((w) => w.send({ type: "exit" }));
  await Promise.all(writers.map(exited));
  let backendMs = 0;
  for (const [pid, ms] of after) backendMs += ms - (before.get(pid) ?? 0);
  const writes = reports.reduce((s, r) => s + r.writes, 0);
  const seconds = Math.max(...reports.map((r) => r.seconds));
  const writerCpu = reports.reduce((s, r) => s + r.cpuMs, 0);
  const waits = reports.flatMap((r) => r.waits).sort((a, b) => a - b);
  const heldUs = reports.reduce((s, r) => s + r.heldUs, 0);
  const passMs = reports.reduce((s, r) => s + r.passMs, 0);
  const lockHeldMs = reports.reduce((s, r) => s + r.lockHeldMs, 0);
  const per = (x: number) => (writes > 0 ? x / writes : Number.NaN);
  return {
    setup,
    label,
    connections,
    writesPerSecond: writes / seconds,
    // The lock set-up's section is the whole transaction from the grant to the commit's return.
    criticalUsPerWrite: setup === "lock" ? per(lockHeldMs * 1000) : per(heldUs),
    criticalWallUsPerWrite: setup === "lock" ? per(lockHeldMs * 1000) : per(passMs * 1000),
    p50: percentile(waits, 50) ?? Number.NaN,
    p99: percentile(waits, 99) ?? Number.NaN,
    cpuMsPerWrite: per(writerCpu + backendMs),
    writerCpuMsPerWrite: per(writerCpu),
    passes: reports.reduce((s, r) => s + r.passes, 0),
    errors: reports.flatMap((r) => r.errors),
  };
}

/** CPU (ms) of every backend connected to the bench's database, by pid (the admin connection is another database's). */
async function backendCpu(name: string): Promise<Map<string, number>> {
  const client = new pg.Client({ connectionString: PG_ADMIN_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE datname = $1`, [name]);
    const out = new Map<string, number>();
    for (const { pid } of rows) {
      const ms = cpuMs(pid);
      if (ms !== undefined) out.set(String(pid), ms);
    }
    return out;
  } finally {
    await client.end();
  }
}

/** The unit `npm run bench` measured before the benches (bench/lib/unit.ts), if it did. */
function unitMs(): number | undefined {
  const file = process.env.BENCH_FIGURES_FILE;
  if (!file || !existsSync(file)) return undefined;
  for (const line of readFileSync(file, "utf8").split("\n").filter(Boolean)) {
    const parsed = JSON.parse(line) as { unitReading?: { unitMs: number } };
    if (parsed.unitReading) return parsed.unitReading.unitMs;
  }
  return undefined;
}

const fmt = (n: number) => Math.round(n).toLocaleString("en-US");

const fmtUs = (n: number) => n.toFixed(n < 100 ? 1 : 0);

function report(rows: Row[], section: CriticalSection): void {
  const unit = unitMs();
  const inUnits = (ms: number) => (unit === undefined ? "" : ` = ${(ms / unit).toFixed(3)} units`);
  console.log(
    unit === undefined
      ? "  (no unit measured in this run: `npm run bench -- ledger-writes` measures it; BENCH_UNIT=0 skips it)"
      : `  unit: ${unit.toFixed(2)} ms of server CPU per bare request, measured before the benches`,
  );
  const of = (setup: Setup, n: number) => rows.find((r) => r.setup === setup && r.connections === n);
  for (const { setup, label } of SETUPS) {
    const base = of(setup, COUNTS[0]!);
    const top = of(setup, COUNTS.at(-1)!);
    if (!base || !top) continue;
    console.log(
      `  ${label}: ${COUNTS.map((n) => `${n}: ${fmt(of(setup, n)?.writesPerSecond ?? 0)}/s`).join(", ")}` +
        ` (×${(top.writesPerSecond / base.writesPerSecond).toFixed(2)} from ${COUNTS[0]} to ${COUNTS.at(-1)})` +
        `; at ${top.connections}: ${(top.criticalUsPerWrite / 1000).toFixed(4)} ms${inUnits(top.criticalUsPerWrite / 1000)} in the critical section per write,` +
        ` CPU ${top.cpuMsPerWrite.toFixed(3)} ms${inUnits(top.cpuMsPerWrite)} per write`,
    );
  }
  const top = COUNTS.at(-1)!;
  const integrator = of("integrator", top);
  const lock = of("lock", top);
  if (!integrator) return;
  recordFigure({
    row: `ledger writes/s on PostgreSQL, ${COUNTS.join("/")} writer connections (integrator, 1 process)`,
    value: integrator.writesPerSecond,
    unit: "writes/s",
    target: "scales with connections",
    met: integrator.writesPerSecond >= (of("integrator", COUNTS[0]!)?.writesPerSecond ?? 0),
    cpuMsPerOp: integrator.cpuMsPerWrite,
    cpuOf: "writers + PostgreSQL backends",
    note: SETUPS.map(
      ({ setup, label }) => `${label} ${COUNTS.map((n) => fmt(of(setup, n)?.writesPerSecond ?? 0)).join("/")}`,
    ).join("; "),
  });
  const perRecord = section.rounds.find((r) => r.batch === 500);
  const single = section.rounds.find((r) => r.batch === 1);
  if (perRecord && single) {
    const fixed = Math.max(0, single.cpuUs - perRecord.cpuUs / perRecord.batch);
    const marginal = perRecord.cpuUs / perRecord.batch;
    console.log(
      `  critical section (CPU, quiet-machine equivalent): ${fixed.toFixed(0)} µs per round + ${marginal.toFixed(1)} µs per record;` +
        ` ≤ ${TARGET_CRITICAL_US} µs per write from ${Math.ceil(fixed / Math.max(1e-9, TARGET_CRITICAL_US - marginal))} records a round` +
        (unit === undefined ? "" : ` (per record ${(marginal / 1000 / unit).toFixed(4)} units)`),
    );
    recordFigure({
      row: "ledger: CPU inside the global critical section per write (rounds of 500 / of 1)",
      value: marginal / 1000,
      unit: "ms",
      target: `≤ ${TARGET_CRITICAL_US} µs`,
      met: marginal <= TARGET_CRITICAL_US,
      cpuMsPerOp: marginal / 1000,
      cpuOf: "the integrator's backend, under the lock",
      note: `a round alone: ${fixed.toFixed(0)} µs + ${marginal.toFixed(1)} µs per record (CPU); a round of one record ${single.cpuUs.toFixed(0)} µs`,
    });
  }
  recordFigure({
    row: `ledger: time inside the global critical section per write, ${top} writer connections`,
    value: integrator.criticalUsPerWrite / 1000,
    unit: "ms",
    target: `≤ ${TARGET_CRITICAL_US} µs`,
    met: integrator.criticalUsPerWrite <= TARGET_CRITICAL_US,
    note:
      `under the lock as PostgreSQL measured it; the rounds' statements, commit and round trip included: ` +
      `${integrator.criticalWallUsPerWrite.toFixed(0)} µs per write` +
      (lock ? `; lock held to commit (the previous protocol, emulated): ${lock.criticalUsPerWrite.toFixed(0)} µs` : ""),
  });
  recordFigure({
    row: `ledger: commit to position, ${top} writer connections, p50 / p99`,
    value: integrator.p50,
    unit: "ms",
    target: "informational",
    met: true,
    note: `p99 ${integrator.p99.toFixed(2)} ms`,
  });
}

// ---------------------------------------------------------------------------------------------
// Children: `migrate` applies the migrations; `writer` runs its loops.

async function migrateChild(): Promise<void> {
  const { migrate } = await import("../server/db/migrate");
  await migrate();
}

async function writerChild(): Promise<void> {
  const arg = (name: string) => process.argv[process.argv.indexOf(name) + 1]!;
  const setup = arg("--setup") as Setup;
  const loops = Number(arg("--loops"));
  const [{ database, closeDatabase }, { appendInRawTransaction }, integrate] = await Promise.all([
    import("../server/db/client"),
    import("../server/provenance/appendProvenance"),
    import("../server/ledger/integrate"),
  ]);
  const db = await database();
  const requestHash = createHash("sha256").update("").digest("hex");
  const entry = (i: number) => ({
    org_did: "did:svc:bench",
    actor_did: "did:key:z6MkBench",
    // A delegation, as a governed call has: the usage rollup's trigger counts the record.
    delegation_id: "dlg_bench",
    grantor_did: "did:svc:bench",
    capability: "svc_api:bench:write",
    operation: "POST /v1/bench",
    resource_type: "bench",
    resource_id: `r_${process.pid}_${i}`,
    decision: "allowed" as const,
    status: 201,
    request_hash: requestHash,
    request_id: `req_${process.pid}_${i}`,
  });
  let measuring = false;
  let stopping = false;
  const waits: number[] = [];
  let writes = 0;
  let lockHeldMs = 0;
  const errors: string[] = [];
  let n = 0;
  const write = async () => {
    const i = n++;
    if (setup === "lock") {
      let granted = 0;
      await db.raw.transaction(async (q) => {
        await q.query(`SELECT pg_advisory_xact_lock(1400261735)::text`);
        granted = performance.now();
        await appendInRawTransaction(q, "postgresql", entry(i));
        await q.query(`SELECT "integrated" FROM "ledger_integrate"(500)`);
        // The integrator's own commit does not wait for the disk; a write's commit did and does.
        await q.execute(`SET LOCAL synchronous_commit TO on`);
      });
      if (measuring) {
        lockHeldMs += performance.now() - granted;
        waits.push(0);
        writes++;
      }
      return;
    }
    const record = await db.raw.transaction((q) => appendInRawTransaction(q, "postgresql", entry(i)));
    const committed = performance.now();
    await integrate.awaitIntegrated(db, [record.id]);
    if (measuring) {
      waits.push(performance.now() - committed);
      writes++;
    }
  };
  // Warm: connections open, statements planned.
  for (let i = 0; i < 20; i++) await write();
  process.send!({ type: "ready" });
  const go = await new Promise<{ warmUpSeconds: number; seconds: number }>((resolve) =>
    process.once("message", (m) => resolve(m as { warmUpSeconds: number; seconds: number })),
  );
  // What the worker's ledger task does beside the writers: the pending table vacuumed (the tree's
  // extension and checkpoints are not the write path's, and are left out).
  const maintenance =
    arg("--index") === "0" && setup !== "lock"
      ? setInterval(() => void integrate.vacuumPending(db).catch(() => undefined), 500)
      : undefined;
  const run = Array.from({ length: loops }, async () => {
    while (!stopping) await write().catch((e: unknown) => errors.push(e instanceof Error ? e.message : String(e)));
  });
  await new Promise((r) => setTimeout(r, go.warmUpSeconds * 1000));
  const statsBefore = integrate.integratorStats();
  const cpuBefore = process.cpuUsage();
  const t0 = performance.now();
  measuring = true;
  await new Promise((r) => setTimeout(r, go.seconds * 1000));
  measuring = false;
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const statsAfter = integrate.integratorStats();
  stopping = true;
  await Promise.all(run);
  clearInterval(maintenance);
  const report: WriterReport = {
    type: "done",
    writes,
    seconds,
    cpuMs: (cpu.user + cpu.system) / 1000,
    waits,
    passes: statsAfter.passes - statsBefore.passes,
    heldUs: statsAfter.heldUs - statsBefore.heldUs,
    passMs: statsAfter.passMs - statsBefore.passMs,
    lockHeldMs,
    errors: [...new Set(errors)].slice(0, 3),
  };
  process.send!(report);
  await new Promise((resolve) => process.once("message", resolve));
  await closeDatabase();
}

/**
 * The critical section's own cost, away from the writers: records appended through the write path
 * (their JSON halves included), then rounds of `batch` records run one after the other on a
 * connection of their own, whose backend's CPU (/proc, 10 ms ticks, summed over many rounds) is
 * what the lock covers, commit included. On a loaded machine the time under the lock by the clock
 * is mostly waiting for a core; the CPU is what a quiet machine's lock would be held for.
 */
async function criticalSectionChild(): Promise<void> {
  const [{ database, closeDatabase }, { appendInRawTransaction }, integrate] = await Promise.all([
    import("../server/db/client"),
    import("../server/provenance/appendProvenance"),
    import("../server/ledger/integrate"),
  ]);
  const db = await database();
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  const pid = (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
  const entry = (i: number) => ({
    org_did: "did:svc:bench",
    actor_did: "did:key:z6MkBench",
    delegation_id: "dlg_bench",
    grantor_did: "did:svc:bench",
    capability: "svc_api:bench:write",
    operation: "POST /v1/bench",
    resource_type: "bench",
    resource_id: `r_cs_${i}`,
    decision: "allowed" as const,
    status: 201,
    request_hash: "0".repeat(64),
    request_id: `req_cs_${i}`,
  });
  let n = 0;
  const rounds: CriticalSection["rounds"] = [];
  for (const [batch, count] of [
    [1, 1000],
    [8, 250],
    [64, 60],
    [500, 12],
  ] as const) {
    await integrate.integratePending(db);
    await client.query(`VACUUM "ledger_pending"`);
    let cpu = 0;
    let held = 0;
    let wall = 0;
    for (let r = 0; r < count + 5; r++) {
      await db.raw.transaction(async (q) => {
        for (let i = 0; i < batch; i++) await appendInRawTransaction(q, "postgresql", entry(n++));
      });
      const c0 = cpuMs(pid) ?? 0;
      const t0 = performance.now();
      const { rows } = await client.query<{ integrated: number; held_us: number }>(
        `SELECT "integrated", "held_us" FROM "ledger_integrate"($1)`,
        [batch],
      );
      if (r < 5) continue; // plans made, pages warm
      wall += performance.now() - t0;
      cpu += (cpuMs(pid) ?? 0) - c0;
      held += Number(rows[0]!.held_us);
      if (Number(rows[0]!.integrated) !== batch) throw new Error(`a round took ${rows[0]!.integrated}, not ${batch}`);
      if (r % 20 === 0) await client.query(`VACUUM "ledger_pending"`);
    }
    rounds.push({ batch, cpuUs: (cpu * 1000) / count, heldUs: held / count, wallUs: (wall * 1000) / count });
  }
  process.send!({ type: "critical-section", rounds } satisfies CriticalSection);
  await client.end();
  await closeDatabase();
}

await runIfChild(SELF, "ledger-writes", async () => {
  if (process.argv.includes("migrate")) await migrateChild();
  else if (process.argv.includes("critical-section")) await criticalSectionChild();
  else await writerChild();
});
