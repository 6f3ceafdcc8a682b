import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { isIP } from "node:net";
import next from "next";
import { composeServer } from "./areas";
import { config } from "./config";
import { CLIENT_ADDRESS_HEADER, clientAddressOf } from "./http/clientAddress";
import { handleV1, servesPath } from "./http/router";
import { openApiDocument } from "./openapi/document";
import { createHmac } from "node:crypto";
import { keyRing } from "./keys/signingKeys";
import { drainOnSignals } from "./meta/drain";
import { followConnections } from "./meta/followConnections";
import { oidcSettings } from "./members/oidcSignIn";
import { bootstrap, setupLinkIfPending } from "./setup/bootstrap";
import { apiClientHint } from "./setup/cliCommand";
import { startWorker } from "./worker/worker";
import { componentLog, lineLog } from "./telemetry/log";
import { startMetricsServer } from "./telemetry/metricsServer";
import { startTracing, stopTracing } from "./telemetry/tracing";

/**
 * The production server: migrations and first-run set-up, then the console and the /v1 API
 * (Next.js) on PORT, and the background worker in the same process unless SVC_IN_PROCESS_WORKER=0.
 */
async function main(): Promise<void> {
  // First, so everything after runs with the tracer provider in place (OTEL_EXPORTER_OTLP_ENDPOINT).
  await startTracing("svc");
  // Every registry (job kinds, tasks, bridge entries, hooks…) filled once for the process, before
  // Next.js loads its own copy of the modules: that copy finds them filled (server/processWide.ts).
  composeServer();
  const cfg = config();
  // A wrong SVC_OIDC_* setting stops the start, rather than every company sign-in later.
  const company = oidcSettings();
  const log = lineLog("svc");
  // A passkey's relying party is a domain: browsers refuse WebAuthn on an IP address, so the
  // console's first administrator could never register.
  if (isIP(new URL(cfg.publicUrl).hostname.replace(/^\[|\]$/g, "")))
    componentLog("svc").warn(
      `SVC_PUBLIC_URL (${cfg.publicUrl}) names an IP address: passkeys need a domain name (localhost or a DNS name), so nobody can register or sign in to the console with one. API keys work.`,
    );
  const { rootOrgDid, created } = await bootstrap(log);
  // next-auth (the console's sessions) reads these; derive them rather than ask for more settings.
  process.env.NEXTAUTH_URL ||= cfg.publicUrl;
  process.env.NEXTAUTH_SECRET ||= createHmac("sha256", (await keyRing()).secret)
    .update("svc console sessions")
    .digest("base64url");
  const setupLink = await setupLinkIfPending(rootOrgDid);
  if (company) log(`company sign-in through ${company.issuer} ("Sign in with ${company.name}")`);

  // The OpenAPI document is generated from zod's global registry. Pages Next.js renders later load
  // their own copies of the area schemas, registering the same ids again: built now, before any
  // page, the document (cached) sees each schema once.
  openApiDocument();
  const app = next({ dev: false, dir: process.cwd(), port: cfg.port, hostname: "localhost" });
  await app.prepare();
  const handle = app.getRequestHandler();
  // /v1 takes the fast path (the same handlers without Next.js's page pipeline) unless
  // SVC_V1_VIA_NEXT=1; the console, tRPC and pages go through Next.js.
  const fastV1 = process.env.SVC_V1_VIA_NEXT !== "1";
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? "/").split("?")[0]!;
    if (fastV1 && servesPath(path)) {
      void handleV1(req, res);
      return;
    }
    // The client's address comes from the socket (and trusted proxies' headers), never from a header the client could set.
    req.headers[CLIENT_ADDRESS_HEADER] = clientAddressOf(req);
    void handle(req, res);
  });
  // Above a proxy's idle timeout for its pooled connections (nginx's upstream keepalive_timeout,
  // 60 s by default), so that in normal running the proxy, not svc, closes an idle one.
  server.keepAliveTimeout = 65_000;
  // Followed from the start: a drain closes only connections no request can be arriving on.
  const followed = followConnections(server);
  await new Promise<void>((resolve) => server.listen(cfg.port, cfg.host, resolve));
  // The metrics port (SVC_METRICS_PORT) closes with the process.
  await startMetricsServer(log);

  const worker = cfg.inProcessWorker ? startWorker({ log }) : undefined;
  componentLog("svc").info(
    { url: cfg.publicUrl, engine: cfg.engine, worker: worker ? "in-process" : "off" },
    `listening on ${cfg.publicUrl} (database: ${cfg.engine}${cfg.engine === "sqlite" ? `, data in ${cfg.dataDir}` : ""}; worker: ${worker ? "in-process" : "off"})`,
  );
  if (!worker)
    // Nothing in this process runs jobs: invocations, deliveries and workflow steps stay queued
    // (while /readyz answers ready: this process serves) until a worker process runs.
    componentLog("svc").warn(
      { worker: "off" },
      "SVC_IN_PROCESS_WORKER=0: this process runs no jobs. Invocations, webhook deliveries and workflow steps stay queued until a worker runs (npm run worker, PostgreSQL only); /readyz says only that this process serves.",
    );
  log(`root organization: ${rootOrgDid}`);
  if (setupLink) {
    log(
      `${created ? "first start" : "set-up pending"}: open this one-time link (valid 24 h) to register the first administrator's passkey:`,
    );
    componentLog("svc").info({ setup_link: setupLink }, `    ${setupLink}`);
  }
  if (created) apiClientHint(cfg.publicUrl).forEach(log);
  log(`API reference: ${cfg.publicUrl}/docs/api  ·  OpenAPI: ${cfg.publicUrl}/v1/openapi.json`);

  // SIGTERM drains: /readyz 503, in-flight requests finish, the worker's jobs end, the ledger's queue is written.
  drainOnSignals({ server: followed, worker, log });
}

main().catch((e: unknown) => {
  const line = `failed to start: ${e instanceof Error ? e.message : String(e)}`;
  // A wrong SVC_LOG_* setting is a reason not to start, and no logger to say it with.
  try {
    componentLog("svc").fatal(line);
  } catch {
    console.error(`svc: ${line}`);
  }
  process.exit(1);
});
