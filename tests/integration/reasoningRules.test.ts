import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resetConfig } from "@/server/config";
import { database } from "@/server/db/client";
import { DomainError } from "@/server/errors";
import { learningApplier } from "@/server/learning/appliers";
import { forgetDiscoveredModels } from "@/server/reasoning/discoverModels";
import { forgetRoutingCatalogue } from "@/server/reasoning/routingCatalogue";
import { resetReasoningSettings } from "@/server/reasoning/settings";
import { rootOrgDid } from "@/server/setup/bootstrap";
import { apiKey, call, useTestServer } from "./harness";
import { consoleMember } from "./consoleMembers";
import { startFakeOpenAI, type FakeOpenAI } from "./peers/fakeOpenAI";

/**
 * Routing rules: per organization, "for this task (and complexity) prefer this model". The
 * router honours them (and says so), the console lists, sets and removes them, and the learning
 * applier of kind `routing_rule` validates, reads, applies and rolls back.
 */
/** What a server-side tRPC caller's refusal carries: the domain error (status, code, errors[]). */
const causeOf = (e: unknown) => (e as { cause: DomainError }).cause;
const notRefused = (): never => {
  throw new Error("expected a refusal");
};
const ctx = useTestServer();
let peer: FakeOpenAI;

const caps = (score: number, over: Record<string, number> = {}) => ({
  reasoning: score,
  coding: score,
  summarization: score,
  multilingual: score,
  math_reasoning: score,
  creative_writing: score,
  instruction_following: score,
  ...over,
});
const MODELS = [
  { model_id: "small", input_cost_per_million: 1, output_cost_per_million: 2, capabilities: caps(0.6) },
  { model_id: "mid", input_cost_per_million: 3, output_cost_per_million: 6, capabilities: caps(0.75) },
  { model_id: "large", input_cost_per_million: 10, output_cost_per_million: 30, capabilities: caps(0.9) },
];
const msg = [{ role: "user", content: "Refactor this function." }];
const think = (body: Record<string, unknown>, token = ctx.root.token) =>
  call(ctx.server.url, "POST", "/v1/reasoning/think", { token, body: { messages: msg, max_tokens: 50, ...body } });

async function inTx<T>(
  fn: (tx: Parameters<Parameters<Awaited<ReturnType<typeof database>>["writeTx"]>[0]>[0]) => Promise<T>,
) {
  const db = await database();
  return db.writeTx(fn);
}
async function refusal(p: Promise<unknown>): Promise<DomainError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof DomainError) return e;
    throw e;
  }
  throw new Error("expected a refusal");
}

beforeAll(async () => {
  peer = await startFakeOpenAI(["small", "mid", "large"]);
  process.env.SVC_OUTBOUND_ALLOW = peer.hostPort;
  process.env.SVC_MODEL_PROVIDERS = JSON.stringify([
    { name: "fake", kind: "openai-compatible", base_url: peer.baseUrl, api_key: "sk-test", models: MODELS },
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

describe("routing rules", () => {
  it("the console sets one; the router prefers its model and says a rule chose it; removing it restores routing", async () => {
    const admin = await consoleMember("admin");
    // unlimited for coding picks the best quality: large.
    expect((await think({ task: "coding", budget: "unlimited" })).body.metadata.routingDecision.selected).toBe("large");
    const set = await admin.caller.reasoning.rules.set({ target: "coding", model: "fake/mid" });
    expect(set).toEqual({ target: "coding", model: "fake/mid" });
    const res = await think({ task: "coding", budget: "unlimited" });
    expect(res.status).toBe(200);
    expect(res.body.metadata.routingDecision.selected).toBe("mid");
    expect(res.body.metadata.routingDecision.reason).toContain("chosen by the routing rule coding");
    // The fallbacks follow in their ranked order.
    expect(res.body.metadata.routingDecision.alternatives[0]).toBe("large");
    // Another task is not affected.
    expect((await think({ task: "math", budget: "unlimited" })).body.metadata.routingDecision.selected).toBe("large");
    // A complexity's own rule wins over the task's.
    await admin.caller.reasoning.rules.set({ target: "coding:simple", model: "small" });
    expect(
      (await think({ task: "coding", complexity: "simple", budget: "unlimited" })).body.metadata.routingDecision
        .selected,
    ).toBe("small");
    expect(
      (await think({ task: "coding", complexity: "complex", budget: "unlimited" })).body.metadata.routingDecision
        .selected,
    ).toBe("mid");
    const list = await admin.caller.reasoning.rules.list();
    expect(list.data.map((r) => [r.target, r.model, r.model_status, r.complexity])).toEqual([
      ["coding", "fake/mid", "active", null],
      ["coding:simple", "small", "active", "simple"],
    ]);
    expect(list.data[0]!.set_by).toBe(admin.did);
    // A pinned model still wins over a rule.
    expect((await think({ task: "coding", pinned_model: "large" })).body.metadata.routingDecision.selected).toBe(
      "large",
    );
    await admin.caller.reasoning.rules.remove({ target: "coding" });
    await admin.caller.reasoning.rules.remove({ target: "coding:simple" });
    expect((await think({ task: "coding", budget: "unlimited" })).body.metadata.routingDecision.selected).toBe("large");
    expect((await admin.caller.reasoning.rules.list()).data).toEqual([]);
  });

  it("a rule whose model does not fit the budget, or is not active, is passed over and the reason says why", async () => {
    const admin = await consoleMember("admin");
    await admin.caller.reasoning.rules.set({ target: "reasoning", model: "large" });
    const passport = await call(ctx.server.url, "POST", "/v1/passports", {
      token: ctx.root.token,
      body: { type: "agent", name: "frugal", public_key: (await import("./harness")).ed25519Jwk() },
    });
    // large's worst case for this call is about 0.0015 USD; mid's about 0.0003.
    const grant = await call(ctx.server.url, "POST", "/v1/delegation-tokens", {
      token: ctx.root.token,
      body: {
        delegate_did: passport.body.did,
        capabilities: ["svc_api:reasoning:think"],
        duration_seconds: 600,
        budget: { limit_usd: 0.001, period: "total" },
      },
    });
    expect(grant.status).toBe(201);
    const res = await think({ task: "reasoning", budget: "optimize" }, grant.body.token);
    expect(res.status).toBe(200);
    expect(res.body.metadata.routingDecision.selected).not.toBe("large");
    expect(res.body.metadata.routingDecision.reason).toContain(
      "routing rule reasoning prefers large, which may cost up to",
    );
    // Deprecated by the organization: passed over too.
    const db = await database();
    await db.writeTx((tx) =>
      tx.reasoningModel.create({ data: { orgDid: ctx.root.orgDid, modelKey: "fake/large", status: "deprecated" } }),
    );
    forgetRoutingCatalogue();
    const again = await think({ task: "reasoning", budget: "unlimited" });
    expect(again.body.metadata.routingDecision.selected).toBe("mid");
    expect(again.body.metadata.routingDecision.reason).toContain("prefers large, which is deprecated: passed over");
    await db.writeTx((tx) => tx.reasoningModel.deleteMany({ where: { orgDid: ctx.root.orgDid } }));
    await admin.caller.reasoning.rules.remove({ target: "reasoning" });
    forgetRoutingCatalogue();
  });

  it("the console refuses an unknown model (errors[]), an unknown target (404), a malformed one (400), and a non-admin (403)", async () => {
    const admin = await consoleMember("admin");
    const unknownModel = await admin.caller.reasoning.rules
      .set({ target: "coding", model: "nope" })
      .then(notRefused, causeOf);
    expect(unknownModel).toMatchObject({
      status: 400,
      extra: { errors: [{ field: "model", code: "UNKNOWN_MODEL" }] },
    });
    const unknownTask = await admin.caller.reasoning.rules
      .set({ target: "poetry", model: "small" })
      .then(notRefused, causeOf);
    expect(unknownTask.status).toBe(404);
    const malformed = await admin.caller.reasoning.rules
      .set({ target: "coding:simple:x", model: "small" })
      .then(notRefused, causeOf);
    expect(malformed).toMatchObject({
      status: 400,
      extra: { errors: [{ field: "target", code: "INVALID_TARGET" }] },
    });
    const missing = await admin.caller.reasoning.rules.remove({ target: "math" }).then(notRefused, causeOf);
    expect(missing.status).toBe(404);
    const viewer = await consoleMember("viewer");
    const refused = await viewer.caller.reasoning.rules
      .set({ target: "coding", model: "small" })
      .then(notRefused, causeOf);
    expect(refused.status).toBe(403);
    expect(await viewer.caller.reasoning.rules.list()).toEqual({ data: [] });
  });
});

describe("the routing_rule learning applier", () => {
  it("is registered by the composition root", () => {
    expect(learningApplier("routing_rule")?.kind).toBe("routing_rule");
  });

  it("validates the target and the proposed state, with JSON pointers", async () => {
    const applier = learningApplier("routing_rule")!;
    const org = ctx.root.orgDid;
    await inTx((tx) => applier.validate(tx, org, "coding", { model: "small" }));
    await inTx((tx) => applier.validate(tx, org, "coding:complex", { model: null }));
    const badModel = await refusal(inTx((tx) => applier.validate(tx, org, "coding", { model: "nope" })));
    expect(badModel.status).toBe(400);
    expect(badModel.extra.errors).toEqual([
      expect.objectContaining({ field: "/proposed/model", code: "UNKNOWN_MODEL" }),
    ]);
    const badShape = await refusal(inTx((tx) => applier.validate(tx, org, "coding", { model: 3 })));
    expect(badShape.extra.errors).toEqual([expect.objectContaining({ field: "/proposed/model" })]);
    const extra = await refusal(inTx((tx) => applier.validate(tx, org, "coding", { model: "small", why: 1 })));
    expect(extra.extra.errors).toEqual([expect.objectContaining({ field: "/proposed", code: "UNKNOWN_FIELD" })]);
    const unknownTarget = await refusal(inTx((tx) => applier.validate(tx, org, "poetry", { model: "small" })));
    expect(unknownTarget.status).toBe(404);
    const malformed = await refusal(inTx((tx) => applier.validate(tx, org, "Coding!", { model: "small" })));
    expect(malformed.status).toBe(400);
    expect(malformed.extra.errors).toEqual([expect.objectContaining({ field: "/target" })]);
  });

  it("reads, applies and rolls back exactly (a rule, then none), and the router follows", async () => {
    const applier = learningApplier("routing_rule")!;
    const org = ctx.root.orgDid;
    const by = (action: "apply" | "rollback") => ({ actorDid: "did:svc:reviewer", proposalId: "lrn_test1", action });
    expect(await inTx((tx) => applier.current(tx, org, "summarization:medium"))).toEqual({ model: null });
    const previous = await inTx((tx) => applier.current(tx, org, "summarization:medium"));
    await inTx((tx) => applier.apply(tx, org, "summarization:medium", { model: "small" }, by("apply")));
    expect(await inTx((tx) => applier.current(tx, org, "summarization:medium"))).toEqual({ model: "small" });
    const db = await database();
    expect(
      await db.read.routingRule.findUnique({
        where: { orgDid_task_complexity: { orgDid: org, task: "summarization", complexity: "medium" } },
      }),
    ).toMatchObject({ model: "small", setBy: "did:svc:reviewer", proposalId: "lrn_test1" });
    const routed = await think({ task: "summarization", budget: "unlimited" });
    expect(routed.body.metadata.routingDecision.selected).toBe("small");
    expect(routed.body.metadata.routingDecision.reason).toContain("routing rule summarization:medium");
    // A second proposal replaces it; rolling that back restores the first exactly.
    const before = await inTx((tx) => applier.current(tx, org, "summarization:medium"));
    await inTx((tx) => applier.apply(tx, org, "summarization:medium", { model: "mid" }, by("apply")));
    await inTx((tx) => applier.apply(tx, org, "summarization:medium", before, by("rollback")));
    expect(await inTx((tx) => applier.current(tx, org, "summarization:medium"))).toEqual({ model: "small" });
    // And rolling the first back leaves no rule.
    await inTx((tx) => applier.apply(tx, org, "summarization:medium", previous, by("rollback")));
    expect(await inTx((tx) => applier.current(tx, org, "summarization:medium"))).toEqual({ model: null });
    expect(await db.read.routingRule.count({ where: { orgDid: org } })).toBe(0);
    expect((await think({ task: "summarization", budget: "unlimited" })).body.metadata.routingDecision.selected).toBe(
      "large",
    );
  });

  it("keeps organizations apart", async () => {
    const applier = learningApplier("routing_rule")!;
    const db = await database();
    const root = (await rootOrgDid(db))!;
    await inTx((tx) =>
      applier.apply(
        tx,
        "did:svc:another-org",
        "coding",
        { model: "small" },
        {
          actorDid: "did:svc:x",
          proposalId: "lrn_x",
          action: "apply",
        },
      ),
    );
    expect(await inTx((tx) => applier.current(tx, root, "coding"))).toEqual({ model: null });
    expect(await inTx((tx) => applier.current(tx, "did:svc:another-org", "coding"))).toEqual({ model: "small" });
  });
});

describe("a prompt's recommended model", () => {
  it("an applied prompt_recommended_model proposal steers a call that names the prompt, and the reason says so", async () => {
    const api = (method: string, path: string, token: string, body?: unknown) =>
      call(ctx.server.url, method, path, { token, ...(body === undefined ? {} : { body }) });
    const published = await api("POST", "/v1/prompts/support.triage/versions", ctx.root.token, {
      meta: { id: "support.triage", namespace: "support", scope: "organization", description: "" },
      version: "1.0.0",
      content: "Triage this ticket: {{ticket}}",
    });
    expect(published.status, JSON.stringify(published.body)).toBe(201);
    const ask = { prompt: { key: "support.triage", inputs: { ticket: "printer on fire" } }, task: "general" };
    // optimize at medium complexity, no recommendation: the cheaper model wins on score.
    const before = await think({ ...ask, messages: [] });
    expect(before.status, JSON.stringify(before.body)).toBe(200);
    expect(before.body.metadata.routingDecision.selected).not.toBe("large");

    // Proposed by the organization's key, approved by another passport holding a token from another
    // of the operator's keys (one derived from the proposer's key would be the proposer's own), then applied.
    const passport = await api("POST", "/v1/passports", ctx.root.token, {
      type: "organization",
      name: "prompt-reviewer",
      public_key: (await import("./harness")).ed25519Jwk(),
    });
    const decider = await api("POST", "/v1/delegation-tokens", (await apiKey(["svc_api:*"])).token, {
      delegate_did: passport.body.did,
      capabilities: ["svc_api:learning:decide", "svc_api:learning:read"],
      duration_seconds: 600,
    });
    const proposal = await api("POST", "/v1/svcos/learning/proposals", ctx.root.token, {
      kind: "prompt_recommended_model",
      target: "support.triage",
      proposed: { recommended_model: "large" },
    });
    expect(proposal.status, JSON.stringify(proposal.body)).toBe(201);
    const approved = await api(
      "POST",
      `/v1/svcos/learning/proposals/${proposal.body.id}/approve`,
      decider.body.token,
      {},
    );
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    const applied = await api("POST", `/v1/svcos/learning/proposals/${proposal.body.id}/apply`, decider.body.token);
    expect(applied.status, JSON.stringify(applied.body)).toBe(200);

    const after = await think({ ...ask, messages: [] });
    expect(after.status, JSON.stringify(after.body)).toBe(200);
    expect(after.body.metadata.routingDecision.selected).toBe("large");
    expect(after.body.metadata.routingDecision.reason).toContain("recommended for prompt support.triage");
    // A pinned model still wins; a call without the prompt routes as before.
    expect((await think({ ...ask, messages: [], pinned_model: "small" })).body.metadata.routingDecision.selected).toBe(
      "small",
    );
    expect((await think({ task: "general" })).body.metadata.routingDecision.selected).not.toBe("large");
    // Rolled back, the recommendation is gone and routing is as before.
    const rolled = await api("POST", `/v1/svcos/learning/proposals/${proposal.body.id}/rollback`, decider.body.token);
    expect(rolled.status, JSON.stringify(rolled.body)).toBe(200);
    expect((await think({ ...ask, messages: [] })).body.metadata.routingDecision.selected).toBe(
      before.body.metadata.routingDecision.selected,
    );
  });
});
