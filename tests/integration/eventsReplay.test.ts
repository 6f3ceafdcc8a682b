import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWorker, type Worker } from "@/server/worker/worker";
import { bundleOf } from "./agentsHelpers";
import { call, useTestServer } from "./harness";

/** The shipped trigger example makes the README's events quick start true, and a replayed sender id says it is one. */
const ctx = useTestServer();
let worker: Worker;
beforeAll(() => void (worker = startWorker({ log: () => undefined, tasks: [] })));
afterAll(() => worker?.stop());

const example = (f: string) => readFileSync(join(process.cwd(), "examples/agents", f), "utf8");

async function settled(id: string) {
  for (let i = 0; i < 150; i++) {
    const e = await call(ctx.server.url, "GET", `/v1/executions/${id}`, { token: ctx.root.token });
    if (["completed", "failed", "cancelled"].includes(e.body.status)) return e.body;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`execution ${id} did not end`);
}

describe("the events quick start", () => {
  it("the shipped trigger example answers 1 match and 1 queued run, and its run routes the invoice", async () => {
    const deploy = await call(ctx.server.url, "POST", "/v1/agents/deploy", {
      token: ctx.root.token,
      body: {
        manifest: JSON.parse(example("invoice-router.manifest.json")),
        ...bundleOf(example("invoice-router.js")),
        wait: true,
      },
    });
    expect(deploy.status).toBe(201);
    expect(deploy.body.data.status).toBe("active");

    const event = {
      type: "invoice.paid",
      payload: { invoice_id: "inv_2041", amount: 1250 },
      id: "billing-88121",
      source: "billing",
    };
    const first = await call(ctx.server.url, "POST", "/v1/events/ingest", { token: ctx.root.token, body: event });
    expect(first.status).toBe(202);
    expect(first.body).toEqual({
      event_id: expect.stringMatching(/^evt_/),
      matched_subscriptions: 1,
      queued_executions: 1,
      replayed: false,
    });
    expect(first.headers.get("idempotent-replayed")).toBeNull();

    const stored = await call(ctx.server.url, "GET", `/v1/events/${first.body.event_id}`, { token: ctx.root.token });
    const run = await settled(stored.body.matches[0].execution_id);
    expect(run).toMatchObject({
      status: "completed",
      result_json: { invoice_id: "inv_2041", route: "finance-review", event_id: first.body.event_id },
    });
  });

  it("a repeated sender id is the first answer again, marked replayed in the body and the Idempotent-Replayed header, on ingest and emit", async () => {
    const event = { type: "invoice.voided", payload: { invoice_id: "inv_7" }, id: "billing-replay-1" };
    const first = await call(ctx.server.url, "POST", "/v1/events/ingest", { token: ctx.root.token, body: event });
    const again = await call(ctx.server.url, "POST", "/v1/events/ingest", { token: ctx.root.token, body: event });
    expect(again.status).toBe(202);
    expect(again.body).toEqual({ ...first.body, replayed: true });
    expect(again.headers.get("idempotent-replayed")).toBe("true");

    const emitted = { type: "ledger.closed", payload: {}, id: "ops-1" };
    const e1 = await call(ctx.server.url, "POST", "/v1/events/emit", { token: ctx.root.token, body: emitted });
    const e2 = await call(ctx.server.url, "POST", "/v1/events/emit", { token: ctx.root.token, body: emitted });
    expect([e1.body.replayed, e1.headers.get("idempotent-replayed")]).toEqual([false, null]);
    expect([e2.body.replayed, e2.headers.get("idempotent-replayed")]).toEqual([true, "true"]);
    expect(e2.body.event_id).toBe(e1.body.event_id);
  });
});
