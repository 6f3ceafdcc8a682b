import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Change } from "../db/changes";
import type { Database } from "../db/client";
import { EXECUTION_STOPS_CHANNEL } from "./executionChanged";
import { BACKSTOP_MS, FALLBACK_POLL_MS, watchRunEnd, type WatchRunEndDeps } from "./watchRunEnd";

const db = {} as Database;
const run = { id: "exe_1", chain: ["del_1"], expiresAt: null as Date | null, timeoutMs: 60_000 };

/** A subscription that works (or fails), and a read whose answer the test sets. */
function fakes(options: { subscribeFails?: boolean } = {}) {
  const listeners: Array<{ channel: string; listener: (c: Change) => void; resync?: () => void }> = [];
  let answer: string | undefined;
  const reads = vi.fn(async () => answer);
  const deps: WatchRunEndDeps = {
    subscribe: async (channel, listener, resync) => {
      if (options.subscribeFails) throw new Error("LISTEN refused");
      const entry = { channel, listener, resync };
      listeners.push(entry);
      return () => void listeners.splice(listeners.indexOf(entry), 1);
    },
    readStopReason: reads,
  };
  const announce = (id: string) => listeners.forEach((l) => l.listener({ channel: l.channel, org: "did:svc:org", id }));
  return { deps, reads, listeners, announce, setAnswer: (a: string | undefined) => (answer = a) };
}

describe("watchRunEnd", () => {
  beforeEach(() => vi.useFakeTimers({ now: new Date("2026-11-28T10:00:00Z") }));
  afterEach(() => vi.useRealTimers());

  it("reads on an announcement for its run only, and stops the run with the code read", async () => {
    const f = fakes();
    const stop = vi.fn();
    const unwatch = watchRunEnd(db, run, stop, f.deps);
    await vi.advanceTimersByTimeAsync(0);
    expect(f.listeners.map((l) => l.channel)).toEqual([EXECUTION_STOPS_CHANNEL]);
    f.announce("exe_other");
    await vi.advanceTimersByTimeAsync(0);
    expect(f.reads).not.toHaveBeenCalled();
    f.setAnswer("cancelled");
    f.announce("exe_1");
    await vi.advanceTimersByTimeAsync(0);
    expect(f.reads).toHaveBeenCalledTimes(1);
    expect(stop).toHaveBeenCalledWith("cancelled");
    unwatch();
    expect(f.listeners).toEqual([]);
  });

  it("with notifications, reads only every BACKSTOP_MS otherwise", async () => {
    const f = fakes();
    const unwatch = watchRunEnd(db, run, vi.fn(), f.deps);
    await vi.advanceTimersByTimeAsync(BACKSTOP_MS - 1);
    expect(f.reads).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(f.reads).toHaveBeenCalledTimes(1);
    unwatch();
    await vi.advanceTimersByTimeAsync(BACKSTOP_MS * 3);
    expect(f.reads).toHaveBeenCalledTimes(1);
  });

  it("without notifications, reads every FALLBACK_POLL_MS", async () => {
    const f = fakes({ subscribeFails: true });
    const stop = vi.fn();
    const unwatch = watchRunEnd(db, run, stop, f.deps);
    await vi.advanceTimersByTimeAsync(FALLBACK_POLL_MS * 4);
    expect(f.reads).toHaveBeenCalledTimes(4);
    f.setAnswer("delegation_revoked");
    await vi.advanceTimersByTimeAsync(FALLBACK_POLL_MS);
    expect(stop).toHaveBeenCalledWith("delegation_revoked");
    unwatch();
  });

  it("reads when the run's delegation expires, if that comes before the run's time limit", async () => {
    const f = fakes();
    const stop = vi.fn();
    const expiring = { ...run, expiresAt: new Date(Date.now() + 700) };
    const unwatch = watchRunEnd(db, expiring, stop, f.deps);
    f.setAnswer("delegation_expired");
    await vi.advanceTimersByTimeAsync(699);
    expect(f.reads).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(stop).toHaveBeenCalledWith("delegation_expired");
    unwatch();
    const later = fakes();
    const unwatchLater = watchRunEnd(db, { ...run, expiresAt: new Date(Date.now() + 120_000) }, vi.fn(), later.deps);
    await vi.advanceTimersByTimeAsync(BACKSTOP_MS - 1);
    expect(later.reads).not.toHaveBeenCalled();
    unwatchLater();
  });

  it("reads again when notifications may have been missed (resync)", async () => {
    const f = fakes();
    const unwatch = watchRunEnd(db, run, vi.fn(), f.deps);
    await vi.advanceTimersByTimeAsync(0);
    f.listeners[0]!.resync!();
    await vi.advanceTimersByTimeAsync(0);
    expect(f.reads).toHaveBeenCalledTimes(1);
    unwatch();
  });
});
