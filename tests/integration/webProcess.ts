// A web process as server/main.ts runs one, without Next.js's pages (started through processScripts.ts):
// /v1 (the same fast path), /livez and /readyz, its in-process worker unless
// SVC_IN_PROCESS_WORKER=0, and the same drain on SIGTERM (server/meta/drain.ts). Prints its URL.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { composeServer } from "@/server/areas";
import { config } from "@/server/config";
import { handleV1, servesPath } from "@/server/http/router";
import { drainOnSignals } from "@/server/meta/drain";
import { followConnections } from "@/server/meta/followConnections";
import { readiness } from "@/server/meta/health";
import { startWorker } from "@/server/worker/worker";

composeServer();
const log = (line: string) => process.stderr.write(`svc: ${line}\n`);
const server = createServer((req, res) => {
  const path = (req.url ?? "/").split("?")[0]!;
  if (path === "/livez") res.writeHead(200, { "Content-Type": "application/json" }).end('{"status":"ok"}');
  else if (path === "/readyz")
    void readiness().then(async (r) =>
      res.writeHead(r.status, Object.fromEntries(r.headers)).end(Buffer.from(await r.arrayBuffer())),
    );
  else if (servesPath(path)) void handleV1(req, res);
  else res.writeHead(404).end();
});
server.keepAliveTimeout = 65_000;
const followed = followConnections(server);
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const worker = config().inProcessWorker ? startWorker({ log, tasks: [] }) : undefined;
drainOnSignals({ server: followed, worker, log });
process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
