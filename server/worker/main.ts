import { composeServer } from "../areas";
import { closeDatabase } from "../db/client";
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
await bootstrap(log);
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
