import { availableParallelism, loadavg } from "node:os";

/** Figures on these shared machines move with the load: every bench prints it beside them. */
export function machineLoad(): string {
  return `load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")} on ${availableParallelism()} cpus (figures scale with a quiet machine)`;
}

export const mib = (bytes: number) => `${Math.round(bytes / 2 ** 20)} MiB`;
