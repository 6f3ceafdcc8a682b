import { SpanKind, trace } from "@opentelemetry/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTracing, stopTracing } from "@/server/telemetry/tracing";
import { startOtlpReceiver, type ReceivedSpan } from "./otlpReceiver";

/**
 * One-time tokens in URLs (`/setup?token=…`, `/invite?token=…`, `/api/passkeys/invite?token=…`)
 * never reach the trace collector. Next.js's request span is started here exactly as Next.js
 * starts it (tracer `next.js`, name and `http.target` from the request's URL, `http.url` and the
 * route set later), through the process's real SDK and OTLP exporter, to a loopback receiver.
 */
let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>;
let spans: ReceivedSpan[];
const SECRET = "tok_9f8e7d6c5b4a39281706f5e4d3c2b1a0";

beforeAll(async () => {
  otlp = await startOtlpReceiver();
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = otlp.url;
  process.env.OTEL_EXPORTER_OTLP_PROTOCOL = "http/json";
  expect(await startTracing()).toBe(true);
  const next = trace.getTracer("next.js");
  for (const target of [
    `/setup?token=${SECRET}`,
    `/invite?token=${SECRET}&x=1`,
    `/api/passkeys/invite?token=${SECRET}`,
  ])
    next.startActiveSpan(
      `GET ${target}`,
      { kind: SpanKind.SERVER, attributes: { "http.method": "GET", "http.target": target } },
      (span) => {
        // What Next.js and fetch instrumentations add while the request runs.
        span.setAttributes({
          "http.url": `https://svc.example.com${target}`,
          "url.full": `https://svc.example.com${target}`,
          "url.query": target.slice(target.indexOf("?") + 1),
          "next.span_name": `GET ${target}`,
          "custom.link": `https://svc.example.com${target}`,
          "http.status_code": 200,
        });
        span.recordException(new Error(`fetch failed: https://idp.example.com/cb?code=${SECRET} (why?)`));
        span.end();
      },
    );
  // A name that picks up a query after the start.
  const late = next.startSpan("render");
  late.updateName(`render /invite?token=${SECRET}`);
  late.end();
  // A request as Next.js traces it: its module loading (dropped) and its handler (kept).
  next.startActiveSpan("POST /v1/passports", { kind: SpanKind.SERVER }, (request) => {
    for (const [name, type] of [
      ["load route module", "LoadComponents.loadRouteModule"],
      ["executing api route (app) /v1/passports", "AppRouteRouteHandlers.runHandler"],
    ] as const)
      next
        .startSpan(name, {
          attributes: { "next.span_category": "nextjs", "next.span_name": name, "next.span_type": type },
        })
        .end();
    request.end();
  });
  await stopTracing(); // flushes
  spans = otlp.spans;
});
afterAll(async () => {
  await otlp.close();
  for (const name of ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL"]) delete process.env[name];
});

describe("spans exported", () => {
  it("carry no query string: not in names, URL attributes, nor url.query", () => {
    const ours = spans.filter((s) => s.name.startsWith("GET /") || s.name.startsWith("render"));
    expect(ours).toHaveLength(4);
    expect(JSON.stringify(ours)).not.toContain(SECRET);
    expect(JSON.stringify(ours)).not.toContain("token=");
    expect(ours.map((s) => s.name).sort()).toEqual([
      "GET /api/passkeys/invite",
      "GET /invite",
      "GET /setup",
      "render /invite",
    ]);
    const setup = ours.find((s) => s.name === "GET /setup")!;
    expect(setup.attributes).toMatchObject({
      "http.target": "/setup",
      "http.url": "https://svc.example.com/setup",
      "url.full": "https://svc.example.com/setup",
      "next.span_name": "GET /setup",
      "custom.link": "https://svc.example.com/setup",
      "http.status_code": 200,
    });
    expect(setup.attributes).not.toHaveProperty("url.query");
    // Nowhere in what was sent, events included (the exception's message keeps its URL, less the query).
    const sent = otlp.bodies.map((b) => b.toString("utf8")).join("\n");
    expect(sent).toContain("exception");
    expect(sent).not.toContain(SECRET);
    expect(sent).toContain("fetch failed: https://idp.example.com/cb (why?)");
  });

  // Issue 27, item 7: one per request whatever the module cache, 930 in a short run.
  it("leave out Next.js's load route module spans, and only those", () => {
    expect(spans.map((s) => s.name)).not.toContain("load route module");
    expect(JSON.stringify(spans)).not.toContain("LoadComponents.loadRouteModule");
    const request = spans.find((s) => s.name === "POST /v1/passports")!;
    const handler = spans.find((s) => s.name === "executing api route (app) /v1/passports")!;
    expect(handler.attributes).toMatchObject({ "next.span_type": "AppRouteRouteHandlers.runHandler" });
    expect(handler.parentSpanId).toBe(request.spanId);
  });
});
