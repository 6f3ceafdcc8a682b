import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import { processWide } from "../processWide";
import { databaseSnapshot, type DatabaseSnapshot } from "./snapshot";

/** The job states the queue gauge counts (`failed`: dead-lettered). */
const QUEUE_STATES = ["queued", "running", "failed"] as const;
/** The labels known at start that the database gauges report at 0 when nothing has them (seedMetricSeries). */
const known = processWide("telemetry.knownLabels", () => ({
  jobKinds: [] as readonly string[],
  executionStatuses: [] as readonly string[],
}));

/**
 * The process's Prometheus metrics (prom-client), served by `GET /metrics` (server/telemetry/operations.ts)
 * and on `SVC_METRICS_PORT` (server/telemetry/metricsServer.ts).
 *
 * Two kinds. Counters and histograms of what this process did (calls, refusals, jobs, webhook
 * deliveries) are moved in-process at the hook points, at the cost of a map lookup and an
 * increment: with several processes each exposes its own and Prometheus sums them. Gauges of what
 * the database holds (job queues, executions, approvals, spend, the ledger) are read at scrape time
 * by a few aggregate queries, cached a few seconds (server/telemetry/snapshot.ts): they are the
 * deployment's, the same from every process.
 *
 * One registry per process, kept through processWide(): the Next.js bundle and the node:http fast
 * path load this module twice, and both must move and serve the same counters.
 */

/** Latency buckets, seconds: a read through the fast path is about a millisecond, a reasoning call seconds. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const JOB_BUCKETS = [0.005, 0.025, 0.1, 0.25, 1, 2.5, 10, 30, 60, 300];

type Sampler = () => { size: number; busy: number; queued: number } | undefined;

function createMetrics() {
  const registry = new Registry();
  const registers = [registry];
  collectDefaultMetrics({ register: registry, prefix: "svc_" });
  // prom-client names three gauges `_total`, a suffix Prometheus reserves for counters (promtool
  // check metrics refuses them); `svc_nodejs_active_resources` and `…_handles` say the same.
  for (const name of ["nodejs_active_resources_total", "nodejs_active_handles_total", "nodejs_active_requests_total"])
    registry.removeSingleMetric(`svc_${name}`);
  const sources = { sandbox: undefined as Sampler | undefined };

  /** A gauge whose value is read from the database snapshot at scrape time. */
  const fromDatabase = <L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[],
    fill: (g: Gauge<L>, s: DatabaseSnapshot) => void,
  ) =>
    new Gauge<L>({
      name,
      help,
      labelNames,
      registers,
      async collect() {
        this.reset();
        const s = await databaseSnapshot();
        if (s) fill(this, s);
      },
    });

  return {
    registry,
    sources,
    requests: new Counter({
      name: "svc_requests_total",
      help: "Governed calls (/v1 and the console's tRPC) by operation id and HTTP status, refusals included.",
      labelNames: ["operation", "status"] as const,
      registers,
    }),
    requestDuration: new Histogram({
      name: "svc_request_duration_seconds",
      help: "Time a governed call spent in the gate, from authentication to its answer, by operation id and HTTP status.",
      labelNames: ["operation", "status"] as const,
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    refusals: new Counter({
      name: "svc_refusals_total",
      help: "Calls the gate refused (recorded as denied), by the problem's code (unauthenticated, insufficient_capability, rate_limited, …).",
      labelNames: ["reason"] as const,
      registers,
    }),
    jobs: new Counter({
      name: "svc_jobs_total",
      help: "Job attempts this process ran, by kind and outcome: succeeded (the handler returned; it may itself have scheduled a retry), retried, dead_lettered, given_back (a database outage), lease_lost, abandoned (the worker stopped without waiting).",
      labelNames: ["kind", "outcome"] as const,
      registers,
    }),
    jobDuration: new Histogram({
      name: "svc_job_duration_seconds",
      help: "Time of one job attempt, by kind.",
      labelNames: ["kind"] as const,
      buckets: JOB_BUCKETS,
      registers,
    }),
    webhookDeliveries: new Counter({
      name: "svc_webhook_deliveries_total",
      help: "Webhook delivery attempts this process recorded, by outcome: delivered, retrying (will be tried again), failed (no attempt left, or the webhook was disabled).",
      labelNames: ["outcome"] as const,
      registers,
    }),
    usageAnomalies: new Counter({
      name: "svc_model_usage_anomalies_total",
      help: "Model answers whose reported token usage was out of bounds (negative, not a number, input beyond what was sent, output beyond max_tokens), counted within its bounds instead, by provider.",
      labelNames: ["provider"] as const,
      registers,
    }),
    // Capacity and use are families of their own, not values of one `state` label: a sum over
    // such a label would add threads to busy threads, connections to idle connections.
    sandboxThreads: new Gauge({
      name: "svc_sandbox_threads",
      help: "This process's sandbox worker threads (its capacity).",
      registers,
      collect() {
        this.reset();
        const s = sources.sandbox?.();
        if (s) this.set(s.size);
      },
    }),
    sandboxBusy: new Gauge({
      name: "svc_sandbox_threads_busy",
      help: "This process's sandbox threads running a bundle.",
      registers,
      collect() {
        this.reset();
        const s = sources.sandbox?.();
        if (s) this.set(s.busy);
      },
    }),
    sandboxQueued: new Gauge({
      name: "svc_sandbox_runs_queued",
      help: "Runs of this process waiting for a free sandbox thread.",
      registers,
      collect() {
        this.reset();
        const s = sources.sandbox?.();
        if (s) this.set(s.queued);
      },
    }),
    databasePool: new Gauge({
      name: "svc_db_pool_connections",
      help: "This process's database connections (its pool's size). SQLite: the one writer (1).",
      registers,
      async collect() {
        this.reset();
        const s = await databaseSnapshot();
        if (s) this.set(s.pool.total);
      },
    }),
    databasePoolIdle: new Gauge({
      name: "svc_db_pool_connections_idle",
      help: "This process's database connections not in use. SQLite: 1 when nobody holds the write lock.",
      registers,
      async collect() {
        this.reset();
        const s = await databaseSnapshot();
        if (s) this.set(s.pool.idle);
      },
    }),
    databasePoolWaiting: new Gauge({
      name: "svc_db_pool_waiting",
      help: "Callers of this process queued for a database connection.",
      registers,
      async collect() {
        this.reset();
        const s = await databaseSnapshot();
        if (s) this.set(s.pool.waiting);
      },
    }),
    databaseUp: new Gauge({
      name: "svc_database_up",
      help: "1 when the scrape's aggregate queries answered, 0 when the database did not (the database-derived gauges are then absent).",
      registers,
      async collect() {
        this.set((await databaseSnapshot()) ? 1 : 0);
      },
    }),
    queueDepth: fromDatabase(
      "svc_job_queue_depth",
      "Jobs in the queue by kind and state (queued, running, failed = dead-lettered). Deployment-wide.",
      ["kind", "state"],
      (g, s) => {
        for (const kind of known.jobKinds) for (const state of QUEUE_STATES) g.set({ kind, state }, 0);
        s.jobs.forEach((j) => g.set({ kind: j.kind, state: j.state }, j.count));
      },
    ),
    oldestJobAge: fromDatabase(
      "svc_job_oldest_age_seconds",
      "How long the oldest due queued job of each kind has been waiting to be claimed (0: none due). Deployment-wide.",
      ["kind"],
      (g, s) => {
        for (const kind of known.jobKinds) g.set({ kind }, 0);
        s.oldestDue.forEach((j) => g.set({ kind: j.kind }, j.ageSeconds));
      },
    ),
    executions: fromDatabase(
      "svc_executions",
      "Agent executions by status (queued, processing, completed, failed, cancelled). Deployment-wide.",
      ["status"],
      (g, s) => {
        for (const status of known.executionStatuses) g.set({ status }, 0);
        s.executions.forEach((e) => g.set({ status: e.status }, e.count));
      },
    ),
    approvalsPending: fromDatabase(
      "svc_approvals_pending",
      "Approval requests waiting for a decision. Deployment-wide.",
      [],
      (g, s) => g.set(s.approvalsPending),
    ),
    modelSpend: fromDatabase(
      "svc_model_spend_usd",
      "What reasoning calls have cost so far, in US dollars, by provider (a gauge read from the database: use delta(), not rate() over resets). Deployment-wide.",
      ["provider"],
      (g, s) => s.spend.forEach((p) => g.set({ provider: p.provider }, p.usd)),
    ),
    ledgerRecords: fromDatabase(
      "svc_ledger_records",
      "Provenance records in the ledger (its size). Deployment-wide.",
      [],
      (g, s) => g.set(s.ledgerRecords),
    ),
    checkpointSize: fromDatabase(
      "svc_ledger_checkpoint_tree_size",
      "Records covered by the latest signed checkpoint. Deployment-wide.",
      [],
      (g, s) => s.checkpoint && g.set(s.checkpoint.treeSize),
    ),
    checkpointAge: fromDatabase(
      "svc_ledger_checkpoint_age_seconds",
      "Age of the latest signed checkpoint (absent before the first). Deployment-wide.",
      [],
      (g, s) => s.checkpoint && g.set(s.checkpoint.ageSeconds),
    ),
  };
}

const metrics = processWide("telemetry.metrics", createMetrics);
// Children by label values: a call's hook is then one map lookup and an increment.
const children = processWide("telemetry.metricChildren", () => ({
  requests: new Map<string, Counter.Internal>(),
  durations: new Map<string, Histogram.Internal<"operation" | "status">>(),
}));

/** The process's registry (GET /metrics, the metrics port, tests). */
export function metricsRegistry(): Registry {
  return metrics.registry;
}

/** The text exposition and its content type. */
export async function exposition(): Promise<{ text: string; contentType: string }> {
  return { text: await metrics.registry.metrics(), contentType: metrics.registry.contentType };
}

/**
 * A governed call ended (server/governance/governCall.ts): `startedAt` is its `performance.now()`
 * at entry; `refusal` the problem code when the gate recorded it as denied.
 */
export function observeCall(operation: string, status: number, startedAt: number, refusal?: string): void {
  const key = `${operation}\n${status}`;
  let counter = children.requests.get(key);
  if (!counter) children.requests.set(key, (counter = metrics.requests.labels(operation, String(status))));
  counter.inc();
  let histogram = children.durations.get(key);
  if (!histogram) children.durations.set(key, (histogram = metrics.requestDuration.labels(operation, String(status))));
  histogram.observe((performance.now() - startedAt) / 1000);
  if (refusal !== undefined) metrics.refusals.inc({ reason: refusal });
}

export const JOB_OUTCOMES = ["succeeded", "retried", "dead_lettered", "given_back", "lease_lost", "abandoned"] as const;
export type JobOutcome = (typeof JOB_OUTCOMES)[number];
const DELIVERY_OUTCOMES = ["delivered", "retrying", "failed"] as const;
/** The server errors a governed call can end in, whose series exist from the start. */
const SERVER_ERRORS = ["500", "503"] as const;

/**
 * Creates at zero the series whose labels are known at start (each operation's server errors,
 * each job kind's outcomes, the delivery outcomes; at each scrape, each job kind's queue states
 * and each execution status). A series that first appears with a value has no earlier sample:
 * `increase()` and `rate()` cannot count its first burst (after a restart, 24 answers 500 read as
 * 5.2), and a panel shows "No data" instead of 0.
 */
export function seedMetricSeries({
  operations,
  jobKinds,
  executionStatuses = [],
}: {
  operations: readonly string[];
  jobKinds: readonly string[];
  executionStatuses?: readonly string[];
}): void {
  known.jobKinds = [...jobKinds];
  known.executionStatuses = [...executionStatuses];
  // `inc(labels, 0)` and `zero(labels)` create a series; `labels()` alone does not.
  for (const operation of operations)
    for (const status of SERVER_ERRORS) {
      metrics.requests.inc({ operation, status }, 0);
      metrics.requestDuration.zero({ operation, status });
    }
  for (const kind of jobKinds) {
    for (const outcome of JOB_OUTCOMES) metrics.jobs.inc({ kind, outcome }, 0);
    metrics.jobDuration.zero({ kind });
  }
  for (const outcome of DELIVERY_OUTCOMES) metrics.webhookDeliveries.inc({ outcome }, 0);
}

/** A job attempt ended (server/jobs/worker.ts). */
export function observeJob(kind: string, outcome: JobOutcome, startedAt: number): void {
  metrics.jobs.inc({ kind, outcome });
  metrics.jobDuration.observe({ kind }, (performance.now() - startedAt) / 1000);
}

/** A webhook delivery attempt's outcome committed (server/webhooks/deliveryJob.ts). */
export function observeWebhookDelivery(outcome: "delivered" | "retrying" | "failed"): void {
  metrics.webhookDeliveries.inc({ outcome });
}

/** A provider reported usage a call could not have used (server/reasoning/callModel.ts). */
export function observeUsageAnomaly(provider: string): void {
  metrics.usageAnomalies.inc({ provider });
}

/** Where the sandbox gauge reads its threads from (server/sandbox/pool.ts, when the pool starts). */
export function sampleSandboxWith(sampler: Sampler): void {
  metrics.sources.sandbox = sampler;
}
