import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resetConfig } from "@/server/config";
import { database } from "@/server/db/client";
import type { DomainError } from "@/server/errors";
import { forgetDiscoveredModels } from "@/server/reasoning/discoverModels";
import { forgetRoutingCatalogue } from "@/server/reasoning/routingCatalogue";
import { resetReasoningSettings } from "@/server/reasoning/settings";
import { shutdownSandbox } from "@/server/sandbox/pool";
import { startWorker, type Worker } from "@/server/worker/worker";
import { deployAndWait } from "./agentsHelpers";
import { consoleMember } from "./consoleMembers";
import { call, ed25519Jwk, useTestServer, waitFor } from "./harness";
import { startFakeAnthropic, type FakeAnthropic } from "./peers/fakeAnthropic";
import { startFakeOpenAI, type FakeOpenAI } from "./peers/fakeOpenAI";

/**
 * Reasoning beyond the /v1 call: an Anthropic provider (through @ai-sdk/anthropic, against a
 * loopback Messages endpoint), providers added and removed through the console's procedures,
 * `ctx.reason` from a sandboxed agent run under the run's delegation and budget, and the request
 * schema's remaining bounds.
 */
process.env.SVC_SANDBOX_THREADS = "2";
process.env.SVC_EXECUTION_RETRY_BASE_MS = "20";

/** What a server-side tRPC caller's refusal carries: the domain error (status, code, errors[]). */
const causeOf = (e: unknown) => (e as { cause: DomainError }).cause;
const notRefused = (): never => {
  throw new Error("expected a refusal");
};
const ctx = useTestServer();
let openai: FakeOpenAI;
let anthropic: FakeAnthropic;
let worker: Worker;

const caps = { reasoning: 0.8, coding: 0.8, instruction_following: 0.8 };
function useProviders(value: unknown[] | undefined) {
  if (value === undefined) delete process.env.SVC_MODEL_PROVIDERS;
  else process.env.SVC_MODEL_PROVIDERS = JSON.stringify(value);
  resetReasoningSettings();
  forgetDiscoveredModels();
  forgetRoutingCatalogue();
}
const openaiProvider = () => ({
  name: "fake",
  kind: "openai-compatible",
  base_url: openai.baseUrl,
  api_key: "sk-test",
  models: [{ model_id: "small", input_cost_per_million: 1, output_cost_per_million: 2, capabilities: caps }],
});
const think = (body: Record<string, unknown>, token = ctx.root.token) =>
  call(ctx.server.url, "POST", "/v1/reasoning/think", { token, body });
const msg = [{ role: "user", content: "Say hello." }];

beforeAll(async () => {
  openai = await startFakeOpenAI(["small"]);
  anthropic = await startFakeAnthropic(["claude-3-5-haiku", "claude-sonnet-4"]);
  process.env.SVC_OUTBOUND_ALLOW = `${openai.hostPort},${anthropic.hostPort}`;
  resetConfig();
  worker = startWorker({ log: () => undefined, tasks: [] });
});
afterAll(async () => {
  useProviders(undefined);
  await worker.stop();
  await shutdownSandbox();
  await openai.close();
  await anthropic.close();
});

describe("an Anthropic provider", () => {
  it("lists its models from GET /v1/models and answers through the Messages API, usage and cost from the price table", async () => {
    useProviders([{ name: "claude", kind: "anthropic", base_url: anthropic.baseUrl, api_key: "sk-ant-test" }]);
    const models = await call(ctx.server.url, "GET", "/v1/reasoning/models", { token: ctx.root.token });
    expect(models.status).toBe(200);
    expect(models.body.models.map((m: { model_id: string }) => m.model_id).sort()).toEqual([
      "claude-3-5-haiku",
      "claude-sonnet-4",
    ]);
    const haiku = models.body.models.find((m: { model_id: string }) => m.model_id === "claude-3-5-haiku");
    const res = await think({
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Why do delegations expire?" },
      ],
      pinned_model: "claude-3-5-haiku",
      temperature: 0.5,
      max_tokens: 30,
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      model: "claude-3-5-haiku",
      provider: "claude",
      text: "a0 a1 a2 a3",
      usage: { inputTokens: 2 + 3 + 4 + 3, outputTokens: 4, totalTokens: 16 },
    });
    const sent = anthropic.requests.at(-1)!;
    expect(sent.headers["x-api-key"]).toBe("sk-ant-test");
    expect(sent.headers["anthropic-version"]).toBeTruthy();
    expect(sent.body).toMatchObject({ model: "claude-3-5-haiku", max_tokens: 30, temperature: 0.5 });
    const expected = (12 * haiku.cost.input_cost_per_million + 4 * haiku.cost.output_cost_per_million) / 1_000_000;
    expect(res.body.metadata.costUsd).toBeCloseTo(expected, 12);
  });
});

describe("providers through the console's procedures", () => {
  it("an admin adds one (key sealed, never shown), its models join the catalogue and answer; removing it takes them out", async () => {
    useProviders(undefined);
    const admin = await consoleMember("admin");
    expect((await admin.caller.reasoning.providers.list()).data).toEqual([]);
    const added = await admin.caller.reasoning.providers.add({
      name: "console-fake",
      kind: "openai-compatible",
      base_url: openai.baseUrl,
      api_key: "sk-console-secret",
      models: [{ model_id: "small", input_cost_per_million: 1, output_cost_per_million: 2 }],
    });
    expect(added).toMatchObject({ name: "console-fake", source: "console", has_api_key: true });
    expect(JSON.stringify(added)).not.toContain("sk-console-secret");
    const db = await database();
    const row = await db.read.reasoningProvider.findUniqueOrThrow({ where: { id: added.id! } });
    expect(row.apiKeySealed).toBeTruthy();
    expect(row.apiKeySealed).not.toContain("sk-console-secret");
    const listed = await admin.caller.reasoning.providers.list();
    expect(listed.data.map((p) => p.name)).toEqual(["console-fake"]);
    const res = await think({ messages: msg, max_tokens: 5 });
    expect(res.status).toBe(200);
    expect(res.body.data.provider).toBe("console-fake");
    expect(openai.requests.length).toBeGreaterThan(0);
    // A name already taken is refused; a viewer may list but not add or remove.
    const dup = await admin.caller.reasoning.providers
      .add({ name: "console-fake", kind: "openai-compatible", base_url: openai.baseUrl })
      .then(notRefused, causeOf);
    expect(dup.status).toBe(409);
    const viewer = await consoleMember("viewer");
    expect((await viewer.caller.reasoning.providers.list()).data).toHaveLength(1);
    const refused = await viewer.caller.reasoning.providers.remove({ id: added.id! }).then(notRefused, causeOf);
    expect(refused.status).toBe(403);

    expect(await admin.caller.reasoning.providers.remove({ id: added.id! })).toEqual({ id: added.id, removed: true });
    expect((await admin.caller.reasoning.providers.list()).data).toEqual([]);
    const none = await think({ messages: msg });
    expect(none.status).toBe(503);
    const again = await admin.caller.reasoning.providers.remove({ id: added.id! }).then(notRefused, causeOf);
    expect(again.status).toBe(404);
  });
});

describe("ctx.reason from a sandboxed agent run", () => {
  const REASON = `export default async (input, ctx) => {
    try {
      const answer = await ctx.reason({ messages: [{ role: "user", content: "Plan the day." }], pinned_model: "small", max_tokens: 7, entity_id: "agent-team" });
      return { text: answer.data.text, call_id: answer.metadata.call_id, cost: answer.metadata.costUsd };
    } catch (e) { return { refused: e.name, message: e.message }; }
  }`;
  const manifest = {
    capabilities: [
      { id: "svc_api:agents:read", evidence: ["reads agents"] },
      { id: "svc_api:reasoning:think", evidence: ["asks a model"] },
    ],
  };
  async function finished(id: string) {
    return waitFor(`execution ${id}`, async () => {
      const res = await call(ctx.server.url, "GET", `/v1/executions/${id}`, { token: ctx.root.token });
      return ["completed", "failed", "cancelled"].includes(res.body.status) ? res.body : undefined;
    });
  }
  const invoke = async (agentId: string, token = ctx.root.token) => {
    const inv = await call(ctx.server.url, "POST", `/v1/agents/${agentId}/invoke`, { token, body: {} });
    expect(inv.status, JSON.stringify(inv.body)).toBeLessThan(300);
    return finished(inv.body.id ?? inv.body.data?.id ?? inv.body.execution_id);
  };

  it("makes the same governed call under the run's delegation: recorded, with its provenance, charged to the run", async () => {
    useProviders([openaiProvider()]);
    const agentId = await deployAndWait(ctx.server.url, ctx.root.token, "reasoner", REASON, manifest);
    const done = await invoke(agentId);
    expect(done.status).toBe("completed");
    expect(done.result_json.text).toBe("w0 w1 w2 w3 w4");
    const db = await database();
    const run = await db.read.asyncExecution.findUniqueOrThrow({ where: { id: done.id } });
    const recorded = await db.read.reasoningCall.findUniqueOrThrow({ where: { id: done.result_json.call_id } });
    expect(recorded).toMatchObject({
      status: "succeeded",
      delegationId: run.delegationId,
      entityId: "agent-team",
      model: "small",
    });
    expect(recorded.costUsd).toBeCloseTo(done.result_json.cost, 12);
    const record = await db.read.provenanceRecord.findUniqueOrThrow({ where: { id: recorded.provenanceId! } });
    expect(record).toMatchObject({
      operation: "POST /v1/reasoning/think",
      decision: "allowed",
      delegationId: run.delegationId,
      resourceId: recorded.id,
    });
  });

  it("is bounded by the invoker's budget (budget_exceeded in the run), and refused without the capability", async () => {
    useProviders([openaiProvider()]);
    const agentId = await deployAndWait(ctx.server.url, ctx.root.token, "reasoner-budgeted", REASON, manifest);
    const passport = await call(ctx.server.url, "POST", "/v1/passports", {
      token: ctx.root.token,
      body: { type: "agent", name: "poor invoker", public_key: ed25519Jwk() },
    });
    const grant = await call(ctx.server.url, "POST", "/v1/delegation-tokens", {
      token: ctx.root.token,
      body: {
        delegate_did: passport.body.did,
        capabilities: ["svc_api:agents:invoke", "svc_api:agents:read", "svc_api:reasoning:think"],
        duration_seconds: 600,
        budget: { limit_usd: 0.000001, period: "total" },
      },
    });
    expect(grant.status).toBe(201);
    const poor = await invoke(agentId, grant.body.token);
    expect(poor.result_json).toMatchObject({ refused: "budget_exceeded" });

    const without = await deployAndWait(ctx.server.url, ctx.root.token, "reasoner-unallowed", REASON);
    const refused = await invoke(without);
    expect(refused.result_json.refused).toBeTruthy();
    expect(refused.result_json.message).toContain("svc_api:reasoning:think");
  });
});

describe("the request schema's remaining bounds", () => {
  it.each([
    [{ messages: msg, max_tokens: 1_000_001 }, "max_tokens", "OUT_OF_RANGE"],
    [{ messages: msg, temperature: "0.5" }, "temperature", "INVALID_TYPE"],
    [{ messages: msg, pinned_model: "" }, "pinned_model", "OUT_OF_RANGE"],
    [{ messages: msg, entity_id: "e".repeat(201) }, "entity_id", "OUT_OF_RANGE"],
    [{ messages: Array.from({ length: 201 }, () => msg[0]) }, "messages", "OUT_OF_RANGE"],
    [{ messages: [{ role: "user", content: "x", name: "bob" }] }, "messages.0.name", "UNKNOWN_FIELD"],
    [{ messages: [{ role: "User", content: "x" }] }, "messages.0.role", "INVALID_ENUM"],
  ])("refuses %j with errors[]", async (body, field, code) => {
    useProviders([openaiProvider()]);
    const before = openai.requests.length;
    const res = await think(body);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field, code })]));
    expect(openai.requests.length).toBe(before);
  });

  it("accepts the bounds themselves: temperature 0 and 2, max_tokens 1", async () => {
    useProviders([openaiProvider()]);
    for (const body of [
      { temperature: 0, max_tokens: 1 },
      { temperature: 2, max_tokens: 1 },
    ]) {
      const res = await think({ messages: msg, ...body });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.data.usage.outputTokens).toBe(1);
      expect(openai.requests.at(-1)).toMatchObject({ temperature: body.temperature, max_tokens: 1 });
    }
  });
});
