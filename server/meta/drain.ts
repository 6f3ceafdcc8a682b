import { config } from "../config";
import { closeDatabase, database } from "../db/client";
import { groupCommitsSettled } from "../db/groupCommit";
import { processWide } from "../processWide";
import { stopTracing } from "../telemetry/tracing";
import type { FollowedServer } from "./followConnections";

/**
 * A graceful stop on SIGTERM (Kubernetes, systemd, `docker stop`) or SIGINT, for the web process
 * (server/main.ts) and the worker process (server/worker/main.ts):
 *
 * 1. /readyz answers 503 at once, and for SVC_DRAIN_DELAY_MS more the process still serves, so a
 *    load balancer polling it takes the process out before it stops accepting;
 * 2. the listener closes: a new connection is refused (a proxy sends it to another process); the
 *    requests in flight finish, and every answer from now on closes its connection; a keep-alive
 *    connection left idle is closed once it has been idle SVC_DRAIN_IDLE_MS, never sooner: a
 *    proxy may be writing a request on it (server/meta/followConnections.ts);
 * 3. the worker stops claiming, its running jobs finish (their leases kept until then), jobs it
 *    claimed ahead go back to the queue at once;
 * 4. the group commit's queue (the ledger's last records) is written, the database closed, the
 *    spans not yet exported are sent (when tracing is on);
 * 5. exit 0. Past SVC_DRAIN_TIMEOUT_MS the process exits 1 instead: what it had not finished is
 *    safe in the database (a job's lease lapses and another worker takes it; an unanswered call
 *    was never acknowledged).
 */
const state = processWide("meta.drain", () => ({ draining: false }));

/** Whether this process is stopping (/readyz answers 503). */
export function isDraining(): boolean {
  return state.draining;
}

export interface DrainOptions {
  /** The web process's listener, its connections followed since before it listened; none in a worker process. */
  server?: FollowedServer;
  worker?: { stop(): Promise<void> };
  log: (line: string) => void;
}

/** Stops on SIGTERM and SIGINT as described above; a second signal changes nothing. */
export function drainOnSignals(opts: DrainOptions): void {
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.on(signal, () => {
      if (state.draining) return;
      opts.log(`${signal}: draining`);
      void drain(opts).then((code) => process.exit(code));
    });
  }
}

/** Drains (steps 1–4); resolves to the exit code: 0 when everything finished within the bound. */
export async function drain({ server, worker, log }: DrainOptions): Promise<number> {
  state.draining = true;
  const { drainDelayMs, drainTimeoutMs, drainIdleMs } = config();
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), drainTimeoutMs);
  });
  const steps = async () => {
    if (server && drainDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, drainDelayMs));
    if (server) await server.stop(drainIdleMs);
    await worker?.stop();
    const db = await database();
    await groupCommitsSettled(db);
    await closeDatabase();
    await stopTracing();
    return "done" as const;
  };
  const outcome = await Promise.race([steps(), timedOut]);
  clearTimeout(timer);
  if (outcome === "timeout") {
    log(`drain: not finished after ${drainTimeoutMs} ms (SVC_DRAIN_TIMEOUT_MS); exiting, the rest is left to leases`);
    server?.closeAll();
    return 1;
  }
  log(`drained in ${Date.now() - started} ms`);
  return 0;
}
