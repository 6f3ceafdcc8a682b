import { config } from "../config";
import { JOBS_CHANNEL } from "./wake";

export interface JobListener {
  end(): Promise<void>;
}

/**
 * PostgreSQL's wake-up for this process's workers: a connection of its own that LISTENs on
 * `svc_jobs` and calls `onKind` with each notified kind. A connection that fails (the server
 * restarted, an administrator terminated it) is replaced a second later, and again until it
 * connects: meanwhile the worker's poll finds the jobs, and `onReconnect` lets it look at once.
 * The client has an error listener for its whole life, so a lost connection never reaches the
 * process as an uncaught 'error' event.
 */
export function listenForJobs(opts: {
  onKind(kind: string): void;
  onReconnect(): void;
  log(line: string): void;
}): JobListener {
  let ended = false;
  let current: { end(): Promise<void> } | undefined;
  const connect = async (): Promise<void> => {
    if (ended) return;
    const { default: pg } = await import("pg");
    const client = new pg.Client({ connectionString: config().databaseUrl });
    let failed = false;
    const retry = (e?: Error) => {
      if (failed || ended) return;
      failed = true;
      if (e) opts.log(`the ${JOBS_CHANNEL} listener failed (${e.message}); polling until it is back`);
      client.end().catch(() => undefined);
      setTimeout(() => void connect().then(() => !ended && opts.onReconnect()), 1000).unref();
    };
    client.on("error", retry);
    client.on("end", () => retry());
    client.on("notification", (n) => n.payload && opts.onKind(n.payload));
    current = { end: () => ((failed = true), client.end()) };
    try {
      await client.connect();
      await client.query(`LISTEN ${JOBS_CHANNEL}`);
    } catch (e) {
      retry(e as Error);
    }
  };
  const started = connect();
  return {
    async end() {
      ended = true;
      await started;
      await current?.end().catch(() => undefined);
    },
  };
}
