import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { resetConfig } from "@/server/config";
import { database } from "@/server/db/client";
import { hashLeaf, leafBytes, type ProvenanceRecord } from "@/server/provenance/record";
import { rootOrgDid } from "@/server/setup/bootstrap";
import { startTracing, stopTracing, tracingOn } from "@/server/telemetry/tracing";
import { startWorker, type Worker } from "@/server/worker/worker";
import { createCaller } from "@/server/appRouter";
import { contextFromHeaders } from "@/server/trpc/init";
import { call, inFreshMinute, lastProvenance, useTestServer, waitFor } from "./harness";
import { expectLedgerVerifies } from "./ledgerVerify";
import { startOtlpReceiver, type ReceivedSpan } from "./otlpReceiver";
import { startReceiver } from "./webhooksHelpers";

/**
 * Traces (issue 20 item 1), against an OTLP/HTTP receiver on loopback: a governed call continues
 * the caller's W3C trace, its record keeps the trace id, and the webhook delivery it causes (a
 * job, then an outbound call) carries a traceparent of the same trace. Off, nothing is exported.
 */
const ctx = useTestServer();
let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>;
let hooks: Awaited<ReturnType<typeof startReceiver>>;
let worker: Worker;

beforeAll(async () => {
  otlp = await startOtlpReceiver();
  hooks = await startReceiver(() => 200);
  process.env.SVC_OUTBOUND_ALLOW = hooks.hostPort;
  resetConfig();
  worker = startWorker({ log: () => undefined, tasks: [] });
});
afterAll(async () => {
  await stopTracing();
  await worker.stop();
  await hooks.close();
  await otlp.close();
  for (const name of ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_SERVICE_NAME"])
    delete process.env[name];
});

const api = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  call(ctx.server.url, method, path, { token: ctx.root.token, body, headers });

/** Ingests an event a webhook listens to, as a caller in trace `traceId`; returns the event's record and delivery. */
async function ingestAndDeliver(path: string, traceparent?: string) {
  const type = `traced.${path.replace(/[^a-z]/g, "")}`;
  const hook = await api("POST", "/v1/webhooks", { target_url: `${hooks.url}${path}`, event_types: [type] });
  expect(hook.status).toBe(201);
  const res = await api("POST", "/v1/events/ingest", { type, payload: { n: 1 } }, traceparent ? { traceparent } : {});
  expect(res.status).toBe(202);
  expect(res.body.matched_subscriptions).toBe(1);
  const event = (await api("GET", `/v1/events/${res.body.event_id}`)).body;
  const record = (await api("GET", `/v1/provenance/${event.provenance_record_id}`)).body as ProvenanceRecord;
  // Delivered, and its outcome (status_code) recorded: the job's span has ended.
  await waitFor("the delivery's outcome", async () => {
    const list = (await api("GET", `/v1/webhooks/${hook.body.id}/deliveries`)).body.data as Array<{
      status_code: number | null;
    }>;
    return list[0]?.status_code === 200 ? true : undefined;
  });
  expect(hooks.at(path)).toHaveLength(1);
  return { record, delivery: hooks.at(path)[0]! };
}

const parentOf = (traceId: string, spanId: string) => `00-${traceId}-${spanId}-01`;
const newTrace = () => ({ traceId: randomBytes(16).toString("hex"), spanId: randomBytes(8).toString("hex") });

describe.each([
  ["http/json", "application/json"],
  ["http/protobuf", "application/x-protobuf"],
])("traces exported over OTLP %s", (protocol, contentType) => {
  let spans: ReceivedSpan[];
  let record: ProvenanceRecord;
  let delivery: Awaited<ReturnType<typeof ingestAndDeliver>>["delivery"];
  let trpcRecordTraceId: string | null | undefined;
  let unroutedRecord: { traceId: string | null; operation: string } | null | undefined;
  const caller = newTrace();
  const consoleCaller = newTrace();
  const lostCaller = newTrace();

  beforeAll(async () => {
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = otlp.url;
    process.env.OTEL_EXPORTER_OTLP_PROTOCOL = protocol;
    process.env.OTEL_SERVICE_NAME = "svc-traces-test";
    expect(await startTracing()).toBe(true);
    const path = `/traced-${protocol.replace("/", "-")}`;
    ({ record, delivery } = await ingestAndDeliver(path, parentOf(caller.traceId, caller.spanId)));
    // tRPC: the context takes the request's trace headers (server/trpc/handler.ts builds it so).
    const headers = new Headers({
      authorization: `Bearer ${ctx.root.token}`,
      traceparent: parentOf(consoleCaller.traceId, consoleCaller.spanId),
    });
    await createCaller(contextFromHeaders(headers, "127.0.0.1")).identity.passports.list({ limit: 1 });
    trpcRecordTraceId = (await lastProvenance())?.traceId;
    // A path no route answers: refused (404) before routing, recorded all the same, in a span
    // (the first of its minute, so with a record of its own: anonymousRefusals.ts).
    inFreshMinute();
    const lost = await api("GET", "/v1/no-such-route", undefined, {
      traceparent: parentOf(lostCaller.traceId, lostCaller.spanId),
    }).finally(() => vi.useRealTimers());
    expect(lost.status).toBe(404);
    unroutedRecord = await lastProvenance();
    await stopTracing(); // flushes every queued span
    spans = otlp.spans.filter((s) => s.traceId === caller.traceId);
  });

  it("continues a tRPC caller's trace too, and records it", () => {
    const span = otlp.spans.find(
      (s) => s.traceId === consoleCaller.traceId && s.name === "TRPC identity.passports.list",
    );
    expect(span?.parentSpanId).toBe(consoleCaller.spanId);
    expect(span?.attributes).toMatchObject({ "svc.decision": "allowed", "svc.status": 200 });
    expect(trpcRecordTraceId).toBe(consoleCaller.traceId);
  });

  it("gives a call refused before routing (an unknown path) a span in the caller's trace, and its record the trace id", () => {
    const span = otlp.spans.find((s) => s.traceId === lostCaller.traceId);
    expect(span?.name).toBe("GET /v1/no-such-route");
    expect(span?.parentSpanId).toBe(lostCaller.spanId);
    expect(span?.attributes).toMatchObject({ "svc.decision": "denied", "svc.status": 404 });
    expect(unroutedRecord).toMatchObject({ operation: "GET /v1/no-such-route", traceId: lostCaller.traceId });
  });

  it("sends spans with the protocol's content type, under OTEL_SERVICE_NAME", () => {
    expect(otlp.contentTypes).toContain(contentType);
    expect(spans.length).toBeGreaterThan(0);
    expect(new Set(spans.map((s) => s.contentType))).toEqual(new Set([contentType]));
    expect(new Set(spans.map((s) => s.service))).toEqual(new Set(["svc-traces-test"]));
  });

  it("gives the governed call a span in the caller's trace, child of the caller's span, with the record's fields", async () => {
    const span = spans.find((s) => s.name === "POST /v1/events/ingest");
    expect(span, JSON.stringify(spans.map((s) => s.name))).toBeDefined();
    expect(span!.parentSpanId).toBe(caller.spanId);
    expect(span!.attributes).toMatchObject({
      "svc.operation": "POST /v1/events/ingest",
      "svc.capability": "svc_api:events:write",
      "svc.decision": "allowed",
      "svc.status": 202,
      "svc.organization": await rootOrgDid(await database()),
      // OpenTelemetry's HTTP server conventions (issue 27, item 7).
      "http.request.method": "POST",
      "http.route": "/v1/events/ingest",
      "http.response.status_code": 202,
    });
    // Its transaction is a child of it.
    expect(spans.find((s) => s.name === "svc.transaction" && s.parentSpanId === span!.spanId)).toBeDefined();
  });

  it("keeps the trace id in the call's provenance record, inside its leaf hash", () => {
    expect(record.trace_id).toBe(caller.traceId);
    const { leaf_hash, ...content } = record;
    expect(hashLeaf(leafBytes(content)).toString("base64")).toBe(leaf_hash);
    // Without it, the content would not match: the trace id is covered.
    const { trace_id: _dropped, ...withoutTrace } = content;
    expect(hashLeaf(leafBytes(withoutTrace)).toString("base64")).not.toBe(leaf_hash);
  });

  it("carries a traceparent of the same trace out with the webhook delivery, through the job's span", () => {
    const sent = String(delivery.headers.traceparent ?? "");
    expect(sent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const [, traceId, spanId] = sent.split("-");
    expect(traceId).toBe(caller.traceId);
    const outbound = spans.find((s) => s.spanId === spanId);
    expect(outbound?.attributes).toMatchObject({ "http.request.method": "POST", "http.response.status_code": 200 });
    const job = spans.find((s) => s.spanId === outbound!.parentSpanId);
    expect(job?.name).toMatch(/^job /);
  });
});

describe("traces off (no OTEL_EXPORTER_OTLP_ENDPOINT)", () => {
  it("exports nothing, keeps no trace id, sends no traceparent; every record still verifies", async () => {
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    expect(await startTracing()).toBe(false);
    expect(tracingOn()).toBe(false);
    const before = otlp.spans.length;
    const caller = newTrace();
    const { record, delivery } = await ingestAndDeliver("/untraced", parentOf(caller.traceId, caller.spanId));
    expect(record).not.toHaveProperty("trace_id");
    expect(delivery.headers).not.toHaveProperty("traceparent");
    expect(otlp.spans.length).toBe(before);
    // Records with a trace id (the traced calls above) and without verify alike with `svc verify`.
    await expectLedgerVerifies(ctx.server.url, ctx.root.token, "svc-traces-");
  });
});
