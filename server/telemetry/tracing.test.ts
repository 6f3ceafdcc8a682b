import { describe, expect, it } from "vitest";
import { traceHeaders, traceUrlTemplate, tracedCall, tracingConfigured } from "./tracing";

describe("tracing settings", () => {
  it("is on only with an OTLP endpoint, and not when the SDK or the traces exporter is turned off", () => {
    expect(tracingConfigured({})).toBe(false);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" })).toBe(true);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://collector:4318/v1/traces" })).toBe(true);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_SDK_DISABLED: "true" })).toBe(false);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_TRACES_EXPORTER: "none" })).toBe(
      false,
    );
  });

  it("takes an http(s) SVC_TRACE_URL_TEMPLATE holding {trace_id}, nothing else", () => {
    expect(traceUrlTemplate({})).toBeNull();
    expect(traceUrlTemplate({ SVC_TRACE_URL_TEMPLATE: "http://jaeger:16686/trace/{trace_id}" })).toBe(
      "http://jaeger:16686/trace/{trace_id}",
    );
    expect(traceUrlTemplate({ SVC_TRACE_URL_TEMPLATE: "http://jaeger:16686/search" })).toBeNull();
    expect(traceUrlTemplate({ SVC_TRACE_URL_TEMPLATE: "javascript:alert('{trace_id}')" })).toBeNull();
  });

  it("off, a governed call's record is left as it is and nothing goes out", async () => {
    const entry = { org_did: "did:x", capability: null, operation: "GET /v1/x", decision: "allowed", status: 200 };
    const recorded = await tracedCall(
      "GET /v1/x",
      { traceparent: `00-${"1".repeat(32)}-${"2".repeat(16)}-01` },
      async (t) => t.record(entry),
    );
    expect(recorded).toBe(entry);
    expect(traceHeaders()).toEqual({});
  });
});
