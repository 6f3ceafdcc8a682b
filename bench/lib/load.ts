import { performance } from "node:perf_hooks";
import autocannon from "autocannon";

export interface LoadSpec {
  label: string;
  url: string;
  connections: number;
  headers?: Record<string, string>;
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
  if ((spec.seconds === undefined) === (spec.amount === undefined)) throw new Error(`${spec.label}: give exactly one of seconds and amount`);
  const latencies: number[] = [];
  let lastResponseAt = 0;
  const started = performance.now();
  const instance = autocannon({
    url: spec.url,
    connections: spec.connections,
    headers: spec.headers,
    ...(spec.amount !== undefined ? { amount: spec.amount } : { duration: spec.seconds }),
  });
  instance.on("response", (_client, _status, _bytes, responseTime) => {
    latencies.push(responseTime);
    lastResponseAt = performance.now();
  });
  const result = await instance;
  const seconds = (lastResponseAt - started) / 1000;
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    label: spec.label,
    connections: spec.connections,
    sent: result.requests.sent,
    responses: latencies.length,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    seconds,
    rps: seconds > 0 ? latencies.length / seconds : 0,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    latencies,
  };
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

/** Requests for a run of about `seconds` at `rps`, at least one per connection (autocannon's floor). */
export function amountFor(rps: number, seconds: number, connections: number): number {
  return Math.max(connections, Math.round(rps * seconds));
}
