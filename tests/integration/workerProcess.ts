// An svc process with its worker, on the test file's database (started through processScripts.ts):
// serves /v1, runs jobs, prints its URL. executionsCrash.test.ts kills it with SIGKILL.
import { startWorker } from "@/server/worker/worker";
import { composeServer } from "@/server/areas";
import { startTestServer } from "./harness";

composeServer();
const server = await startTestServer();
startWorker({ log: (line) => process.stderr.write(`${line}\n`), tasks: [] });
process.stdout.write(`${server.url}\n`);
process.on("SIGTERM", () => process.exit(0));
