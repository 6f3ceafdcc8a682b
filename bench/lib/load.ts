import { performance } from "node:perf_hooks";
import autocannon from "autocannon";

export interface LoadSpec {
  label: string;
  url: string;
  connections: number;
  headers?: Record<string, string>;
  /** GET unless given; `body` is sent with every request. */
  method?: "GET" | "POST";
  body?: string;
  /**
   * Either run for `seconds`, or send exactly `amount` requests. Only `amount` is exact: a timed
   * run ends by destroying its sockets, so the requests still in flight may or may not have been
   * served, which makes the count of governed calls unknowable.
   */
  seconds?: number;
  amount?: number;
}

export interface LoadResult {
  label: string;
  connections: number;
  /** Requests written to a socket (autocannon's requests.sent). */
  sent: number;
  /** Responses received, any status. */
  responses: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** From the start of the run to its last response. */
  seconds: number;
  /** Responses per second over `seconds`. */
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** Every response time in ms, for percentiles over several runs; not serialised. */
  latencies: number[];
}

/**
 * One autocannon run. Throughput and percentiles are computed here from every response rather than
 * taken from autocannon's summary: its per-second samples misjudge a run that ends mid-second
 * (an `amount` run), and its latency histogram holds whole milliseconds, too coarse for a 5 ms target.
 */
export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  if ((spec.seconds === undefined) === (spec.amount === undefined))
    throw new Error(`${spec.label}: give exactly one of seconds and amount`);
  const latencies: number[] = [];
  let lastResponseAt = 0;
  const started = performance.now();
  const instance = autocannon({
    url: spec.url,
    connections: spec.connections,
    headers: spec.headers,
    ...(spec.method ? { method: spec.method } : {}),
    ...(spec.body !== undefined ? { body: spec.body } : {}),
    ...(spec.amount !== undefined ? { amount: spec.amount } : { duration: spec.seconds }),
  });
  instance.on("response", (_client, _status, _bytes, responseTime) => {
    latencies.push(responseTime);
    lastResponseAt = performance.now();
  });
  const result = await instance;
  // Not spec.seconds: autocannon stops at its first 1 s sampling tick after the duration, so a
  // "10 s" run may answer for up to 11 s.
  return withStats({
    label: spec.label,
    connections: spec.connections,
    sent: result.requests.sent,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    seconds: (lastResponseAt - started) / 1000,
    latencies,
  });
}

function withStats(r: Omit<LoadResult, "responses" | "rps" | "p50Ms" | "p99Ms">): LoadResult {
  const sorted = [...r.latencies].sort((a, b) => a - b);
  return {
    ...r,
    responses: r.latencies.length,
    rps: r.seconds > 0 ? r.latencies.length / r.seconds : 0,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
  };
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

/**
 * An exact-count run of about `seconds`: batches of `amount` requests, each sized from the rate of
 * the one before, until the time is used up. The first batch is small because no rate is known,
 * and a warming server speeds up as it goes, so one batch sized in advance would miss the mark.
 * The batches are merged into one result.
 */
export async function runCounted(
  spec: Omit<LoadSpec, "seconds" | "amount">,
  seconds: number,
  rpsEstimate?: number,
): Promise<LoadResult> {
  const batches: LoadResult[] = [];
  let rps = rpsEstimate;
  let elapsed = 0;
  // The last 10 % is not worth a batch of its own: its ramp-up and tail would weigh too much.
  while (elapsed < seconds * 0.9) {
    const amount = rps ? Math.max(spec.connections, Math.round(rps * (seconds - elapsed))) : spec.connections * 10;
    const batch = await runLoad({ ...spec, amount });
    batches.push(batch);
    elapsed += batch.seconds;
    rps = batch.rps;
  }
  return merge(spec.label, batches);
}

function merge(label: string, batches: LoadResult[]): LoadResult {
  const sum = (f: (r: LoadResult) => number) => batches.reduce((total, r) => total + f(r), 0);
  return withStats({
    label,
    connections: batches[0]?.connections ?? 0,
    sent: sum((r) => r.sent),
    non2xx: sum((r) => r.non2xx),
    errors: sum((r) => r.errors),
    timeouts: sum((r) => r.timeouts),
    seconds: sum((r) => r.seconds),
    latencies: batches.flatMap((r) => r.latencies),
  });
}
