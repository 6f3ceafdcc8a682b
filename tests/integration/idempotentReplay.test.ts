import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resetConfig } from "@/server/config";
import { forgetDiscoveredModels } from "@/server/reasoning/discoverModels";
import { forgetRoutingCatalogue } from "@/server/reasoning/routingCatalogue";
import { resetReasoningSettings } from "@/server/reasoning/settings";
import { createSvcClient, SvcProblemError } from "@/sdk/src/index";
import { call, useTestServer } from "./harness";
import { startFakeOpenAI, type FakeOpenAI } from "./peers/fakeOpenAI";

/**
 * Issue 26, item 18: a replay (same Idempotency-Key) answers what the first call answered once
 * its work after commit ran: a failed model call's 502 problem, not the 200 admission stored at
 * commit; and the SDK turns neither a replayed failure nor a malformed answer into a success or a
 * SyntaxError.
 */
const ctx = useTestServer();
let peer: FakeOpenAI;
const MODELS = ["small", "mid"];

beforeAll(async () => {
  peer = await startFakeOpenAI(MODELS);
  process.env.SVC_OUTBOUND_ALLOW = peer.hostPort;
  process.env.SVC_MODEL_PROVIDERS = JSON.stringify([
    {
      name: "fake",
      kind: "openai-compatible",
      base_url: peer.baseUrl,
      api_key: "sk-test",
      models: MODELS.map((model_id) => ({ model_id, input_cost_per_million: 1, output_cost_per_million: 2 })),
    },
  ]);
  resetConfig();
  resetReasoningSettings();
  forgetDiscoveredModels();
  forgetRoutingCatalogue();
});
afterAll(async () => {
  delete process.env.SVC_MODEL_PROVIDERS;
  resetReasoningSettings();
  await peer.close();
});

const think = (key: string) =>
  call(ctx.server.url, "POST", "/v1/reasoning/think", {
    token: ctx.root.token,
    body: { messages: [{ role: "user", content: "Why do delegations expire?" }], max_tokens: 4 },
    headers: { "Idempotency-Key": key },
  });

describe("idempotent replays of work done after commit (issue 26, item 18)", () => {
  it("replays a failed model call as the same 502 problem", async () => {
    for (const m of MODELS) peer.behave(m, "error");
    try {
      const first = await think("think-fails-1");
      expect(first.status).toBe(502);
      expect(first.body.type).toMatch(/model_call_failed$/);
      const again = await think("think-fails-1");
      expect(again.status).toBe(502);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(again.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect(again.body).toEqual(first.body);
    } finally {
      for (const m of MODELS) peer.behave(m, "ok");
    }
  });

  it("replays a successful call with its text, not the admission", async () => {
    const first = await think("think-works-1");
    expect(first.status).toBe(200);
    expect(first.body.success).toBe(true);
    const again = await think("think-works-1");
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
  });

  it("the SDK rejects a think whose models all failed, retries included", async () => {
    for (const m of MODELS) peer.behave(m, "error");
    try {
      const svc = createSvcClient({ baseUrl: ctx.server.url, token: ctx.root.token, retry: { baseDelayMs: 1 } });
      const outcome = await svc.ops
        .think({ body: { messages: [{ role: "user", content: "Still there?" }], max_tokens: 4 } } as never)
        .then(
          (value) => ({ resolved: value }),
          (error: unknown) => ({ rejected: error }),
        );
      expect(outcome).toHaveProperty("rejected");
      const error = (outcome as { rejected: unknown }).rejected;
      expect(error).toBeInstanceOf(SvcProblemError);
      expect((error as SvcProblemError).status).toBe(502);
      expect((error as SvcProblemError).code).toBe("model_call_failed");
    } finally {
      for (const m of MODELS) peer.behave(m, "ok");
    }
  });

  it("the SDK turns a malformed JSON answer into an SvcProblemError, not a SyntaxError", async () => {
    // An answer cut short on its way (a proxy in between), handed to the SDK as its fetch would.
    const svc = createSvcClient({
      baseUrl: "http://svc.invalid",
      token: "t",
      retry: { retries: 0 },
      fetch: async () =>
        new Response('{"data": [1, 2', { status: 200, headers: { "content-type": "application/json" } }),
    });
    const error = await svc.GET("/v1/passports").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SvcProblemError);
    expect((error as SvcProblemError).status).toBe(200);
    expect((error as SvcProblemError).detail).toMatch(/not valid JSON/);
  });
});
