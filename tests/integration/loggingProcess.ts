// An svc process as tests/integration/logSecrets.test.ts needs it (started through processScripts.ts):
// serves /v1 (svc's own transport, as server/main.ts mounts it) and runs the worker, logging
// through the process's logger only, as the server does; says its URL in a log line.
import { composeServer } from "@/server/areas";
import { componentLog, lineLog } from "@/server/telemetry/log";
import { startWorker } from "@/server/worker/worker";
import { startTestServer } from "./harness";

composeServer();
const server = await startTestServer();
startWorker({ log: lineLog("svc") });
componentLog("svc").info({ url: server.url }, `listening on ${server.url}`);
process.on("SIGTERM", () => process.exit(0));
