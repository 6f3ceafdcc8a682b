import { isAbsolute, join, resolve } from "node:path";
import { processWide } from "./processWide";
import { parseTrustedProxies, type TrustedProxies } from "./http/trustedProxies";

/**
 * Every setting svc reads from the environment, parsed once. README.md's configuration table
 * lists the same variables; keep the two together.
 */
export interface Config {
  port: number;
  /** HOST: the address the app port listens on (every interface when unset). */
  host: string | undefined;
  dataDir: string;
  /** `file:<path>` for SQLite, `postgres://` / `postgresql://` for PostgreSQL. */
  databaseUrl: string;
  engine: "sqlite" | "postgresql";
  publicUrl: string;
  issuer: string;
  audience: string;
  /** Requests per minute per credential and route. */
  rateLimitPerMinute: number;
  /** Requests per minute per client address and route, for calls without a valid credential. */
  rateLimitAnonymousPerMinute: number;
  /** SVC_TRUSTED_PROXIES: whose X-Forwarded-For / Forwarded names the client (server/http/trustedProxies.ts). */
  trustedProxies: TrustedProxies;
  maxBodyBytes: number;
  /** Run the background worker inside the web process. */
  inProcessWorker: boolean;
  /** SVC_OUTBOUND_ALLOW, raw: non-public destinations outbound calls may reach (server/outbound/allowList.ts parses it). */
  outboundAllow: string;
  /** SVC_MAX_BUNDLE_BYTES: the largest agent bundle, decoded (its base64 must also fit the body limit). */
  maxBundleBytes: number;
  /** SVC_AGENT_MAX_MEMORY_MB and SVC_AGENT_MAX_TIMEOUT_MS: the most a manifest's limits may ask for. */
  agentMaxMemoryMb: number;
  agentMaxTimeoutMs: number;
  /** SVC_RUN_DELEGATION_SECONDS: the lifetime of a run's delegation (never beyond the invoker's). */
  runDelegationSeconds: number;
  /** SVC_EXECUTION_RETRY_BASE_MS: the first wait before an execution's retry (doubling, with jitter). */
  executionRetryBaseMs: number;
  /** SVC_CALLBACK_RETRY_SCHEDULE (else SVC_WEBHOOK_RETRY_SCHEDULE): seconds before each callback attempt. */
  callbackRetrySchedule: number[];
  /** SVC_WEBHOOK_RETRY_SCHEDULE: seconds before each webhook delivery attempt (the first is usually 0). */
  webhookRetrySchedule: number[];
  /** SVC_WEBHOOK_DISABLE_AFTER_SECONDS: an endpoint failing without a success for longer than this is disabled. */
  webhookDisableAfterSeconds: number;
  /** SVC_WEBHOOK_TIMEOUT_MS: one delivery attempt's limit (connect, headers and body). */
  webhookTimeoutMs: number;
  /** SVC_CONNECTOR_TIMEOUT_MS: one connector invocation's limit at the provider (connect, headers and body). */
  connectorTimeoutMs: number;
  /** SVC_CONNECTOR_MAX_RESPONSE_BYTES: a provider's answer over this is dropped (the invocation fails, nothing is parsed). */
  connectorMaxResponseBytes: number;
  /** SVC_EVENT_MAX_DEPTH: how long a chain event → trigger run → emitted event may grow; the emit that would reach it is refused. */
  eventMaxDepth: number;
  /** SVC_RUN_EMIT_BUDGET: how many events one run may put on the bus with ctx.events.emit; the next is refused. */
  runEmitBudget: number;
  /** SVC_EVENT_MAX_FANOUT: how many trigger runs one event from outside may start, its whole chain of emitted events included. */
  eventMaxFanout: number;
  /** SVC_DRAIN_DELAY_MS and SVC_DRAIN_TIMEOUT_MS: a stopping process's time serving with /readyz at 503, and its bound (server/meta/drain.ts). */
  drainDelayMs: number;
  drainTimeoutMs: number;
  /** SVC_DRAIN_IDLE_MS: once a stopping process has closed its listener, how long a keep-alive connection may sit idle before svc closes it (server/meta/followConnections.ts). */
  drainIdleMs: number;
  /** SVC_METRICS_PORT / SVC_METRICS_HOST: a second listener serving only GET /metrics, unauthenticated (off when unset). */
  metricsPort: number | undefined;
  metricsHost: string;
  /** SVC_SSE_HEARTBEAT_MS: how often an open live-view stream sends a ping while idle (proxies cut silent streams). */
  sseHeartbeatMs: number;
}

const STANDARD_WEBHOOKS_SCHEDULE = [0, 5, 300, 1800, 7200, 18000, 36000, 36000];

function schedule(name: string, fallback: number[]): number[] {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const values = raw.split(",").map((v) => Number(v.trim()));
  if (values.length > 20 || values.some((v) => !Number.isFinite(v) || v < 0 || v > 7 * 86_400)) {
    throw new Error(
      `${name} must be up to 20 comma-separated numbers of seconds (0 to 604800), got ${JSON.stringify(raw)}`,
    );
  }
  return values;
}

function int(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  }
  return value;
}

export function loadConfig(): Config {
  const port = int("PORT", 3000, 1, 65535);
  const dataDirRaw = process.env.DATA_DIR || "./data";
  const dataDir = isAbsolute(dataDirRaw) ? dataDirRaw : resolve(/* turbopackIgnore: true */ process.cwd(), dataDirRaw);
  const databaseUrl = process.env.DATABASE_URL || `file:${join(dataDir, "svc.db")}`;
  const engine = /^postgres(ql)?:\/\//.test(databaseUrl) ? "postgresql" : "sqlite";
  if (engine === "sqlite" && !databaseUrl.startsWith("file:")) {
    throw new Error(`DATABASE_URL must be a postgres:// URL or a file: path, got ${JSON.stringify(databaseUrl)}`);
  }
  const publicUrl = (process.env.SVC_PUBLIC_URL || `http://localhost:${port}`).replace(/\/$/, "");
  return {
    port,
    host: process.env.HOST || undefined,
    dataDir,
    databaseUrl,
    engine,
    publicUrl,
    issuer: process.env.SVC_ISSUER || "svc",
    audience: process.env.SVC_AUDIENCE || "svc-api",
    rateLimitPerMinute: int("SVC_RATE_LIMIT_PER_MINUTE", 600, 1, 100_000_000),
    rateLimitAnonymousPerMinute: int("SVC_RATE_LIMIT_ANONYMOUS_PER_MINUTE", 120, 1, 100_000_000),
    trustedProxies: parseTrustedProxies(process.env.SVC_TRUSTED_PROXIES),
    maxBodyBytes: int("SVC_MAX_BODY_BYTES", 1_048_576, 1024, 100 * 1_048_576),
    inProcessWorker: process.env.SVC_IN_PROCESS_WORKER !== "0",
    outboundAllow: process.env.SVC_OUTBOUND_ALLOW ?? "",
    maxBundleBytes: int("SVC_MAX_BUNDLE_BYTES", 524_288, 1024, 1_000_000),
    agentMaxMemoryMb: int("SVC_AGENT_MAX_MEMORY_MB", 256, 8, 2048),
    agentMaxTimeoutMs: int("SVC_AGENT_MAX_TIMEOUT_MS", 300_000, 100, 3_600_000),
    runDelegationSeconds: int("SVC_RUN_DELEGATION_SECONDS", 3600, 60, 30 * 86_400),
    executionRetryBaseMs: int("SVC_EXECUTION_RETRY_BASE_MS", 1000, 1, 3_600_000),
    callbackRetrySchedule: schedule(
      "SVC_CALLBACK_RETRY_SCHEDULE",
      schedule("SVC_WEBHOOK_RETRY_SCHEDULE", STANDARD_WEBHOOKS_SCHEDULE),
    ),
    webhookRetrySchedule: schedule("SVC_WEBHOOK_RETRY_SCHEDULE", STANDARD_WEBHOOKS_SCHEDULE),
    webhookDisableAfterSeconds: int("SVC_WEBHOOK_DISABLE_AFTER_SECONDS", 5 * 86_400, 0, 365 * 86_400),
    webhookTimeoutMs: int("SVC_WEBHOOK_TIMEOUT_MS", 15_000, 50, 120_000),
    connectorTimeoutMs: int("SVC_CONNECTOR_TIMEOUT_MS", 30_000, 50, 300_000),
    connectorMaxResponseBytes: int("SVC_CONNECTOR_MAX_RESPONSE_BYTES", 5 * 1024 * 1024, 1024, 100 * 1024 * 1024),
    eventMaxDepth: int("SVC_EVENT_MAX_DEPTH", 8, 1, 64),
    runEmitBudget: int("SVC_RUN_EMIT_BUDGET", 100, 0, 100_000),
    eventMaxFanout: int("SVC_EVENT_MAX_FANOUT", 100, 1, 100_000),
    // A load balancer takes a process out only once its probe of /readyz has seen the 503, and
    // nginx without probes only once the listener refuses: 5 s covers a proxy's usual probe
    // interval, so no request is sent to a listener that is about to close (issue 27, item 3).
    drainDelayMs: int("SVC_DRAIN_DELAY_MS", 5_000, 0, 600_000),
    drainTimeoutMs: int("SVC_DRAIN_TIMEOUT_MS", 25_000, 1000, 3_600_000),
    // A proxy may write its next request on an idle pooled connection at any moment: svc closes
    // one only after it sat idle longer than the proxy keeps it (the nginx example: 4 s), so the
    // close never meets a request (issue 27's 502 in a drain).
    drainIdleMs: int("SVC_DRAIN_IDLE_MS", 5_000, 0, 600_000),
    metricsPort: process.env.SVC_METRICS_PORT ? int("SVC_METRICS_PORT", 0, 0, 65535) : undefined,
    metricsHost: process.env.SVC_METRICS_HOST || "127.0.0.1",
    sseHeartbeatMs: int("SVC_SSE_HEARTBEAT_MS", 15_000, 100, 600_000),
  };
}

const held = processWide("config", () => ({ config: undefined as Config | undefined }));

/** The process's configuration, read from the environment on first use. */
export function config(): Config {
  held.config ??= loadConfig();
  return held.config;
}

/** Forget the parsed configuration (tests that change the environment). */
export function resetConfig(): void {
  held.config = undefined;
}
