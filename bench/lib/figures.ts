import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { loadavg } from "node:os";

/**
 * The benches' figures, each beside its target with the CPU it cost per operation, in ms and in
 * units of a bare request's CPU measured in the same run (bench/lib/unit.ts).
 * Benches (and their child processes) append one JSON line per figure to BENCH_FIGURES_FILE, which
 * bench/run.ts sets; at the end it prints them in the table's order. CPU per operation moves less
 * with the machine's load than a rate does, so both are printed, with the load average.
 */
export interface Figure {
  /** The row of the issue's table this figure stands for. */
  row: string;
  value: number;
  unit: string;
  /** The target as the issue words it, and whether the value meets it. */
  target: string;
  met: boolean;
  /** Milliseconds of CPU (of the processes named in `cpuOf`) per operation. */
  cpuMsPerOp?: number;
  cpuOf?: string;
  /**
   * A target on `cpuMsPerOp` in units (bench/lib/unit.ts): met when the CPU per operation is at
   * most this many bare requests' CPU. With it, `met` is decided at print time, against the unit
   * measured in the same run.
   */
  cpuTargetUnits?: number;
  /** A target on `value` (in ms) in units, for figures that are a cost in time, not a rate. */
  valueTargetUnits?: number;
  note?: string;
}

/** The unit as measured in this run: before the benches and after them. */
export interface UnitReading {
  when: "before" | "after";
  unitMs: number;
  rps: number;
}

export const ROWS = [
  "CPU per execution (invoke + run), SQLite, one process, c=16",
  "executions completed/s, SQLite, one process",
  "CPU per ingested event with one matching trigger",
  "ingest with one matching trigger, end to end",
  "webhook deliveries to a loopback receiver, alone",
  "CPU per event ingested and delivered to a webhook",
  "executions/s, PostgreSQL, web + 1 worker",
  "executions/s, PostgreSQL, web + 2 workers",
  "PostgreSQL CPU per execution vs SQLite's",
  "PostgreSQL, 2 workers / 1 worker",
  "governed read vs a bare Next route, c=32",
  "governed read vs a bare Next route, c=32, by server CPU per request",
  "governed read p99 at c=1 vs bare p99 at c=1",
  "server RSS, max under the governed-call load",
  "marketplace listing p99, 1,000 connectors, 10,000 installations",
  "governed connector invoke overhead over the bare call, p50",
  "200-node workflow (fork/join fan-out 50), start to completion, SQLite",
  "approval inbox first page, 10,000 pending",
  "prompt render, three-level extends chain, p50",
  "prompt affinity report, 1,000,000 calls",
  "CPU the server adds to a model call (routing, budget, record)",
  "reasoning router overhead over the bare provider call, p50",
  "svc verify of a 10 M-record export, 2 cores",
  "svc queue vs graphile-worker, no-op jobs on PostgreSQL",
] as const;

export function recordFigure(f: Figure): void {
  const file = process.env.BENCH_FIGURES_FILE;
  if (!file) return;
  appendFileSync(file, `${JSON.stringify({ ...f, load1: loadavg()[0] })}\n`);
}

export function recordUnit(u: UnitReading): void {
  const file = process.env.BENCH_FIGURES_FILE;
  if (!file) return;
  appendFileSync(file, `${JSON.stringify({ unitReading: u, load1: loadavg()[0] })}\n`);
}

/** This process's CPU in ms (user + system) since `since` (a `process.cpuUsage()`). */
export function ownCpuMs(since: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(since);
  return (d.user + d.system) / 1000;
}

/** CPU per operation in ms, or in µs below 0.1 ms (a record verified costs a few µs: "0.00 ms" said nothing). */
function cpuTime(ms: number): string {
  return ms < 0.1 ? `${(ms * 1000).toFixed(2)} µs` : `${ms.toFixed(2)} ms`;
}

export function printFigures(file: string): void {
  if (!existsSync(file)) return;
  const lines = readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as (Figure | { unitReading: UnitReading }) & { load1: number });
  const units = lines.flatMap((l) => ("unitReading" in l ? [l.unitReading] : []));
  const figures = lines.filter((l): l is Figure & { load1: number } => !("unitReading" in l));
  if (figures.length === 0) return;
  // The mean of the readings before and after: the benches ran between them.
  const unit = units.length ? units.reduce((s, u) => s + u.unitMs, 0) / units.length : undefined;
  console.log("\nthe figures, as measured now:");
  if (unit !== undefined)
    console.log(
      `  unit: ${unit.toFixed(2)} ms of server CPU per bare request (${units.map((u) => `${u.when} ${u.unitMs.toFixed(2)} ms at ${Math.round(u.rps)} req/s`).join(", ")})`,
    );
  else console.log("  unit: not measured in this run (BENCH_UNIT=0), so no figure is given in units");
  const inUnits = (ms: number | undefined) => (ms === undefined || unit === undefined ? undefined : ms / unit);
  const header = ["figure", "now", "target", "", "CPU per op", "in units", "load"];
  const rows = [...figures]
    .sort((a, b) => ROWS.indexOf(a.row as (typeof ROWS)[number]) - ROWS.indexOf(b.row as (typeof ROWS)[number]))
    .map((f) => {
      const cpuUnits = inUnits(f.cpuMsPerOp);
      const valueUnits = f.valueTargetUnits !== undefined ? inUnits(f.value) : undefined;
      let met = f.met;
      if (f.cpuTargetUnits !== undefined) met = met && cpuUnits !== undefined && cpuUnits <= f.cpuTargetUnits;
      if (f.valueTargetUnits !== undefined) met = met && valueUnits !== undefined && valueUnits <= f.valueTargetUnits;
      return [
        f.row,
        `${f.value < 10 ? f.value.toFixed(2) : Math.round(f.value).toLocaleString("en-US")} ${f.unit}` +
          (valueUnits === undefined ? "" : ` = ${valueUnits.toFixed(2)} units`),
        f.target,
        met ? "met" : "MISSED",
        f.cpuMsPerOp === undefined ? "" : `${cpuTime(f.cpuMsPerOp)}${f.cpuOf ? ` (${f.cpuOf})` : ""}`,
        cpuUnits === undefined ? "" : cpuUnits < 0.01 ? cpuUnits.toPrecision(2) : cpuUnits.toFixed(2),
        f.load1.toFixed(1),
      ];
    });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => "  " + cells.map((c, i) => c.padEnd(widths[i]!)).join("  ");
  console.log(line(header));
  console.log(line(widths.map((w) => "-".repeat(w))));
  rows.forEach((r) => console.log(line(r)));
  for (const f of figures) if (f.note) console.log(`  note (${f.row}): ${f.note}`);
}
