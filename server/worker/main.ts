import { composeServer } from "../areas";
import { isInfrastructureError } from "../db/outage";
import { standaloneWorkerRefusal } from "../jobs";
import { drainOnSignals } from "../meta/drain";
import { config } from "../config";
import { bootstrap, setupLinkIfPending } from "../setup/bootstrap";
import { apiClientHint } from "../setup/cliCommand";
import { startWorker } from "./worker";
import { componentLog, lineLog } from "../telemetry/log";
import { startMetricsServer } from "../telemetry/metricsServer";
import { startTracing, stopTracing } from "../telemetry/tracing";

/** `npm run worker`: one more worker process, beside the web process's own. */
const log = lineLog("svc-worker");
// On SQLite the web process's own worker is the only one (one writer per database file).
const refusal = standaloneWorkerRefusal();
if (refusal) {
  componentLog("svc-worker").fatal(refusal);
  process.exit(1);
}

// A lost database connection is a reason to retry, never to exit: a PostgreSQL restart or
// failover must not take every worker with it. Every connection has its error listener; should
// one still escape, it is logged and the worker goes on. Anything else is a bug and ends the process.
for (const event of ["uncaughtException", "unhandledRejection"] as const) {
  process.on(event, (e: unknown) => {
    if (isInfrastructureError(e)) {
      componentLog("svc-worker").error(
        `${event} (a lost database connection; the worker goes on): ${e instanceof Error ? e.message : String(e)}`,
      );
      return;
    }
    componentLog("svc-worker").fatal({ err: e }, event);
    process.exit(1);
  });
}

await startTracing("svc-worker");
const { rootOrgDid, created } = await startWhenTheDatabaseAnswers();
composeServer();
// The worker may be the first process of a deployment: then it is the one that tells how to finish set-up.
if (created) {
  const link = await setupLinkIfPending(rootOrgDid);
  if (link) {
    log("first start: open this one-time link (valid 24 h) to register the first administrator's passkey:");
    componentLog("svc-worker").info({ setup_link: link }, `    ${link}`);
  }
  apiClientHint(config().publicUrl).forEach(log);
}
const worker = startWorker({ log });
// The metrics port (SVC_METRICS_PORT) closes with the process.
await startMetricsServer(log);
log("running");
// SIGTERM: running jobs finish, jobs claimed ahead go back to the queue, then exit 0 (within SVC_DRAIN_TIMEOUT_MS).
drainOnSignals({ worker, log });

/** Migrations and set-up, retried while the database is unreachable (a worker may start before it). */
async function startWhenTheDatabaseAnswers(): Promise<{ rootOrgDid: string; created: boolean }> {
  for (let tries = 0; ; tries++) {
    try {
      return await bootstrap(log);
    } catch (e) {
      if (!isInfrastructureError(e)) throw e;
      if (tries === 0)
        log(`the database does not answer (${e instanceof Error ? e.message : String(e)}); retrying until it does`);
      await new Promise((r) => setTimeout(r, Math.min(5000, 250 * 2 ** tries)));
    }
  }
}
