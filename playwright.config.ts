import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineConfig } from "@playwright/test";
import { peerConnectorDefinition, type OAuthProviderPeer } from "./tests/integration/peers/oauthProvider";

/**
 * End-to-end journeys against the production server (`npm start`) in a real browser. Where
 * Playwright's own browser is not installed (machines without access to its download host), the
 * system's Chromium is used (Debian's package: /usr/bin/chromium).
 */
const port = Number(process.env.E2E_PORT || 3199);
const dataDir = process.env.E2E_DATA_DIR || mkdtempSync(join(tmpdir(), "svc-e2e-"));
process.env.E2E_DATA_DIR = dataDir;
// The marketplace journey's OAuth provider (oidc-provider on loopback, started by its spec) on a
// fixed port, and its connector definition, which the server loads from SVC_CONNECTORS_DIR.
const oauthPeerPort = Number(process.env.E2E_OAUTH_PEER_PORT || port + 1000);
process.env.E2E_OAUTH_PEER_PORT = String(oauthPeerPort);
const peerIssuer = `http://127.0.0.1:${oauthPeerPort}`;
// The reasoning journey's fake OpenAI-compatible model server (tests/integration/peers/fakeOpenAI.ts,
// started by its spec) on a fixed port: the catalogue's provider below points at it.
const modelPeerPort = Number(process.env.E2E_MODEL_PEER_PORT || port + 2000);
process.env.E2E_MODEL_PEER_PORT = String(modelPeerPort);
const connectorsDir = join(dataDir, "connectors");
mkdirSync(connectorsDir, { recursive: true });
writeFileSync(
  join(connectorsDir, "loopback-oauth.json"),
  JSON.stringify(
    peerConnectorDefinition({
      issuer: peerIssuer,
      hostPort: `127.0.0.1:${oauthPeerPort}`,
      clientId: "svc-test-client",
      clientSecret: "svc-test-secret-0123456789abcdef",
      authorizationUrl: `${peerIssuer}/auth`,
      tokenUrl: `${peerIssuer}/token`,
      revocationUrl: `${peerIssuer}/token/revocation`,
      apiUrl: `${peerIssuer}/api`,
    } as OAuthProviderPeer),
  ),
);
// The company sign-in journey's identity provider (another oidc-provider, started by its spec).
const oidcPeerPort = Number(process.env.E2E_OIDC_PEER_PORT || port + 1001);
process.env.E2E_OIDC_PEER_PORT = String(oidcPeerPort);
// Traces: the server exports spans (OTLP over HTTP) to a sink on loopback that accepts and drops
// them, so each record carries a trace id and the provenance explorer links it ("View trace",
// SVC_TRACE_URL_TEMPLATE). This file is loaded by the runner and by its workers: only the first
// listen succeeds, the others' EADDRINUSE is expected.
const otlpSinkPort = Number(process.env.E2E_OTLP_SINK_PORT || port + 3000);
process.env.E2E_OTLP_SINK_PORT = String(otlpSinkPort);
const otlpSink = createServer((req, res) => {
  req.resume();
  req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end("{}"));
});
otlpSink.on("error", () => undefined);
otlpSink.listen(otlpSinkPort, "127.0.0.1");
otlpSink.unref();
const systemChromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find(existsSync);
const usePlaywrightBrowser = process.env.E2E_PLAYWRIGHT_BROWSER === "1" || !systemChromium;

// The production-topology spec's own ports (nginx, two web processes and their metrics, a private
// PostgreSQL cluster), beside this run's: two runs on one machine (two worktrees) do not collide.
process.env.E2E_TOPOLOGY_PORT ||= String(port + 101);
// Below 32768: Linux gives local ports of outgoing connections from 32768-60999, and a listener
// there can find its port taken by one of them (pg_ctl "could not start server" in a full run).
process.env.E2E_TOPOLOGY_PG_PORT ||= String(5400 + port - 3199);

/**
 * Two workers against the one server, in two phases. Every journey signs in with the
 * administrator's session that console.spec.ts's first journey saves, and the agents journey opens
 * on the empty agents page and counts the organization's executions: so the first phase runs those
 * two files one after the other on one worker, beside what needs no session and nothing set up
 * (the topology spec with its own processes, the public documents) on the other. A failure there
 * skips the second phase, as a failed set-up did before.
 * In the second phase the journeys run two at a time, except those that read the organization's
 * one approval inbox ("Nothing waits for you"): the approvals journey and the two that file
 * requests (workflows, learning) run one after another on one worker. Playwright hands out a
 * phase's test groups in the order of the projects here: the long journeys, each a file whose
 * steps run in order on one worker, go first, and the sweeps (every page in each theme and width,
 * many short tests that may run on either worker) last, so they fill both workers to the end
 * rather than one long journey running alone at the end (61 s of one idle worker before).
 */
const firstRun = ["**/console.spec.ts", "**/consoleAgents.spec.ts"];
const noSession = ["**/productionTopology.spec.ts", "**/docs.spec.ts"];
const approvalInbox = ["**/consoleApprovals.spec.ts", "**/consoleWorkflows.spec.ts", "**/consoleLearning.spec.ts"];
const sweeps = ["**/consoleFrame.spec.ts", "**/consoleAgentsViews.spec.ts"];

export default defineConfig({
  testDir: "e2e",
  outputDir: "test-results",
  fullyParallel: false,
  // E2E_WORKERS=1 runs the journeys one at a time, in the same phases.
  workers: Number(process.env.E2E_WORKERS || 2),
  projects: [
    { name: "first-run", testMatch: firstRun, workers: 1 },
    { name: "no-session", testMatch: noSession },
    { name: "approvals", testMatch: approvalInbox, dependencies: ["first-run"], workers: 1 },
    {
      name: "journeys",
      testIgnore: [...firstRun, ...noSession, ...approvalInbox, ...sweeps],
      dependencies: ["first-run"],
    },
    { name: "sweeps", testMatch: sweeps, dependencies: ["first-run"] },
  ],
  // A journey's whole budget: the agents journey (deploy, invoke, live progress, cancel,
  // deactivate) took 62 s on a loaded machine with no step over 3 s. Each step's own waits still
  // fail a hang long before this.
  timeout: 120_000,
  // Two journeys share the server and the machine's two cores: a step that takes 1 s alone may take
  // several. A passing assertion returns as soon as it holds, so this costs nothing when all is well.
  expect: { timeout: 10_000 },
  reporter: [["list"], ["json", { outputFile: "test-results/e2e.json" }]],
  use: {
    baseURL: `http://localhost:${port}`,
    // As a user who asks for reduced motion: the console's pulses and transitions stop (WCAG 2.3.3),
    // so nothing is photographed or judged mid-animation, and the browser has no frames to draw
    // for them.
    reducedMotion: "reduce",
    // A trace records every action's DOM snapshots and the screen as it changes, which cost 17 % of
    // the journeys' CPU on these 2-core machines (the sweeps: 175 s without, 206 s with snapshots
    // alone, 211-222 s with both). A failure keeps its screenshot and error context; E2E_TRACE=1
    // records traces and keeps each failed test's (npx playwright show-trace).
    trace: process.env.E2E_TRACE === "1" ? "retain-on-failure" : "off",
    screenshot: "only-on-failure",
    launchOptions: usePlaywrightBrowser
      ? {}
      : {
          executablePath: systemChromium,
          args: [
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--disable-quic",
          ],
        },
  },
  webServer: {
    command: "node scripts/start.mjs",
    url: `http://localhost:${port}/livez`,
    timeout: 400_000,
    reuseExistingServer: false,
    stdout: "pipe",
    env: {
      PORT: String(port),
      DATA_DIR: dataDir,
      DATABASE_URL: "",
      SVC_PUBLIC_URL: `http://localhost:${port}`,
      SVC_OUTBOUND_ALLOW: "127.0.0.1/32",
      SVC_CONNECTORS_DIR: connectorsDir,
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${otlpSinkPort}`,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      SVC_TRACE_URL_TEMPLATE: "http://127.0.0.1:16686/trace/{trace_id}",
      // Company sign-in (e2e/consoleCompanySignIn.spec.ts): the provider is discovered at sign-in time.
      SVC_OIDC_ISSUER: `http://127.0.0.1:${oidcPeerPort}`,
      SVC_OIDC_CLIENT_ID: "svc-console",
      SVC_OIDC_CLIENT_SECRET: "svc-console-secret-0123456789abcdef",
      SVC_OIDC_NAME: "Example Corp",
      SVC_OIDC_SCOPE: "openid profile email groups",
      SVC_OIDC_ROLE_MAP: "svc-admins:admin,svc-approvers:approver",
      // The model catalogue the benchmark journey submits results for and the playground calls
      // (e2e/consoleReasoning.spec.ts starts the fake model server).
      SVC_MODEL_PROVIDERS: JSON.stringify([
        {
          name: "e2e-loopback",
          kind: "openai-compatible",
          base_url: `http://127.0.0.1:${modelPeerPort}/v1`,
          models: [{ model_id: "gpt-4o-mini" }, { model_id: "claude-haiku-4-5" }, { model_id: "llama-3.1-8b" }],
        },
      ]),
    },
  },
});
