import { subscribeChanges } from "../db/changes";
import type { Database } from "../db/client";
import { EXECUTION_STOPS_CHANNEL } from "./executionChanged";
import { readStopReason, type Run } from "./runStatements";

/** How often a run checks anyway, when change notifications work: a backstop for what none announces. */
export const BACKSTOP_MS = 2_000;
/** How often a run checks when change notifications are unavailable (the LISTEN connection cannot open). */
export const FALLBACK_POLL_MS = 250;

export interface WatchRunEndDeps {
  subscribe: typeof subscribeChanges;
  readStopReason: (db: Database, run: Pick<Run, "id" | "chain">) => Promise<string | undefined>;
}

const defaults: WatchRunEndDeps = { subscribe: subscribeChanges, readStopReason };

/**
 * Stops a running run (`stop(code)`) when its execution is cancelled or its delegation chain ends
 * elsewhere. A run in this process is stopped by the cancel itself (`stopLocalRun`); this is for
 * the rest: a cancel committed in another process (announced on EXECUTION_STOPS_CHANNEL), the
 * run's delegation expiring (a timer at `run.expiresAt`), and, every BACKSTOP_MS, whatever no
 * notification announces (a delegation revoked by a write that runs no revocation hooks, a
 * notification lost with its connection). Each check is one raw read. Without notifications (the
 * subscription fails), it reads every FALLBACK_POLL_MS, as every run once did. Returns the way to
 * stop watching.
 */
export function watchRunEnd(
  db: Database,
  run: Pick<Run, "id" | "chain" | "expiresAt" | "timeoutMs">,
  stop: (code: string) => void,
  deps: WatchRunEndDeps = defaults,
): () => void {
  let ended = false;
  let checking = false;
  let poller: NodeJS.Timeout | undefined;
  let expiry: NodeJS.Timeout | undefined;
  let unsubscribe: (() => void) | undefined;
  const check = () => {
    if (ended || checking) return;
    checking = true;
    deps
      .readStopReason(db, run)
      .then((code) => {
        if (code && !ended) stop(code);
      })
      // A failed read (the database away) is retried at the next tick or notification.
      .catch(() => undefined)
      .finally(() => (checking = false));
  };
  const poll = (ms: number) => {
    if (poller) clearInterval(poller);
    poller = setInterval(check, ms);
  };
  poll(BACKSTOP_MS);
  // A delegation that expires while the run goes on ends it: checked at that moment (a run that
  // times out first never needs the timer; setTimeout cannot wait longer than 2^31-1 ms anyway).
  const untilExpiry = run.expiresAt ? run.expiresAt.getTime() - Date.now() : Infinity;
  if (untilExpiry <= run.timeoutMs) expiry = setTimeout(check, Math.max(0, untilExpiry));
  deps
    .subscribe(EXECUTION_STOPS_CHANNEL, (change) => change.id === run.id && check(), check)
    .then(
      (off) => {
        if (ended) off();
        else unsubscribe = off;
      },
      () => {
        if (!ended) poll(FALLBACK_POLL_MS);
      },
    );
  return () => {
    ended = true;
    clearInterval(poller);
    clearTimeout(expiry);
    unsubscribe?.();
  };
}
