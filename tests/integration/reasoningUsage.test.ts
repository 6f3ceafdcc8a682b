import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resetConfig } from "@/server/config";
import { database } from "@/server/db/client";
import { forgetDiscoveredModels } from "@/server/reasoning/discoverModels";
import { forgetRoutingCatalogue } from "@/server/reasoning/routingCatalogue";
import { resetReasoningSettings } from "@/server/reasoning/settings";
import { metricsRegistry } from "@/server/telemetry/metrics";
import { call, ed25519Jwk, useTestServer } from "./harness";
import { startFakeOpenAI, type FakeOpenAI } from "./peers/fakeOpenAI";

/**
 * A provider's reported usage is its word: a broken or hostile OpenAI-compatible endpoint must not
 * pay a budget back (negative tokens) nor charge trillions (1e15 tokens). The fake peer reports
 * what each test sets.
 */
const ctx = useTestServer();
let peer: FakeOpenAI;

const caps = { reasoning: 0.8, coding: 0.8, summarization: 0.8, multilingual: 0.8 };
const PRICE = { input: 1, output: 2 };
const CONTENT = "Why do delegations expire at all?";
const MAX_TOKENS = 100;
// What the router reserves for CONTENT: its input bound (UTF-8 bytes + 4 per message + 3) and max_tokens.
const INPUT_BOUND = Buffer.byteLength(CONTENT) + 4 + 3;
const WORST_CASE = (INPUT_BOUND * PRICE.input + MAX_TOKENS * PRICE.output) / 1e6;

const think = (token: string) =>
  call(ctx.server.url, "POST", "/v1/reasoning/think", {
    token,
    body: { messages: [{ role: "user", content: CONTENT }], pinned_model: "liar", max_tokens: MAX_TOKENS },
  });
const callOf = async (callId: string) =>
  (await call(ctx.server.url, "GET", `/v1/reasoning/calls/${callId}`, { token: ctx.root.token })).body;
const anomalies = async () =>
  ((await metricsRegistry().getSingleMetric("svc_model_usage_anomalies_total")?.get())?.values ?? [])
    .filter((v) => v.labels.provider === "lying")
    .reduce((n, v) => n + v.value, 0);

beforeAll(async () => {
  peer = await startFakeOpenAI(["liar"]);
  process.env.SVC_OUTBOUND_ALLOW = peer.hostPort;
  resetConfig();
  process.env.SVC_MODEL_PROVIDERS = JSON.stringify([
    {
      name: "lying",
      kind: "openai-compatible",
      base_url: peer.baseUrl,
      api_key: "sk-test",
      models: [
        {
          model_id: "liar",
          input_cost_per_million: PRICE.input,
          output_cost_per_million: PRICE.output,
          capabilities: caps,
        },
      ],
    },
  ]);
  resetReasoningSettings();
  forgetDiscoveredModels();
  forgetRoutingCatalogue();
});
afterAll(async () => {
  delete process.env.SVC_MODEL_PROVIDERS;
  resetReasoningSettings();
  forgetDiscoveredModels();
  forgetRoutingCatalogue();
  await peer.close();
});

describe("usage a provider reports", () => {
  it("negative input tokens neither record a negative cost nor give a budget its money back", async () => {
    const passport = await call(ctx.server.url, "POST", "/v1/passports", {
      token: ctx.root.token,
      body: { type: "agent", name: "budgeted", public_key: ed25519Jwk() },
    });
    const limit = WORST_CASE * 2.5;
    const key = await call(ctx.server.url, "POST", "/v1/delegation-tokens", {
      token: ctx.root.token,
      body: {
        delegate_did: passport.body.did,
        capabilities: ["svc_api:reasoning:think"],
        duration_seconds: 600,
        budget: { limit_usd: limit, period: "total" },
      },
    });
    expect(key.status).toBe(201);
    peer.setReportedUsage({ prompt_tokens: -1e7, completion_tokens: MAX_TOKENS });
    const before = await anomalies();
    const answers = [];
    try {
      for (let i = 0; i < 6; i++) answers.push(await think(key.body.token));
    } finally {
      peer.setReportedUsage(undefined);
    }
    // Each admitted call costs its output (100 tokens, 2e-4 USD), its input counted as 0: two fit
    // in 2.5 worst cases (2.4e-4 each), the third does not. Trusting -1e7 recorded -10 USD a call
    // and admitted all six.
    expect(answers.map((a) => a.status)).toEqual([200, 200, 402, 402, 402, 402]);
    const first = answers[0]!.body;
    expect(first.data.usage).toEqual({ inputTokens: 0, outputTokens: MAX_TOKENS, totalTokens: MAX_TOKENS });
    expect(first.metadata.costUsd).toBeCloseTo((MAX_TOKENS * PRICE.output) / 1e6, 12);
    const recorded = await callOf(first.metadata.call_id);
    expect(recorded).toMatchObject({ input_tokens: 0, output_tokens: MAX_TOKENS });
    expect(recorded.cost_usd).toBeGreaterThanOrEqual(0);
    expect(recorded.reason).toMatch(
      /usage anomaly: liar reported -10000000 input and 100 output tokens, counted as 0 and 100/,
    );
    const db = await database();
    const charges = await db.read.budgetCharge.findMany({ where: { budgetDelegationId: key.body.delegation_id } });
    expect(charges.length).toBe(2);
    for (const c of charges) expect(c.amountUsd).toBeGreaterThanOrEqual(0);
    expect(await anomalies()).toBe(before + 2);
  });

  it("1e15 tokens are counted as what the call could have used: its input bound and max_tokens", async () => {
    peer.setReportedUsage({ prompt_tokens: 1e15, completion_tokens: 1e15 });
    let res;
    try {
      res = await think(ctx.root.token);
    } finally {
      peer.setReportedUsage(undefined);
    }
    expect(res.status).toBe(200);
    expect(res.body.data.usage).toEqual({
      inputTokens: INPUT_BOUND,
      outputTokens: MAX_TOKENS,
      totalTokens: INPUT_BOUND + MAX_TOKENS,
    });
    expect(res.body.metadata.costUsd).toBeCloseTo(WORST_CASE, 12);
    // svc_model_spend_usd is the sum of the recorded costs, by provider.
    const db = await database();
    const spend = await db.read.reasoningCall.aggregate({ where: { provider: "lying" }, _sum: { costUsd: true } });
    expect(spend._sum.costUsd).toBeLessThan(1);
    expect((await callOf(res.body.metadata.call_id)).reason).toMatch(/usage anomaly/);
  });

  it("honest usage is counted as reported, with no anomaly", async () => {
    const before = await anomalies();
    const res = await think(ctx.root.token);
    expect(res.status).toBe(200);
    // The peer counts words + 3 per message, well inside the bounds.
    expect(res.body.data.usage.inputTokens).toBe(CONTENT.split(" ").length + 3);
    expect((await callOf(res.body.metadata.call_id)).reason).not.toMatch(/anomaly/);
    expect(await anomalies()).toBe(before);
  });
});
