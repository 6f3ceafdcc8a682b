import { processWide } from "../processWide";

/**
 * The claim loops running in this process and when each last ticked (its poll, every second by
 * default): /readyz says a web process whose in-process worker stopped ticking is not ready.
 */
const beats = processWide("jobs.heartbeats", () => new Map<string, number>());

/** A claim loop of this process ticked (or started). */
export function beat(workerId: string, now = Date.now()): void {
  beats.set(workerId, now);
}

/** A claim loop of this process stopped: it is no longer expected to tick. */
export function forgetBeat(workerId: string): void {
  beats.delete(workerId);
}

/** Milliseconds since the stalest running claim loop of this process ticked; undefined when none runs. */
export function oldestBeatAgeMs(now = Date.now()): number | undefined {
  if (beats.size === 0) return undefined;
  return now - Math.min(...beats.values());
}
