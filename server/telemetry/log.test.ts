import { AsyncLocalStorage } from "node:async_hooks";
import { ROOT_CONTEXT, context, trace, TraceFlags, type Context, type ContextManager } from "@opentelemetry/api";
import { describe, expect, it, onTestFinished } from "vitest";
import { createLogger, logLineSays, logSettings, loggedCall, logger, replaceLogger } from "./log";

/** A logger writing JSON lines into an array. */
function capture(level: "info" | "debug" = "debug") {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger({ level, format: "json", fd: 1 }, { write: (s: string) => void lines.push(JSON.parse(s)) });
  return { log, lines };
}

describe("log settings", () => {
  it("default to info, JSON when stdout is no terminal, and refuse unknown values", () => {
    expect(logSettings({})).toMatchObject({ level: "info", format: process.stdout.isTTY ? "pretty" : "json" });
    expect(logSettings({ SVC_LOG_LEVEL: "DEBUG", SVC_LOG_FORMAT: "pretty" })).toMatchObject({
      level: "debug",
      format: "pretty",
    });
    expect(() => logSettings({ SVC_LOG_LEVEL: "verbose" })).toThrow(/SVC_LOG_LEVEL/);
    expect(() => logSettings({ SVC_LOG_FORMAT: "text" })).toThrow(/SVC_LOG_FORMAT/);
  });
});

describe("the logger", () => {
  it("writes JSON lines with a level name and an ISO time", () => {
    const { log, lines } = capture();
    log.info({ component: "svc" }, "listening");
    expect(lines[0]).toMatchObject({ level: "info", component: "svc", msg: "listening" });
    expect(new Date(String(lines[0]!.time)).toISOString()).toBe(lines[0]!.time);
  });

  it("redacts fields that may hold a secret, and a request's Authorization header", () => {
    const { log, lines } = capture();
    log.info({ token: "t0p", secret: "whsec_x", req: { headers: { authorization: "Bearer abc" } }, kept: "ok" }, "m");
    const text = JSON.stringify(lines[0]);
    for (const secret of ["t0p", "whsec_x", "Bearer abc"]) expect(text).not.toContain(secret);
    expect(lines[0]).toMatchObject({ kept: "ok", token: "[redacted]" });
  });
});

describe("a governed call's lines", () => {
  it("carry its request id, operation and organization, and the call ends with one line of its own", async () => {
    const { log, lines: parsed } = capture("info");
    const previous = replaceLogger(log);
    onTestFinished(() => void replaceLogger(previous));
    const out = await loggedCall(
      { request_id: "req_1", operation: "POST /v1/webhooks" },
      async (caller) => {
        caller("did:svc:org1");
        logger().info("inside");
        return { status: 201 };
      },
      () => 500,
    );
    expect(out.status).toBe(201);
    expect(parsed.find((l) => l.msg === "inside")).toMatchObject({
      request_id: "req_1",
      operation: "POST /v1/webhooks",
      org_did: "did:svc:org1",
    });
    const end = parsed.find((l) => l.status !== undefined);
    expect(end).toMatchObject({ level: "info", request_id: "req_1", org_did: "did:svc:org1", status: 201 });
    expect(typeof end!.duration_ms).toBe("number");

    await expect(
      loggedCall(
        { request_id: "req_2", operation: "GET /v1/x" },
        async () => {
          throw new Error("boom");
        },
        () => 503,
      ),
    ).rejects.toThrow("boom");
    expect(parsed.find((l) => l.request_id === "req_2")).toMatchObject({
      level: "warn",
      status: 503,
    });
  });
});

describe("a ready line", () => {
  it("is recognised in both formats", () => {
    expect(logLineSays("12:00:00.000 INFO: svc-worker: running", "svc-worker", "running")).toBe(true);
    expect(logLineSays('{"level":"info","component":"svc-worker","msg":"running"}', "svc-worker", "running")).toBe(
      true,
    );
    expect(logLineSays('{"level":"info","component":"svc","msg":"running"}', "svc-worker", "running")).toBe(false);
  });
});

/** What a tracing SDK registers: the active context follows the async flow. */
class AsyncContexts implements ContextManager {
  private readonly store = new AsyncLocalStorage<Context>();
  active = () => this.store.getStore() ?? ROOT_CONTEXT;
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.store.run(ctx, () => fn.apply(thisArg, args));
  }
  bind = <T>(_ctx: Context, target: T): T => target;
  enable = () => this;
  disable = () => this;
}

describe("a line written under an active span", () => {
  it("carries the trace's id and the span's, for the way from a trace to its logs", async () => {
    expect(context.setGlobalContextManager(new AsyncContexts())).toBe(true);
    onTestFinished(() => context.disable());
    const { log, lines } = capture("info");
    const previous = replaceLogger(log);
    onTestFinished(() => void replaceLogger(previous));
    const span = trace.wrapSpanContext({
      traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
      spanId: "00f067aa0ba902b7",
      traceFlags: TraceFlags.SAMPLED,
    });
    await context.with(trace.setSpan(context.active(), span), () =>
      loggedCall(
        { request_id: "req_t", operation: "GET /v1/passports" },
        async () => {
          await new Promise((r) => setTimeout(r, 1));
          logger().info("inside");
          return { status: 200 };
        },
        () => 500,
      ),
    );
    logger().info("outside");
    const ids = { trace_id: "4bf92f3577b34da6a3ce929d0e0e4736", span_id: "00f067aa0ba902b7" };
    expect(lines.find((l) => l.msg === "inside")).toMatchObject({ ...ids, request_id: "req_t" });
    expect(lines.find((l) => l.status === 200)).toMatchObject(ids);
    expect(lines.find((l) => l.msg === "outside")).not.toHaveProperty("trace_id");
  });
});
