import { composeServer } from "../areas";
import { closeDatabase } from "../db/client";
import { isInfrastructureError } from "../db/outage";
import { standaloneWorkerRefusal } from "../jobs";
import { bootstrap } from "../setup/bootstrap";
import { startWorker } from "./worker";

/** `npm run worker`: one more worker process, beside the web process's own. */
const log = (line: string) => console.log(`svc-worker: ${line}`);
// On SQLite the web process's own worker is the only one (one writer per database file).
const refusal = standaloneWorkerRefusal();
if (refusal) {
  console.error(refusal);
  process.exit(1);
}

// A lost database connection is a reason to retry, never to exit: a PostgreSQL restart or
// failover must not take every worker with it. Every connection has its error listener; should
// one still escape, it is logged and the worker goes on. Anything else is a bug and ends the process.
for (const event of ["uncaughtException", "unhandledRejection"] as const) {
  process.on(event, (e: unknown) => {
    if (isInfrastructureError(e)) {
      console.error(`svc-worker: ${event} (a lost database connection; the worker goes on): ${e instanceof Error ? e.message : String(e)}`);
      return;
    }
    console.error(`svc-worker: ${event}:`, e);
    process.exit(1);
  });
}

await startWhenTheDatabaseAnswers();
composeServer();
const worker = startWorker({ log });
log("running");
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, async () => {
    await worker.stop();
    await closeDatabase();
    process.exit(0);
  });
}

/** Migrations and set-up, retried while the database is unreachable (a worker may start before it). */
async function startWhenTheDatabaseAnswers(): Promise<void> {
  for (let tries = 0; ; tries++) {
    try {
      await bootstrap(log);
      return;
    } catch (e) {
      if (!isInfrastructureError(e)) throw e;
      if (tries === 0) log(`the database does not answer (${e instanceof Error ? e.message : String(e)}); retrying until it does`);
      await new Promise((r) => setTimeout(r, Math.min(5000, 250 * 2 ** tries)));
    }
  }
}
