import { writeFileSync } from "node:fs";
import type { Session } from "node:inspector/promises";

/**
 * BENCH_PROFILE=<prefix>: a CPU profile of one measured phase of a bench (not its start-up or
 * warm-up), written to `<prefix>.<name>.cpuprofile` for Chrome's DevTools or speedscope. The
 * sampling costs CPU of its own: figures printed while profiling are not comparable with others.
 */
export async function profiled<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const prefix = process.env.BENCH_PROFILE;
  if (!prefix) return fn();
  const { Session: InspectorSession } = await import("node:inspector/promises");
  const session: Session = new InspectorSession();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.start");
  try {
    return await fn();
  } finally {
    const { profile } = await session.post("Profiler.stop");
    writeFileSync(`${prefix}.${name}.cpuprofile`, JSON.stringify(profile));
    session.disconnect();
    console.log(`  CPU profile of ${name}: ${prefix}.${name}.cpuprofile`);
  }
}
