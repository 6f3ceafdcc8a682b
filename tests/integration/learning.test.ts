import { beforeAll, describe, expect, it } from "vitest";
import { respondToApproval } from "@/server/approvals/respondToApproval";
import { database, type Db } from "@/server/db/client";
import { delegationPrincipal } from "@/server/identity/authenticate";
import { newId } from "@/server/ids";
import { registerLearningApplier, type LearningApplier, type LearningState } from "@/server/learning/appliers";
import { proposeFromAffinity } from "@/server/learning/proposeFromAffinity";
import { promptAffinitySource } from "@/server/learning/tasks";
import { affinityWindowRef } from "@/server/learning/schemas";
import { ValidationFailed, NotFound } from "@/server/errors";
import { call, ed25519Jwk, lastProvenance, secondOrg, useTestServer } from "./harness";

/**
 * Learning proposals (issue 19 items 6–7). Routing rules here belong to a test applier kept in
 * memory (registered over whatever the composition root registered; the reasoning area tests its
 * own); prompt targets are the prompt registry's own (server/prompts/learningAppliers.ts).
 */
process.env.SVC_MODEL_PROVIDERS = JSON.stringify([
  {
    name: "loopback",
    kind: "openai-compatible",
    base_url: "http://127.0.0.1:9/v1",
    models: [{ model_id: "model-a" }, { model_id: "model-b" }],
  },
]);
const t = useTestServer();
const api = (method: string, path: string, token: string, body?: unknown) =>
  call(t.server.url, method, path, { token, ...(body === undefined ? {} : { body }) });

/** An in-memory applier: targets `known-*` exist; a state must be an object without `bad`. */
function memoryApplier(
  kind: LearningApplier["kind"],
  initial: (target: string) => LearningState,
): LearningApplier & {
  states: Map<string, string>;
  applied: { action: string; state: string }[];
} {
  const states = new Map<string, string>();
  const applied: { action: string; state: string }[] = [];
  return {
    kind,
    states,
    applied,
    async validate(_db: Db, _org, target, proposed) {
      if (!target.startsWith("known-")) throw NotFound("target", target);
      if ("bad" in proposed)
        throw ValidationFailed([{ field: "proposed.bad", code: "OUT_OF_RANGE", message: "not a state this takes" }]);
    },
    async current(_db, org, target) {
      return JSON.parse(states.get(`${org}|${target}`) ?? JSON.stringify(initial(target)));
    },
    async apply(_db, org, target, state, by) {
      states.set(`${org}|${target}`, JSON.stringify(state));
      applied.push({ action: by.action, state: JSON.stringify(state) });
    },
  };
}

const routing = memoryApplier("routing_rule", () => ({
  task: "summarize",
  model: "model-a",
  weights: { quality: 0.7, cost: 0.3 },
  note: "élan ✓",
}));
registerLearningApplier(routing);

/** A passport of the root organization and a delegation token issued to it (its own actor). */
async function actor(capabilities: string[]) {
  const passport = await api("POST", "/v1/passports", t.root.token, {
    type: "organization",
    name: `actor-${Math.random().toString(36).slice(2, 8)}`,
    public_key: ed25519Jwk(),
  });
  expect(passport.status, JSON.stringify(passport.body)).toBe(201);
  const token = await api("POST", "/v1/delegation-tokens", t.root.token, {
    delegate_did: passport.body.did,
    capabilities,
    duration_seconds: 1800,
  });
  expect(token.status, JSON.stringify(token.body)).toBe(201);
  return {
    did: passport.body.did as string,
    token: token.body.token as string,
    delegationId: token.body.delegation_id,
  };
}

let proposer: Awaited<ReturnType<typeof actor>>;
let decider: Awaited<ReturnType<typeof actor>>;
let inboxApprover: Awaited<ReturnType<typeof actor>>;
let reader: Awaited<ReturnType<typeof actor>>;
beforeAll(async () => {
  proposer = await actor(["svc_api:learning:propose", "svc_api:learning:read", "svc_api:learning:decide"]);
  decider = await actor(["svc_api:learning:decide", "svc_api:learning:read"]);
  inboxApprover = await actor(["svc_api:approvals:respond", "svc_api:approvals:read"]);
  reader = await actor(["svc_api:learning:read"]);
});

/** A recorded reasoning call of `model` for `promptKey` in the root organization, `agoMs` ago. */
async function seedCall(model: string, promptKey = "known-prompt", agoMs = 60_000) {
  const db = await database();
  const at = new Date(Date.now() - agoMs);
  await db.writeTx((tx) =>
    tx.reasoningCall.create({
      data: {
        id: newId("rsn"),
        orgDid: t.root.orgDid,
        task: "summarize",
        complexity: "low",
        budgetMode: "optimize",
        model,
        promptKey,
        promptVersion: "1.0.0",
        status: "succeeded",
        reason: "test",
        alternatives: [],
        requestId: newId("req"),
        createdAt: at,
      },
    }),
  );
  return at;
}

let targets = 0;
const freshTarget = () => `known-rule-${++targets}`;
const propose = (token: string, body: Record<string, unknown>) =>
  api("POST", "/v1/svcos/learning/proposals", token, body);
const routingProposal = (target = freshTarget(), over: Record<string, unknown> = {}) => ({
  kind: "routing_rule",
  target,
  proposed: { task: "summarize", model: "model-b", weights: { quality: 0.9, cost: 0.1 }, note: "élan ✓" },
  ...over,
});
const act = (id: string, action: string, token: string, body?: unknown) =>
  api("POST", `/v1/svcos/learning/proposals/${id}/${action}`, token, body);

describe("POST /v1/svcos/learning/proposals", () => {
  it("records a pending proposal with previous = the target's state now, raises its approval request, records the call and puts learning.proposed on the bus", async () => {
    const target = freshTarget();
    const res = await propose(
      proposer.token,
      routingProposal(target, { explain: { source: "admin", confidence: 0.6 } }),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({
      kind: "routing_rule",
      target,
      proposed: { model: "model-b" },
      previous: { task: "summarize", model: "model-a", weights: { quality: 0.7, cost: 0.3 } },
      approval_state: "pending",
      proposed_by: proposer.did,
      origin: "api",
      explain: { source: "admin", confidence: 0.6, approval_state: "pending", changed_by: proposer.did },
    });
    expect(res.body.id).toMatch(/^lrn_/);
    expect(res.body.approval_id).toMatch(/^apr_/);
    for (const key of [
      "id",
      "kind",
      "target",
      "proposed",
      "previous",
      "approval_state",
      "approval_id",
      "explain",
      "created_at",
    ])
      expect(res.body, key).toHaveProperty(key);

    const record = await lastProvenance();
    expect(record).toMatchObject({
      operation: "POST /v1/svcos/learning/proposals",
      resourceType: "learning_proposal",
      resourceId: res.body.id,
      capability: "svc_api:learning:propose",
      status: 201,
    });
    const got = await api("GET", `/v1/svcos/learning/proposals/${res.body.id}`, reader.token);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ id: res.body.id, provenance_id: record!.id, tuning_actions: [] });

    const approval = await api("GET", `/v1/approvals/${res.body.approval_id}`, t.root.token);
    expect(approval.body).toMatchObject({
      status: "pending",
      task_id: res.body.id,
      requester_passport_id: proposer.did,
      request_data: { proposal_id: res.body.id, kind: "routing_rule", target },
    });
    const events = await api("GET", "/v1/events?type=learning.proposed&limit=100", t.root.token);
    expect(events.body.data.map((e: { payload: { proposal_id: string } }) => e.payload.proposal_id)).toContain(
      res.body.id,
    );
  });

  it("strips unknown explain keys (and the service's own fields) but keeps the known ones", async () => {
    const res = await propose(
      proposer.token,
      routingProposal(undefined, {
        explain: {
          source: "user_explicit",
          scope: "org",
          rollback_target: "model-a",
          favourite_colour: "teal",
          nested: { deep: true },
          approval_state: "applied",
          changed_by: "did:key:z6MkSomebodyElse",
        },
      }),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(Object.keys(res.body.explain).sort()).toEqual(
      ["approval_state", "changed_at", "changed_by", "rollback_target", "scope", "source"].sort(),
    );
    expect(res.body.explain).toMatchObject({ approval_state: "pending", changed_by: proposer.did });
    const db = await database();
    const row = await db.read.learningProposal.findUniqueOrThrow({ where: { id: res.body.id } });
    expect(JSON.parse(row.explain!)).toEqual({ source: "user_explicit", scope: "org", rollback_target: "model-a" });
  });

  it("accepts evidence that resolves: a provenance record of the organization and a statistics window with recorded calls", async () => {
    const seed = await api("GET", "/v1/svcos/learning/proposals?limit=1", reader.token);
    expect(seed.status).toBe(200);
    const record = await lastProvenance();
    const at = await seedCall("model-b");
    const window = affinityWindowRef("known-prompt", "model-b", new Date(at.getTime() - 1000), new Date());
    const res = await propose(
      proposer.token,
      routingProposal(undefined, { explain: { evidence_refs: [record!.id, window] } }),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.explain.evidence_refs).toEqual([record!.id, window]);
  });

  it("refuses evidence that does not resolve: 400 naming each reference, nothing recorded", async () => {
    const other = await secondOrg(t.server.url, t.root.token, "Evidence tenant");
    await api("GET", "/v1/passports?limit=1", other.token);
    const foreign = await lastProvenance();
    expect(foreign!.orgDid).toBe(other.orgDid);
    const empty = affinityWindowRef(
      "known-prompt",
      "model-nobody-called",
      new Date(Date.now() - 3_600_000),
      new Date(),
    );
    const refs = [
      "prv_01m806mp6sfvrcy2y16xnb5cjk",
      foreign!.id,
      empty,
      "stats:prompt_affinity?prompt_key=x&model_id=y&from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z",
      "stats:prompt_affinity?prompt_key=x",
      "https://example.com/evidence",
    ];
    const before = await api("GET", "/v1/svcos/learning/proposals?limit=100", reader.token);
    const res = await propose(proposer.token, routingProposal(undefined, { explain: { evidence_refs: refs } }));
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.errors).toEqual([
      expect.objectContaining({ field: "explain.evidence_refs.0", code: "UNRESOLVED_EVIDENCE" }),
      expect.objectContaining({ field: "explain.evidence_refs.1", code: "UNRESOLVED_EVIDENCE" }),
      expect.objectContaining({ field: "explain.evidence_refs.2", code: "UNRESOLVED_EVIDENCE" }),
      expect.objectContaining({ field: "explain.evidence_refs.3", code: "INVALID_FORMAT" }),
      expect.objectContaining({ field: "explain.evidence_refs.4", code: "INVALID_FORMAT" }),
      expect.objectContaining({ field: "explain.evidence_refs.5", code: "INVALID_FORMAT" }),
    ]);
    const after = await api("GET", "/v1/svcos/learning/proposals?limit=100", reader.token);
    expect(after.body.data.length).toBe(before.body.data.length);
  });

  it.each([
    ["an unknown kind", { kind: "rename_everything" }, "kind", "INVALID_ENUM"],
    ["a confidence above 1", { explain: { confidence: 1.5 } }, "explain.confidence", "OUT_OF_RANGE"],
    ["an unknown source", { explain: { source: "gut_feeling" } }, "explain.source", "INVALID_ENUM"],
    [
      "51 evidence refs",
      { explain: { evidence_refs: Array(51).fill("prv_x") } },
      "explain.evidence_refs",
      "OUT_OF_RANGE",
    ],
    ["an expiry in the past", { explain: { expiry: "2020-01-01T00:00:00Z" } }, "explain.expiry", "OUT_OF_RANGE"],
    ["proposed over 8 KiB", { proposed: { blob: "x".repeat(9000) } }, "proposed", "OUT_OF_RANGE"],
    ["a proposed state the applier refuses", { proposed: { bad: 1 } }, "proposed.bad", "OUT_OF_RANGE"],
    ["an unknown top-level field", { why: "because" }, "why", "UNKNOWN_FIELD"],
  ])("refuses %s: 400 with errors[]", async (_name, over, field, code) => {
    const res = await propose(proposer.token, routingProposal(undefined, over));
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field, code })]));
  });

  it("an unknown target is the applier's 404", async () => {
    const unknown = await propose(proposer.token, routingProposal("nobody-knows-this"));
    expect(unknown.status).toBe(404);
  });

  it("needs svc_api:learning:propose to propose and svc_api:learning:read to read (403)", async () => {
    expect((await propose(reader.token, routingProposal())).status).toBe(403);
    expect((await api("GET", "/v1/svcos/learning/proposals", inboxApprover.token)).status).toBe(403);
  });

  it("lists newest first with a cursor, filtered by state, kind and target; another organization sees none of them (404 on get)", async () => {
    const target = freshTarget();
    const a = await propose(proposer.token, routingProposal(target));
    const b = await propose(proposer.token, routingProposal(target));
    const page1 = await api("GET", `/v1/svcos/learning/proposals?limit=1&target=${target}`, reader.token);
    expect(page1.body.data.map((p: { id: string }) => p.id)).toEqual([b.body.id]);
    expect(page1.body.pagination.has_more).toBe(true);
    const page2 = await api(
      "GET",
      `/v1/svcos/learning/proposals?limit=1&target=${target}&cursor=${encodeURIComponent(page1.body.pagination.next_cursor)}`,
      reader.token,
    );
    expect(page2.body.data.map((p: { id: string }) => p.id)).toEqual([a.body.id]);
    expect(page2.body.pagination).toEqual({ has_more: false, next_cursor: null });
    const pending = await api("GET", "/v1/svcos/learning/proposals?approval_state=applied&limit=100", reader.token);
    expect(pending.body.data.every((p: { approval_state: string }) => p.approval_state === "applied")).toBe(true);
    const bad = await api("GET", "/v1/svcos/learning/proposals?cursor=garbage", reader.token);
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatchObject({ field: "cursor", code: "INVALID_CURSOR" });

    const other = await secondOrg(t.server.url, t.root.token, "Learning tenant");
    const theirs = await api("GET", "/v1/svcos/learning/proposals?limit=100", other.token);
    expect(theirs.body.data).toEqual([]);
    expect((await api("GET", `/v1/svcos/learning/proposals/${a.body.id}`, other.token)).status).toBe(404);
    expect((await act(a.body.id, "approve", other.token)).status).toBe(404);
  });
});

describe("deciding, applying and rolling back", () => {
  it("pending → approved (direct approve) → applied → rolled_back, restoring the previous state byte for byte; every other move is 409 naming both states", async () => {
    const target = freshTarget();
    const before = JSON.stringify(
      await routing.current((await database()).read as unknown as Db, t.root.orgDid, target),
    );
    const p = await propose(proposer.token, routingProposal(target, { explain: { source: "admin", confidence: 0.9 } }));
    const id = p.body.id as string;

    // Not yet approved: apply and rollback are 409s naming both states.
    for (const [action, requested] of [
      ["apply", "applied"],
      ["rollback", "rolled_back"],
    ] as const) {
      const refused = await act(id, action, decider.token);
      expect(refused.status, action).toBe(409);
      expect(refused.body).toMatchObject({ current_state: "pending", requested_state: requested });
    }
    // The proposer cannot decide their own proposal.
    const own = await act(id, "approve", proposer.token);
    expect(own.status).toBe(403);
    expect(own.body.reason).toBe("own_request");
    // Without svc_api:learning:decide: 403.
    expect((await act(id, "approve", reader.token)).status).toBe(403);

    const approved = await act(id, "approve", decider.token, { comment: "clear gain" });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect(approved.body).toMatchObject({ approval_state: "approved", changed_by: decider.did });
    const approval = await api("GET", `/v1/approvals/${p.body.approval_id}`, t.root.token);
    expect(approval.body).toMatchObject({
      status: "approved",
      responded_by: decider.did,
      response_comment: "clear gain",
    });
    for (const action of ["approve", "reject", "rollback"]) {
      const again = await act(id, action, decider.token);
      expect(again.status, action).toBe(409);
      expect(again.body.current_state).toBe("approved");
    }

    const applied = await act(id, "apply", decider.token);
    expect(applied.status, JSON.stringify(applied.body)).toBe(200);
    expect(applied.body.approval_state).toBe("applied");
    expect(JSON.stringify(await routing.current(null as unknown as Db, t.root.orgDid, target))).toBe(
      JSON.stringify(p.body.proposed),
    );
    const applyRecord = await lastProvenance();
    expect(applyRecord).toMatchObject({
      operation: "POST /v1/svcos/learning/proposals/{id}/apply",
      resourceId: id,
      capability: "svc_api:learning:decide",
    });
    // The tuning action embeds the explain metadata (as it stands once applied) and points at its record.
    expect(applied.body.tuning_actions).toHaveLength(1);
    expect(applied.body.tuning_actions[0]).toMatchObject({
      action: "apply",
      actor_did: decider.did,
      provenance_id: applyRecord!.id,
      payload: {
        kind: "routing_rule",
        target,
        from: JSON.parse(before),
        to: p.body.proposed,
        explain: { source: "admin", confidence: 0.9, approval_state: "applied", changed_by: decider.did },
      },
    });
    expect((await act(id, "apply", decider.token)).body).toMatchObject({
      current_state: "applied",
      requested_state: "applied",
    });

    const rolled = await act(id, "rollback", decider.token);
    expect(rolled.status, JSON.stringify(rolled.body)).toBe(200);
    expect(rolled.body.approval_state).toBe("rolled_back");
    // Byte for byte: the target's serialized state is exactly what it was before the apply.
    expect(JSON.stringify(await routing.current(null as unknown as Db, t.root.orgDid, target))).toBe(before);
    expect(routing.applied.at(-1)!.state).toBe(before);
    expect(rolled.body.tuning_actions.map((a: { action: string }) => a.action)).toEqual(["apply", "rollback"]);
    expect(rolled.body.tuning_actions[1].payload).toMatchObject({ from: p.body.proposed, to: JSON.parse(before) });

    for (const action of ["approve", "reject", "apply", "rollback"]) {
      const final = await act(id, action, decider.token);
      expect(final.status, action).toBe(409);
      expect(final.body.current_state).toBe("rolled_back");
    }
    const events = await api("GET", "/v1/events?limit=100", t.root.token);
    const mine = events.body.data
      .filter((e: { payload: { proposal_id?: string } }) => e.payload.proposal_id === id)
      .map((e: { type: string }) => e.type)
      .sort();
    expect(mine).toEqual(["learning.applied", "learning.proposed", "learning.rolled_back"]);
  });

  it("pending → rejected (direct reject); then nothing else moves it", async () => {
    const p = await propose(proposer.token, routingProposal());
    const rejected = await act(p.body.id, "reject", decider.token, { comment: "no" });
    expect(rejected.status).toBe(200);
    expect(rejected.body.approval_state).toBe("rejected");
    expect((await api("GET", `/v1/approvals/${p.body.approval_id}`, t.root.token)).body.status).toBe("rejected");
    for (const action of ["approve", "reject", "apply", "rollback"]) {
      const res = await act(p.body.id, action, decider.token);
      expect(res.status, action).toBe(409);
      expect(res.body.current_state).toBe("rejected");
    }
  });

  it("a decision in the approval inbox (POST /v1/approvals/{id}/respond) moves the proposal; so does the service's respondToApproval", async () => {
    const p = await propose(proposer.token, routingProposal());
    const res = await api("POST", `/v1/approvals/${p.body.approval_id}/respond`, inboxApprover.token, {
      decision: "approve",
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const got = await api("GET", `/v1/svcos/learning/proposals/${p.body.id}`, reader.token);
    expect(got.body).toMatchObject({ approval_state: "approved", changed_by: inboxApprover.did });

    const q = await propose(proposer.token, routingProposal());
    const db = await database();
    await db.writeTx(async (tx) => {
      const principal = await delegationPrincipal(tx, inboxApprover.delegationId);
      await respondToApproval(tx, principal, q.body.approval_id, { decision: "reject" });
    });
    expect((await api("GET", `/v1/svcos/learning/proposals/${q.body.id}`, reader.token)).body.approval_state).toBe(
      "rejected",
    );
  });

  it("approved with modifications: a `proposed` object in the modified parameters replaces the proposal's", async () => {
    const p = await propose(proposer.token, routingProposal());
    const modified = { task: "summarize", model: "model-c" };
    const res = await api("POST", `/v1/approvals/${p.body.approval_id}/respond`, inboxApprover.token, {
      decision: "approve_with_modifications",
      modified_params: { proposed: modified },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const got = await api("GET", `/v1/svcos/learning/proposals/${p.body.id}`, reader.token);
    expect(got.body).toMatchObject({ approval_state: "approved", proposed: modified });
  });

  it("an approval request that expires rejects its proposal", async () => {
    const p = await propose(proposer.token, routingProposal());
    const db = await database();
    await db.writeTx(async (tx) => {
      const row = await tx.approvalRequest.findUniqueOrThrow({ where: { id: p.body.approval_id } });
      const { settleApproval } = await import("@/server/approvals/settleApproval");
      await settleApproval(tx, row, "expired", {});
    });
    const got = await api("GET", `/v1/svcos/learning/proposals/${p.body.id}`, reader.token);
    expect(got.body.approval_state).toBe("rejected");
  });

  it("apply is 409 learning_target_changed when the target moved since the proposal; rollback likewise once it moved after the apply", async () => {
    const target = freshTarget();
    const p = await propose(proposer.token, routingProposal(target));
    await act(p.body.id, "approve", decider.token);
    routing.states.set(`${t.root.orgDid}|${target}`, JSON.stringify({ task: "summarize", model: "model-z" }));
    const refused = await act(p.body.id, "apply", decider.token);
    expect(refused.status).toBe(409);
    expect(refused.body.type).toMatch(/learning_target_changed$/);
    expect(refused.body.current).toEqual({ task: "summarize", model: "model-z" });

    const q = await propose(proposer.token, routingProposal(target));
    await act(q.body.id, "approve", decider.token);
    expect((await act(q.body.id, "apply", decider.token)).status).toBe(200);
    routing.states.set(`${t.root.orgDid}|${target}`, JSON.stringify({ task: "summarize", model: "model-y" }));
    const noRollback = await act(q.body.id, "rollback", decider.token);
    expect(noRollback.status).toBe(409);
    expect(noRollback.body.type).toMatch(/learning_target_changed$/);
    expect((await api("GET", `/v1/svcos/learning/proposals/${q.body.id}`, reader.token)).body.approval_state).toBe(
      "applied",
    );
  });
});

const publish = (key: string, version: string, content: string) =>
  api("POST", `/v1/prompts/${key}/versions`, t.root.token, {
    version,
    content,
    meta: { id: key, namespace: "support", scope: "organization", description: "" },
  });

describe("prompt targets, through the prompt registry's appliers", () => {
  it("moves a prompt's active version and rolls it back to exactly the previous state", async () => {
    expect((await publish("learn-greet", "1.0.0", "Hello {{name}}")).status).toBe(201);
    expect((await publish("learn-greet", "1.1.0", "Hi {{name}}!")).status).toBe(201);
    const profile = async () => (await api("GET", "/v1/prompts/learn-greet", t.root.token)).body;
    const before = JSON.stringify({ active_version: (await profile()).active_version });
    const target = before.includes("1.1.0") ? "1.0.0" : "1.1.0";
    const p = await propose(proposer.token, {
      kind: "prompt_active_version",
      target: "learn-greet",
      proposed: { active_version: target },
    });
    expect(p.status, JSON.stringify(p.body)).toBe(201);
    expect(JSON.stringify(p.body.previous)).toBe(before);
    expect((await act(p.body.id, "approve", decider.token)).status).toBe(200);
    expect((await act(p.body.id, "apply", decider.token)).status).toBe(200);
    expect((await profile()).active_version).toBe(target);
    expect((await act(p.body.id, "rollback", decider.token)).status).toBe(200);
    expect(JSON.stringify({ active_version: (await profile()).active_version })).toBe(before);
    const unknown = await propose(proposer.token, {
      kind: "prompt_active_version",
      target: "learn-greet",
      proposed: { active_version: "9.9.9" },
    });
    expect(unknown.status).toBe(400);
  });
});

describe("no one decides their own proposal (issue 26)", () => {
  it("an agent that proposed cannot approve through a token it derives for the organization; apply never moves the prompt", async () => {
    expect((await publish("learn-own", "1.0.0", "Hello {{name}}")).status).toBe(201);
    expect((await publish("learn-own", "1.1.0", "Hi {{name}}!")).status).toBe(201);
    const profile = async () => (await api("GET", "/v1/prompts/learn-own", t.root.token)).body;
    const before = (await profile()).active_version as string;
    const passport = await api("POST", "/v1/passports", t.root.token, {
      type: "agent",
      name: `learner-${Math.random().toString(36).slice(2, 8)}`,
      public_key: ed25519Jwk(),
    });
    const agent = await api("POST", "/v1/delegation-tokens", t.root.token, {
      delegate_did: passport.body.did,
      capabilities: [
        "svc_api:learning:propose",
        "svc_api:learning:decide",
        "svc_api:learning:read",
        "svc_api:approvals:respond",
        "svc_api:delegations:write",
      ],
      duration_seconds: 1800,
    });
    expect(agent.status, JSON.stringify(agent.body)).toBe(201);
    const p = await propose(agent.body.token, {
      kind: "prompt_active_version",
      target: "learn-own",
      proposed: { active_version: before === "1.1.0" ? "1.0.0" : "1.1.0" },
    });
    expect(p.status, JSON.stringify(p.body)).toBe(201);
    const derived = await api("POST", "/v1/delegation-tokens", agent.body.token, {
      delegate_did: t.root.orgDid,
      capabilities: ["svc_api:learning:decide", "svc_api:learning:read", "svc_api:approvals:respond"],
      duration_seconds: 600,
    });
    expect(derived.status, JSON.stringify(derived.body)).toBe(201);
    const viaProposal = await act(p.body.id, "approve", derived.body.token);
    expect(viaProposal.status).toBe(403);
    expect(viaProposal.body.reason).toBe("own_request");
    const viaInbox = await api("POST", `/v1/approvals/${p.body.approval_id}/respond`, derived.body.token, {
      decision: "approve",
    });
    expect(viaInbox.status).toBe(403);
    expect(viaInbox.body.reason).toBe("own_request");
    expect((await act(p.body.id, "apply", derived.body.token)).status).toBe(409);
    expect((await profile()).active_version).toBe(before);
    expect((await api("GET", `/v1/svcos/learning/proposals/${p.body.id}`, reader.token)).body.approval_state).toBe(
      "pending",
    );
  });
});

describe("the worker's own proposals from prompt affinity", () => {
  const settings = { windowMs: 14 * 86_400_000, minSamples: 20, margin: 0.1 };

  /** `n` calls of `model` for `key`, a fraction `ok` of them succeeded, each taking `ms`. */
  async function calls(key: string, model: string, n: number, ok: number, ms: number) {
    const db = await database();
    const now = Date.now();
    await db.writeTx((tx) =>
      tx.reasoningCall.createMany({
        data: Array.from({ length: n }, (_, i) => ({
          id: newId("rsn"),
          orgDid: t.root.orgDid,
          task: "classify",
          complexity: "low",
          budgetMode: "optimize",
          model,
          provider: "loopback",
          promptKey: key,
          promptVersion: "1.0.0",
          status: i < n * ok ? "succeeded" : "failed",
          reason: "test",
          alternatives: [],
          costUsd: 0.001,
          durationMs: ms,
          requestId: newId("req"),
          createdAt: new Date(now - 3_600_000 + i * 1000),
          completedAt: new Date(now - 3_600_000 + i * 1000 + ms),
        })),
      }),
    );
  }

  it("proposes the best model with enough samples when it beats the recommended one by the margin, source inferred with confidence and evidence; at most one open proposal per target", async () => {
    expect((await publish("learn-triage", "1.0.0", "Triage {{ticket}}")).status).toBe(201);
    // model-a is recommended (through a proposal of its own), and does worse than model-b.
    const first = await propose(proposer.token, {
      kind: "prompt_recommended_model",
      target: "learn-triage",
      proposed: { recommended_model: "model-a" },
    });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(first.body.previous).toEqual({ recommended_model: null });
    await act(first.body.id, "approve", decider.token);
    expect((await act(first.body.id, "apply", decider.token)).status).toBe(200);
    await calls("learn-triage", "model-a", 40, 0.5, 2000);
    await calls("learn-triage", "model-b", 40, 1, 500);
    await calls("learn-triage", "model-c", 5, 1, 100);

    const db = await database();
    expect(await proposeFromAffinity(db, promptAffinitySource, settings)).toBe(1);
    const list = await api(
      "GET",
      "/v1/svcos/learning/proposals?kind=prompt_recommended_model&target=learn-triage&approval_state=pending",
      reader.token,
    );
    expect(list.body.data).toHaveLength(1);
    const p = list.body.data[0];
    expect(p).toMatchObject({
      proposed: { recommended_model: "model-b" },
      previous: { recommended_model: "model-a" },
      origin: "worker",
      proposed_by: t.root.orgDid,
      explain: { source: "inferred", scope: "prompt:learn-triage", rollback_target: "model-a" },
    });
    expect(p.explain.confidence).toBeGreaterThan(0);
    expect(p.explain.confidence).toBeLessThanOrEqual(1);
    expect(p.explain.evidence_refs).toHaveLength(2);
    for (const ref of p.explain.evidence_refs)
      expect(ref).toMatch(/^stats:prompt_affinity\?prompt_key=learn-triage&model_id=model-[ab]&from=/);
    const record = await db.read.provenanceRecord.findFirst({ where: { id: p.provenance_id } });
    expect(record).toMatchObject({ operation: "LEARNING_PROPOSE affinity", resourceId: p.id, actorDid: t.root.orgDid });

    // Again: the open proposal stops a second one.
    expect(await proposeFromAffinity(db, promptAffinitySource, settings)).toBe(0);
    // Rejected, the target is open again.
    expect((await act(p.id, "reject", decider.token)).status).toBe(200);
    expect(await proposeFromAffinity(db, promptAffinitySource, settings)).toBe(1);
    // A margin no model beats by: nothing.
    const open = await api(
      "GET",
      "/v1/svcos/learning/proposals?target=learn-triage&approval_state=pending",
      reader.token,
    );
    await act(open.body.data[0].id, "reject", decider.token);
    expect(await proposeFromAffinity(db, promptAffinitySource, { ...settings, margin: 0.9 })).toBe(0);
  });
});
