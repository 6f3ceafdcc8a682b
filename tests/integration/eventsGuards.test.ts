import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resetConfig } from "@/server/config";
import { database } from "@/server/db/client";
import { shutdownSandbox } from "@/server/sandbox/pool";
import { startWorker, type Worker } from "@/server/worker/worker";
import { call, useTestServer, waitFor } from "./harness";
import { deployAndWait } from "./agentsHelpers";

// Issue 14, items 15, 19 (from a run) and 20: what callers and runs may put on the bus.
process.env.SVC_SANDBOX_THREADS = "2";
process.env.SVC_EXECUTION_RETRY_BASE_MS = "20";
process.env.SVC_RUN_EMIT_BUDGET = "3";
process.env.SVC_EVENT_MAX_FANOUT = "5";

const ctx = useTestServer();
let worker: Worker;
beforeAll(() => {
  resetConfig();
  worker = startWorker({ log: () => undefined, tasks: [] });
});
afterAll(async () => {
  await worker.stop();
  await shutdownSandbox();
});

const api = (method: string, path: string, body?: unknown, token = ctx.root.token) =>
  call(ctx.server.url, method, path, { token, body });
const emitter = (events: string[] = []) => ({
  capabilities: [
    { id: "svc_api:events:write", evidence: ["emits events"] },
    ...(events.length ? [{ id: "event_trigger", evidence: ["started by events"] }] : []),
    ...events.map((e) => ({ id: `event_trigger:${e}`, evidence: [`reacts to ${e}`] })),
  ],
  ...(events.length ? { on: events.map((e) => ({ event: e, description: `on ${e}` })) } : {}),
});

async function invokeAndWait(agentId: string) {
  const res = await api("POST", `/v1/agents/${agentId}/invoke`, { input: {} });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return waitFor(
    "the run",
    async () => {
      const got = await api("GET", `/v1/executions/${res.body.id}`);
      return ["completed", "failed", "cancelled"].includes(got.body.status) ? got.body : undefined;
    },
    30_000,
  );
}

describe("platform event types are reserved", () => {
  const reserved = [
    "execution.completed",
    "execution.failed",
    "agent.deployed",
    "agent.anything_new",
    "approval.decided",
    "workflow.completed",
    "connector.installed",
    "webhook.disabled",
    "delegation.revoked",
  ];

  it("ingest and emit refuse them with 400 RESERVED_EVENT_TYPE, store nothing and record a denial", async () => {
    const db = await database();
    for (const path of ["/v1/events/ingest", "/v1/events/emit"]) {
      for (const type of reserved) {
        const res = await api("POST", path, { type, payload: { result_json: { forged: true } } });
        expect(res.status, `${path} ${type}`).toBe(400);
        expect(res.body.errors[0]).toMatchObject({ field: "type", code: "RESERVED_EVENT_TYPE" });
      }
    }
    expect(
      await db.read.event.count({
        where: {
          type: { in: reserved },
          ingestedVia: { in: ["ingest", "emit"] },
          actorDid: ctx.root.orgDid,
          delegationId: ctx.root.delegationId,
        },
      }),
    ).toBe(0);
    const denied = await db.read.provenanceRecord.count({
      where: {
        operation: "POST /v1/events/ingest",
        decision: "denied",
        status: 400,
        delegationId: ctx.root.delegationId,
      },
    });
    expect(denied).toBeGreaterThanOrEqual(reserved.length);
    // Types that only look alike are the caller's own.
    for (const type of ["executions.completed", "webhook.enabled", "delegation.created", "agents.x"]) {
      expect((await api("POST", "/v1/events/ingest", { type })).status, type).toBe(202);
    }
  });

  it("ctx.events.emit refuses them too", async () => {
    const code = `export default async (input, ctx) => {
      try { await ctx.events.emit("execution.completed", { result_json: { forged: true } }); return { emitted: true }; }
      catch (e) { return { name: e.name, message: e.message }; }
    }`;
    const agentId = await deployAndWait(ctx.server.url, ctx.root.token, "forger", code, emitter());
    const run = await invokeAndWait(agentId);
    expect(run.result_json).toMatchObject({ name: "validation_failed", message: expect.stringContaining("reserved") });
  });
});

describe("what a run emits passes the same validation as ingest (item 19)", () => {
  it("NUL, deep nesting, lone surrogates and oversized payloads are 4xx refusals, never a 500 nor the host's stack error", async () => {
    const code = `export default async (input, ctx) => {
      const nest = (n, wrap) => { let v = {}; for (let i = 0; i < n; i++) v = wrap(v); return v; };
      const tries = {
        nul: () => ctx.events.emit("hostile.nul", { s: "a\\u0000b" }),
        deep: () => ctx.events.emit("hostile.deep", nest(2000, (v) => ({ v }))),
        deep_array: () => ctx.events.emit("hostile.array", { v: nest(5000, (v) => [v]) }),
        surrogate: () => ctx.events.emit("hostile.surrogate", { s: "\\ud800" }),
        key_surrogate: () => ctx.events.emit("hostile.key", { ["\\udc00"]: 1 }),
        big: () => ctx.events.emit("hostile.big", { s: "x".repeat(1100 * 1024) }),
        bad_type: () => ctx.events.emit("Bad..Type", {}),
        not_object: () => ctx.events.emit("hostile.array_payload", [1, 2]),
      };
      const out = {};
      for (const [k, f] of Object.entries(tries)) {
        try { await f(); out[k] = "accepted"; } catch (e) { out[k] = { name: e.name, message: e.message }; }
      }
      return out;
    }`;
    const agentId = await deployAndWait(ctx.server.url, ctx.root.token, "hostile-emitter", code, emitter());
    const run = await invokeAndWait(agentId);
    expect(run.status).toBe("completed");
    const out = run.result_json as Record<string, { name: string; message: string } | string>;
    for (const key of ["nul", "deep", "deep_array", "surrogate", "key_surrogate", "big", "bad_type", "not_object"]) {
      const got = out[key] as { name: string; message: string };
      expect(got, key).toMatchObject({ name: expect.stringMatching(/^(validation_failed|payload_too_large)$/) });
      expect(got.message, key).not.toMatch(/call stack|RangeError|internal/i);
    }
    expect((out.big as { name: string }).name).toBe("payload_too_large");
    const db = await database();
    expect(await db.read.event.count({ where: { type: { startsWith: "hostile." } } })).toBe(0);
    const execution = await db.read.asyncExecution.findUniqueOrThrow({ where: { id: run.id } });
    const records = await db.read.provenanceRecord.findMany({
      where: { operation: "POST /v1/events/emit", delegationId: execution.delegationId },
    });
    expect(records).toHaveLength(8);
    for (const r of records)
      expect({ decision: r.decision, status: r.status < 500 }).toEqual({ decision: "denied", status: true });
    // Each refusal is recorded with the hash of what was sent, not of an empty request.
    expect(new Set(records.map((r) => r.requestHash)).size).toBeGreaterThan(1);
  });
});

describe("emit budget and fan-out (item 20)", () => {
  it("a run emits at most SVC_RUN_EMIT_BUDGET events; the next emit names the limit", async () => {
    const code = `export default async (input, ctx) => {
      const out = [];
      for (let i = 0; i < 5; i++) {
        try { await ctx.events.emit("budget.tick", { i }); out.push("ok"); } catch (e) { out.push(e.name + ": " + e.message); }
      }
      return { out };
    }`;
    const agentId = await deployAndWait(ctx.server.url, ctx.root.token, "chatty", code, emitter());
    const run = await invokeAndWait(agentId);
    const { out } = run.result_json as { out: string[] };
    expect(out.slice(0, 3)).toEqual(["ok", "ok", "ok"]);
    expect(out[3]).toMatch(/^emit_budget_exhausted: .*SVC_RUN_EMIT_BUDGET/);
    expect(out[4]).toMatch(/^emit_budget_exhausted/);
  });

  it("one event from outside starts at most SVC_EVENT_MAX_FANOUT trigger runs across its chain; the refusal names the limit", async () => {
    // Each run emits the event that triggers it twice: unbounded, a chain of depth 8 would start 255 runs.
    const code = `export default async (input, ctx) => {
      const out = [];
      for (let i = 0; i < 2; i++) {
        try { await ctx.events.emit("fan.out", { from: input.event_id }); out.push("ok"); } catch (e) { out.push(e.name + ": " + e.message); }
      }
      return { out };
    }`;
    const agentId = await deployAndWait(ctx.server.url, ctx.root.token, "fanner", code, emitter(["fan.out"]));
    const res = await api("POST", "/v1/events/ingest", { type: "fan.out", payload: {} });
    expect(res.body.queued_executions).toBe(1);
    const db = await database();
    const refused = await waitFor(
      "a fan-out refusal",
      async () => {
        const rows = await db.read.asyncExecution.findMany({ where: { agentId, status: "completed" } });
        return rows
          .flatMap((r) => (r.resultJson as { out?: string[] } | null)?.out ?? [])
          .find((s) => s.startsWith("event_fanout_exceeded"));
      },
      30_000,
    );
    expect(refused).toMatch(/SVC_EVENT_MAX_FANOUT/);
    // Wait for the queue to drain, then count: the chain never outgrew the limit.
    await waitFor(
      "the runs to end",
      async () =>
        (await db.read.asyncExecution.count({ where: { agentId, status: { in: ["queued", "running"] } } })) === 0
          ? true
          : undefined,
      30_000,
    );
    expect(await db.read.asyncExecution.count({ where: { agentId } })).toBe(5);
  });
});
