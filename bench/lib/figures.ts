import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { loadavg } from "node:os";

/**
 * The figures of issue 15's table, each beside its target with the CPU it cost per operation.
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
  note?: string;
}

export const ROWS = [
  "executions completed/s, SQLite, one process",
  "ingest with one matching trigger, end to end",
  "webhook deliveries to a loopback receiver, alone",
  "webhook deliveries, with the ingest that causes them",
  "executions/s, PostgreSQL, web + 1 worker",
  "executions/s, PostgreSQL, web + 2 workers",
  "governed read vs a bare Next route, c=32",
  "governed read p99 at c=1",
  "marketplace listing p99, 1,000 connectors, 10,000 installations",
  "governed connector invoke overhead over the bare call, p50",
  "200-node workflow (fork/join fan-out 50), start to completion, SQLite",
  "approval inbox first page, 10,000 pending",
  "prompt render, three-level extends chain, p50",
  "prompt affinity report, 1,000,000 calls",
  "reasoning router overhead over the bare provider call, p50",
] as const;

export function recordFigure(f: Figure): void {
  const file = process.env.BENCH_FIGURES_FILE;
  if (!file) return;
  appendFileSync(file, `${JSON.stringify({ ...f, load1: loadavg()[0] })}\n`);
}

/** This process's CPU in ms (user + system) since `since` (a `process.cpuUsage()`). */
export function ownCpuMs(since: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(since);
  return (d.user + d.system) / 1000;
}

export function printFigures(file: string): void {
  if (!existsSync(file)) return;
  const figures = readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Figure & { load1: number });
  if (figures.length === 0) return;
  console.log("\nissue 15's table, as measured now:");
  const header = ["figure", "now", "target", "", "CPU per op", "load"];
  const rows = [...figures]
    .sort((a, b) => ROWS.indexOf(a.row as (typeof ROWS)[number]) - ROWS.indexOf(b.row as (typeof ROWS)[number]))
    .map((f) => [
      f.row,
      `${f.value < 10 ? f.value.toFixed(2) : Math.round(f.value).toLocaleString("en-US")} ${f.unit}`,
      f.target,
      f.met ? "met" : "MISSED",
      f.cpuMsPerOp === undefined ? "" : `${f.cpuMsPerOp.toFixed(2)} ms${f.cpuOf ? ` (${f.cpuOf})` : ""}`,
      f.load1.toFixed(1),
    ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => "  " + cells.map((c, i) => c.padEnd(widths[i]!)).join("  ");
  console.log(line(header));
  console.log(line(widths.map((w) => "-".repeat(w))));
  rows.forEach((r) => console.log(line(r)));
  for (const f of figures) if (f.note) console.log(`  note (${f.row}): ${f.note}`);
}
