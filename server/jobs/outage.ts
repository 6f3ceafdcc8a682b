import { isInfrastructureError, outageEnded, outageKind, reportOutage } from "../db/outage";

/**
 * Runs `fn` (a transaction) again while it fails for the database's sake (connection lost,
 * refused, busy, full), with a growing pause (100 ms to 2 s), until it succeeds, fails for another
 * reason, or `signal` aborts (the claim was lost or the worker abandoned): then it throws. What
 * `fn` would record (a handler's outcome) is kept, not recomputed, and no attempt is spent.
 */
export async function retryThroughOutage<T>(
  fn: () => Promise<T>,
  opts: { signal?: AbortSignal; onRetry?(error: unknown): void } = {},
): Promise<T> {
  for (let retries = 0; ; retries++) {
    try {
      return await fn();
    } catch (e) {
      if (!isInfrastructureError(e) || opts.signal?.aborted) throw e;
      noteOutage(e);
      if (retries === 0) opts.onRetry?.(e);
      // The pause ends early when the outage does: a finished run is recorded as soon as the database is back.
      await pause(Math.min(2000, 100 * 2 ** retries), opts.signal, outageEnded());
    }
  }
}

/** Reports an infrastructure error as an outage (logged once for all of it); false for any other error. */
export function noteOutage(error: unknown): boolean {
  const kind = outageKind(error);
  if (kind) reportOutage(kind, error);
  return kind !== undefined;
}

function pause(ms: number, signal: AbortSignal | undefined, early: Promise<void> | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const done = (fn: () => void) => () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      fn();
    };
    const onAbort = done(() => reject(signal!.reason));
    const timer = setTimeout(done(resolve), ms);
    signal?.addEventListener("abort", onAbort, { once: true });
    void early?.then(done(resolve));
  });
}
