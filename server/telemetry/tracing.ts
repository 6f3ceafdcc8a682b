import {
  context,
  INVALID_SPAN_CONTEXT,
  isSpanContextValid,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
} from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { processWide } from "../processWide";
import { NextInternalSpanFilter } from "./nextInternalSpans";
import { QueryStripper } from "./spanQueries";

/**
 * Traces over OpenTelemetry, on when `OTEL_EXPORTER_OTLP_ENDPOINT` (or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set. Started with the official NodeSDK: it reads every
 * standard `OTEL_*` variable itself (protocol `http/protobuf` or `http/json`, headers, service
 * name, resource attributes, sampler, batch sizes), where a hand-built BasicTracerProvider would
 * re-implement that reading. Only traces: metrics and logs have their own pipelines
 * (server/telemetry/metrics.ts, log.ts), so the SDK gets no metric reader and no log processor.
 *
 * Off, every helper here returns at its first line: no span object, no context switch, no header.
 * The SDK is imported only when on, so a process that does not trace never loads it.
 */
const tracing = processWide("telemetry.tracing", () => ({
  on: false,
  stop: undefined as undefined | (() => Promise<void>),
  /** The W3C propagator, used directly (not the global one) so `traceparent` goes out whatever OTEL_PROPAGATORS says. */
  w3c: new W3CTraceContextPropagator(),
}));
const tracer = () => trace.getTracer("svc");

/** True when the OTEL_* settings ask for traces. */
export function tracingConfigured(env: Record<string, string | undefined> = process.env): boolean {
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
  return Boolean(endpoint) && env.OTEL_SDK_DISABLED !== "true" && env.OTEL_TRACES_EXPORTER !== "none";
}

/** Whether this process is exporting spans. */
export function tracingOn(): boolean {
  return tracing.on;
}

/**
 * Starts the SDK when configured (server/main.ts and server/worker/main.ts call this first).
 * Idempotent. `serviceName` is the default when OTEL_SERVICE_NAME is not set.
 */
export async function startTracing(serviceName = "svc"): Promise<boolean> {
  if (tracing.on || !tracingConfigured()) return tracing.on;
  const [{ NodeSDK }, { getSpanProcessorsFromEnv }] = await Promise.all([
    import("@opentelemetry/sdk-node"),
    // The SDK's own reading of OTEL_TRACES_EXPORTER and the OTLP protocol into processors (what it
    // does when given none), so the query stripper can go first and Next.js's module-loading spans
    // be kept from them without re-implementing it.
    import("@opentelemetry/sdk-node/build/src/utils.js"),
  ]);
  const sdk = new NodeSDK({
    spanProcessors: [new QueryStripper(), new NextInternalSpanFilter(getSpanProcessorsFromEnv(undefined))],
    // The SDK's own default is "unknown_service:node"; a name the operator gave wins over ours.
    ...(process.env.OTEL_SERVICE_NAME || /(^|,)\s*service\.name=/.test(process.env.OTEL_RESOURCE_ATTRIBUTES ?? "")
      ? {}
      : { serviceName }),
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  tracing.on = true;
  tracing.stop = async () => {
    tracing.on = false;
    tracing.stop = undefined;
    await sdk.shutdown();
    // Unregistered so a later start (a test's second protocol) can register again.
    trace.disable();
    context.disable();
    propagation.disable();
  };
  return true;
}

/** Exports the spans still queued and stops the SDK (on shutdown; a no-op when off). */
export async function stopTracing(): Promise<void> {
  await tracing.stop?.();
}

/**
 * SVC_TRACE_URL_TEMPLATE: where the console links a record's trace, `{trace_id}` replaced by its
 * id (e.g. `https://grafana.example/explore?…{trace_id}…` or `http://jaeger:16686/trace/{trace_id}`).
 * Null when unset, not http(s), or without `{trace_id}` (a link to the same page for every record helps nobody).
 */
export function traceUrlTemplate(env: Record<string, string | undefined> = process.env): string | null {
  const template = env.SVC_TRACE_URL_TEMPLATE?.trim();
  return template && /^https?:\/\//.test(template) && template.includes("{trace_id}") ? template : null;
}

/** What a governed call's span needs to see of the record it writes. */
interface RecordFields {
  org_did: string;
  capability: string | null;
  operation: string;
  decision: string;
  status: number;
}

/** The governed call's side of its span: `record` annotates the span and adds the trace id to the record. */
export interface CallTrace {
  record<E extends RecordFields>(entry: E): E & { trace_id?: string };
}

const UNTRACED: CallTrace = { record: (entry) => entry };

/**
 * Runs a governed call in its span (named after the operation), continuing the caller's trace
 * when it sent a W3C `traceparent`. Each record the call writes carries the span's trace id
 * (only when the span is sampled: a record links to a trace that exists).
 */
export function tracedCall<T>(
  operation: string,
  carrier: { traceparent?: string | null; tracestate?: string | null },
  fn: (t: CallTrace) => Promise<T>,
): Promise<T> {
  if (!tracing.on) return fn(UNTRACED);
  // Under Next.js (tRPC) its own request span, which already continued the caller's trace, is the parent.
  const active = context.active();
  const inSpanAlready = isSpanContextValid(trace.getSpanContext(active) ?? INVALID_SPAN_CONTEXT);
  const parent = inSpanAlready || !carrier.traceparent ? active : fromHeaders(carrier);
  return tracer().startActiveSpan(operation, { kind: SpanKind.SERVER }, parent, async (span) => {
    const traceId = span.isRecording() ? span.spanContext().traceId : undefined;
    const t: CallTrace = {
      record: (entry) => {
        span.setAttributes({
          "svc.operation": entry.operation,
          "svc.capability": entry.capability ?? "",
          "svc.decision": entry.decision,
          "svc.status": entry.status,
          "svc.organization": entry.org_did,
          "http.response.status_code": entry.status,
          ...httpAttributes(entry.operation),
        });
        if (entry.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        return traceId ? { ...entry, trace_id: traceId } : entry;
      },
    };
    try {
      return await fn(t);
    } finally {
      span.end();
    }
  });
}

/**
 * Runs `fn` in a child span of the current one (a transaction, a sandbox run, a model call…).
 * Off, it is `fn()`.
 */
export function inSpan<T>(
  name: string,
  attributes: Attributes,
  fn: (span: Span) => Promise<T>,
  kind: SpanKind = SpanKind.INTERNAL,
  parent?: Context,
): Promise<T> {
  if (!tracing.on) return fn(NO_SPAN);
  return tracer().startActiveSpan(name, { kind, attributes }, parent ?? context.active(), async (span) => {
    try {
      return await fn(span);
    } catch (e) {
      span.recordException(e instanceof Error ? e : String(e));
      span.setStatus({ code: SpanStatusCode.ERROR, message: e instanceof Error ? e.message : String(e) });
      throw e;
    } finally {
      span.end();
    }
  });
}

/** A span begun now and ended later by its owner (a sandbox run), with work run inside it meanwhile. */
export interface DetachedSpan {
  within<T>(fn: () => Promise<T>): Promise<T>;
  end(error?: string): void;
}

const NO_DETACHED_SPAN: DetachedSpan = { within: (fn) => fn(), end: () => {} };

/** Begins a child span of the current one; `end` it once (off, both are no-ops). */
export function startSpan(name: string, attributes: Attributes): DetachedSpan {
  if (!tracing.on) return NO_DETACHED_SPAN;
  const span = tracer().startSpan(name, { attributes }, context.active());
  const inside = trace.setSpan(context.active(), span);
  return {
    within: (fn) => context.with(inside, fn),
    end: (error) => {
      if (error) span.setStatus({ code: SpanStatusCode.ERROR, message: error });
      span.end();
    },
  };
}

/** A job's span, child of the span that queued it (`traceparent` stored with the job). */
export function inJobSpan<T>(
  job: { id: string; kind: string; attempts: number; traceparent?: string | null },
  fn: () => Promise<T>,
): Promise<T> {
  if (!tracing.on) return fn();
  const parent = job.traceparent ? fromHeaders({ traceparent: job.traceparent }) : ROOT_CONTEXT;
  return inSpan(
    `job ${job.kind}`,
    { "svc.job.id": job.id, "svc.job.kind": job.kind, "svc.job.attempt": job.attempts },
    fn,
    SpanKind.CONSUMER,
    parent,
  );
}

/** An outbound HTTP call's span; `fn` gets the headers (`traceparent`, `tracestate`) to send. */
export function inOutboundSpan<T>(
  method: string,
  url: URL,
  fn: (headers: Record<string, string>, span: Span) => Promise<T>,
): Promise<T> {
  if (!tracing.on) return fn({}, NO_SPAN);
  return inSpan(
    `${method} ${url.host}`,
    { "http.request.method": method, "server.address": url.hostname, "url.full": `${url.origin}${url.pathname}` },
    (span) => fn(traceHeaders(), span),
    SpanKind.CLIENT,
  );
}

/**
 * `fn` bound to the current trace context, for work another caller's turn will run (a group
 * commit's leader runs every member's work): its spans and queued jobs stay in their own trace.
 */
export function bindTrace<F extends (...args: never[]) => unknown>(fn: F): F {
  return tracing.on ? context.bind(context.active(), fn) : fn;
}

/** The current span's W3C trace context as headers to send (`{}` when off or outside a span). */
export function traceHeaders(): Record<string, string> {
  if (!tracing.on) return {};
  const headers: Record<string, string> = {};
  tracing.w3c.inject(context.active(), headers, {
    set: (carrier, key, value) => {
      carrier[key] = value;
    },
  });
  return headers;
}

/** The trace id of the current span when it is being exported (a record written now keeps it), else undefined. */
export function currentTraceId(): string | undefined {
  if (!tracing.on) return undefined;
  const span = trace.getSpan(context.active());
  return span?.isRecording() ? span.spanContext().traceId : undefined;
}

/** The current `traceparent` (stored with a queued job), or null. */
export function currentTraceparent(): string | null {
  return tracing.on ? (traceHeaders().traceparent ?? null) : null;
}

function fromHeaders(carrier: { traceparent?: string | null; tracestate?: string | null }): Context {
  return tracing.w3c.extract(ROOT_CONTEXT, carrier, {
    get: (c, key) => (c as Record<string, string | null | undefined>)[key] ?? undefined,
    keys: (c) => Object.keys(c),
  });
}

/** What the helpers hand `fn` when off: a span that records nothing. */
const NO_SPAN: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

const HTTP_OPERATION = /^(GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS) (\/\S*)$/;

/**
 * OpenTelemetry's HTTP server attributes from a record's operation (`POST /v1/agents/{id}/invoke`):
 * `http.request.method` and `http.route` (the template, never the URL). A console call
 * (`TRPC executions.live`) is `/api/trpc/<procedure>`, its method left out (GET or POST by batch).
 */
export function httpAttributes(operation: string): Record<string, string> {
  const http = HTTP_OPERATION.exec(operation);
  if (http) return { "http.request.method": http[1]!, "http.route": http[2]! };
  const trpc = /^TRPC (\S+)$/.exec(operation);
  return trpc ? { "http.route": `/api/trpc/${trpc[1]}` } : {};
}
