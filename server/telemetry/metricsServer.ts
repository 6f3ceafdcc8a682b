import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { config } from "../config";
import { exposition } from "./metrics";

/**
 * The metrics port: `SVC_METRICS_PORT` on `SVC_METRICS_HOST` (default 127.0.0.1) serves
 * `GET /metrics` and nothing else, without a token and without a provenance record, for a
 * Prometheus on the same host or a private network. Each process (web, `npm run worker`) opens its
 * own, since each counts its own calls and jobs. Off unless the port is set; returns undefined then.
 */
export async function startMetricsServer(log: (line: string) => void): Promise<Server | undefined> {
  const { metricsPort, metricsHost } = config();
  if (metricsPort === undefined) return undefined;
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (path !== "/metrics")
      return void res.writeHead(404, { "Content-Type": "text/plain" }).end("Not found: GET /metrics\n");
    if (req.method !== "GET" && req.method !== "HEAD")
      return void res.writeHead(405, { Allow: "GET, HEAD", "Content-Type": "text/plain" }).end("GET /metrics\n");
    exposition().then(
      ({ text, contentType }) =>
        res.writeHead(200, { "Content-Type": contentType }).end(req.method === "HEAD" ? undefined : text),
      (e: unknown) => {
        log(`metrics: the exposition failed: ${e instanceof Error ? e.message : String(e)}`);
        res.writeHead(500, { "Content-Type": "text/plain" }).end("The metrics could not be collected.\n");
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(metricsPort, metricsHost, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { address, port } = server.address() as AddressInfo;
  log(`metrics: http://${address.includes(":") ? `[${address}]` : address}:${port}/metrics (unauthenticated)`);
  return server;
}
