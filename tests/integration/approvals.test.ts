import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { database } from "@/server/db/client";
import { shutdownSandbox } from "@/server/sandbox/pool";
import {
  cancelApprovalsOfEndedRuns,
  escalateDueApprovals,
  expireDueApprovals,
} from "@/server/approvals/expireApprovals";
import { paramsHash } from "@/server/approvals/views";
import { startWorker, type Worker } from "@/server/worker/worker";
import { apiKey, call, ed25519Jwk, useTestServer } from "./harness";
import { deployAndWait } from "./agentsHelpers";
import { consoleMember } from "./consoleMembers";

process.env.SVC_SANDBOX_THREADS = "2";

const ctx = useTestServer();
let worker: Worker;
beforeAll(() => {
  worker = startWorker({ log: () => undefined, tasks: [] });
});
afterAll(async () => {
  await worker.stop();
  await shutdownSandbox();
});

const api = (method: string, path: string, token: string, body?: unknown) =>
  call(ctx.server.url, method, path, { token, ...(body === undefined ? {} : { body }) });

/** A passport of the root organization and a delegation token issued to it (its own actor). */
async function actor(type: "agent" | "organization", capabilities: string[]) {
  const passport = await api("POST", "/v1/passports", ctx.root.token, {
    type,
    name: `${type}-${Math.random().toString(36).slice(2, 8)}`,
    public_key: ed25519Jwk(),
  });
  expect(passport.status, JSON.stringify(passport.body)).toBe(201);
  const token = await api("POST", "/v1/delegation-tokens", ctx.root.token, {
    delegate_did: passport.body.did,
    capabilities,
    duration_seconds: 1800,
  });
  expect(token.status, JSON.stringify(token.body)).toBe(201);
  return { did: passport.body.did as string, token: token.body.token as string };
}

const create = (token: string, extra: Record<string, unknown> = {}) =>
  api("POST", "/v1/approvals", token, {
    task_id: "task-1",
    agent_id: "agt_external",
    action_description: "Refund invoice INV-2041",
    risk_level: "low",
    request_data: { invoice: "INV-2041", amount: 1250 },
    ...extra,
  });

const respond = (id: string, token: string, body: Record<string, unknown>) =>
  api("POST", `/v1/approvals/${id}/respond`, token, body);

let approver: Awaited<ReturnType<typeof actor>>;
let requester: Awaited<ReturnType<typeof actor>>;
beforeAll(async () => {
  approver = await actor("organization", ["svc_api:approvals:respond", "svc_api:approvals:read"]);
  requester = await actor("organization", ["svc_api:approvals:write", "svc_api:approvals:read"]);
});

describe("approval requests", () => {
  it("creates a pending request storing every optional field, with a default 24 h expiry, and puts approval.requested on the bus", async () => {
    const before = Date.now();
    const res = await create(requester.token, {
      risk_factors: [{ factor: "amount above 1,000", severity: "high" }],
      alternatives: [{ refund: 1000 }],
      conversation_id: "conv-9",
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      status: "pending",
      requester_passport_id: requester.did,
      risk_factors: [{ factor: "amount above 1,000", severity: "high" }],
      alternatives: [{ refund: 1000 }],
      conversation_id: "conv-9",
      request_data: { invoice: "INV-2041", amount: 1250 },
      responded_by: null,
      modified_params: null,
    });
    const ttl = Date.parse(res.body.expires_at) - before;
    expect(ttl).toBeGreaterThan(23.9 * 3600_000);
    expect(ttl).toBeLessThan(24.1 * 3600_000);
    const got = await api("GET", `/v1/approvals/${res.body.id}`, requester.token);
    expect(got.body.provenance_id).toMatch(/^prv_/);
    const events = await api("GET", "/v1/events?type=approval.requested&limit=100", ctx.root.token);
    expect(
      events.body.data.some((e: { payload: { approval_id: string } }) => e.payload.approval_id === res.body.id),
    ).toBe(true);
  });

  it("refuses bad input with errors[]: a past expires_at, an unknown approver passport, an unknown field", async () => {
    const past = await create(requester.token, { expires_at: new Date(Date.now() - 1000).toISOString() });
    expect(past.status).toBe(400);
    expect(past.body.errors[0]).toMatchObject({ field: "expires_at", code: "OUT_OF_RANGE" });
    const unknown = await create(requester.token, { approver_passport_id: "did:key:z6MkNobodyAtAll" });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors[0]).toMatchObject({ field: "approver_passport_id", code: "UNKNOWN_PASSPORT" });
    const extra = await create(requester.token, { colour: "red" });
    expect(extra.status).toBe(400);
    const risk = await create(requester.token, { risk_level: "extreme" });
    expect(risk.status).toBe(400);
  });

  it("the requester cannot decide; an approver approves, binding the hash; a second decision is 409 naming both states", async () => {
    const { body: a } = await create(requester.token);
    const own = await respond(a.id, requester.token, { decision: "approve" });
    expect(own.status).toBe(403);
    const self = await apiKey(["svc_api:*"]);
    const created = await create(self.token);
    expect((await respond(created.body.id, self.token, { decision: "approve" })).status).toBe(403);

    const ok = await respond(a.id, approver.token, { decision: "approve", comment: "fine" });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({
      status: "approved",
      responded_by: approver.did,
      response_comment: "fine",
      decision_hash: paramsHash({ invoice: "INV-2041", amount: 1250 }),
      step_up: null,
    });
    const again = await respond(a.id, approver.token, { decision: "reject" });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ current_state: "approved", requested_state: "rejected" });
    const cancel = await api("POST", `/v1/approvals/${a.id}/cancel`, requester.token);
    expect(cancel.status).toBe(409);
    const record = await api("GET", `/v1/approvals/${a.id}`, ctx.root.token);
    const proof = await api("GET", `/v1/provenance/${record.body.decision_provenance_id}`, ctx.root.token);
    expect(proof.body).toMatchObject({
      actor_did: approver.did,
      operation: "POST /v1/approvals/{id}/respond",
      resource_id: a.id,
      decision: "allowed",
    });
  });

  it("each decision carries its own fields: modified_params, delegated_to, override_action (with svc_api:approvals:admin)", async () => {
    const { body: a } = await create(requester.token);
    const missing = await respond(a.id, approver.token, { decision: "approve_with_modifications" });
    expect(missing.status).toBe(400);
    expect(missing.body.errors[0]).toMatchObject({ field: "modified_params", code: "REQUIRED_FIELD_MISSING" });
    const conflicting = await respond(a.id, approver.token, { decision: "reject", modified_params: { a: 1 } });
    expect(conflicting.status).toBe(400);
    expect(conflicting.body.errors[0]).toMatchObject({ field: "modified_params", code: "CONFLICTING_FIELDS" });
    const override = await respond(a.id, approver.token, { decision: "override", override_action: "refund 10" });
    expect(override.status).toBe(403);
    const admin = await actor("organization", ["svc_api:approvals:respond", "svc_api:approvals:admin"]);
    const overridden = await respond(a.id, admin.token, { decision: "override", override_action: "refund 10" });
    expect(overridden.status).toBe(200);
    expect(overridden.body).toMatchObject({ status: "overridden", override_action: "refund 10" });
  });

  it("delegates to a passport holding svc_api:approvals:respond; only the delegate then answers", async () => {
    const { body: a } = await create(requester.token);
    const stranger = await actor("organization", ["svc_api:approvals:read"]);
    const refused = await respond(a.id, approver.token, { decision: "delegate", delegated_to: stranger.did });
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0]).toMatchObject({ field: "delegated_to" });
    const delegate = await actor("organization", ["svc_api:approvals:respond"]);
    const moved = await respond(a.id, approver.token, { decision: "delegate", delegated_to: delegate.did });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ status: "delegated", delegated_to: delegate.did });
    expect((await respond(a.id, approver.token, { decision: "approve" })).status).toBe(403);
    const again = await respond(a.id, delegate.token, { decision: "delegate", delegated_to: approver.did });
    expect(again.status).toBe(409);
    const done = await respond(a.id, delegate.token, { decision: "reject", comment: "no" });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ status: "rejected", responded_by: delegate.did });
  });

  it("a high or critical decision needs a delegation not issued to an agent, and says so", async () => {
    const { body: a } = await create(requester.token, { risk_level: "critical" });
    const agentApprover = await actor("agent", ["svc_api:approvals:respond"]);
    const refused = await respond(a.id, agentApprover.token, { decision: "approve" });
    expect(refused.status).toBe(403);
    expect(refused.body.type).toContain("approval_step_up_required");
    const ok = await respond(a.id, approver.token, { decision: "approve" });
    expect(ok.status).toBe(200);
    expect(ok.body.step_up).toBe("non_agent_delegation");
  });

  it("approve_with_modifications binds the grant to the modified parameters: a call with others is refused and recorded", async () => {
    const { body: a } = await create(requester.token);
    const decided = await respond(a.id, approver.token, {
      decision: "approve_with_modifications",
      modified_params: { invoice: "INV-2041", amount: 1000 },
    });
    expect(decided.body.decision_hash).toBe(paramsHash({ amount: 1000, invoice: "INV-2041" }));
    const wrong = await api("POST", `/v1/approvals/${a.id}/use`, requester.token, {
      params: { invoice: "INV-2041", amount: 1250 },
    });
    expect(wrong.status).toBe(403);
    expect(wrong.body.type).toContain("approval_params_mismatch");
    const records = await api("GET", `/v1/provenance?resource_id=${a.id}&limit=20`, ctx.root.token);
    expect(
      records.body.data.some(
        (r: { operation: string; decision: string }) =>
          r.operation === "POST /v1/approvals/{id}/use" && r.decision === "denied",
      ),
    ).toBe(true);
    // Key order does not matter: the hash is of the canonical JSON.
    const right = await api("POST", `/v1/approvals/${a.id}/use`, requester.token, {
      params: { amount: 1000, invoice: "INV-2041" },
    });
    expect(right.status).toBe(200);
    expect(right.body).toMatchObject({ uses: 1, params_hash: decided.body.decision_hash });
    const other = await api("POST", `/v1/approvals/${a.id}/use`, approver.token, {
      params: { amount: 1000, invoice: "INV-2041" },
    });
    expect(other.status).toBe(403);
  });

  it("cancel: only the requester, only while open", async () => {
    const { body: a } = await create(requester.token);
    const writer = await actor("organization", ["svc_api:approvals:write"]);
    expect((await api("POST", `/v1/approvals/${a.id}/cancel`, writer.token)).status).toBe(403);
    const ok = await api("POST", `/v1/approvals/${a.id}/cancel`, requester.token);
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ status: "cancelled", end_reason: "requester" });
    expect((await respond(a.id, approver.token, { decision: "approve" })).status).toBe(409);
  });

  it("expires at expires_at with the service as actor, and approval.expired goes on the bus", async () => {
    // Far enough ahead that a loaded machine's slow request still arrives before it (a past expires_at
    // is refused); the expiry is then run just past the request's own expires_at, not "now + a guess".
    const { body: a } = await create(requester.token, { expires_at: new Date(Date.now() + 30_000).toISOString() });
    const db = await database();
    await expireDueApprovals(db, new Date(Date.parse(a.expires_at) + 500));
    const got = await api("GET", `/v1/approvals/${a.id}`, requester.token);
    expect(got.body).toMatchObject({ status: "expired", end_reason: "expired", responded_by: ctx.root.orgDid });
    const record = await api("GET", `/v1/provenance/${got.body.decision_provenance_id}`, ctx.root.token);
    expect(record.body).toMatchObject({ operation: "APPROVAL_EXPIRE", actor_did: ctx.root.orgDid, resource_id: a.id });
    const events = await api("GET", "/v1/events?type=approval.expired&limit=100", ctx.root.token);
    expect(events.body.data.some((e: { payload: { approval_id: string } }) => e.payload.approval_id === a.id)).toBe(
      true,
    );
  });

  it("escalates to the next level's approvers after its delay; on_exhausted reject rejects at expiry", async () => {
    const second = await actor("organization", ["svc_api:approvals:respond"]);
    const { body: a } = await create(requester.token, {
      approver_passport_id: approver.did,
      escalation_schema: { levels: [{ after_seconds: 60, approvers: [second.did] }], on_exhausted: "reject" },
    });
    expect((await respond(a.id, second.token, { decision: "approve" })).status).toBe(403);
    const db = await database();
    expect(await escalateDueApprovals(db, new Date(Date.now() + 61_000))).toBeGreaterThanOrEqual(1);
    const got = await api("GET", `/v1/approvals/${a.id}`, requester.token);
    expect(got.body).toMatchObject({ escalation_level: 1, approver_passport_id: second.did });
    // The move is on the bus (with its own record), naming the new level and its approvers.
    const events = await api("GET", "/v1/events?type=approval.escalated&limit=100", ctx.root.token);
    const escalated = events.body.data.find(
      (e: { payload: { approval_id: string } }) => e.payload.approval_id === a.id,
    ) as { payload: Record<string, unknown> } | undefined;
    expect(escalated?.payload).toMatchObject({
      approval_id: a.id,
      status: "pending",
      escalation_level: 1,
      approvers: [second.did],
      approver_passport_id: second.did,
      next_escalation_at: null,
    });
    expect(escalated?.payload).not.toHaveProperty("request_data");
    const move = await api("GET", `/v1/provenance/${escalated!.payload.provenance_id as string}`, ctx.root.token);
    expect(move.body).toMatchObject({ operation: "APPROVAL_ESCALATE", resource_id: a.id, actor_did: ctx.root.orgDid });
    expect((await respond(a.id, approver.token, { decision: "approve" })).status).toBe(403);
    await expireDueApprovals(db, new Date(Date.now() + 25 * 3600_000));
    const ended = await api("GET", `/v1/approvals/${a.id}`, requester.token);
    expect(ended.body).toMatchObject({ status: "rejected", end_reason: "escalation_exhausted" });
  });

  it("revoking the requester's delegation cancels its open requests, with the cause", async () => {
    const key = await apiKey(["svc_api:approvals:write", "svc_api:approvals:read"]);
    const { body: a } = await create(key.token);
    const revoked = await api("POST", `/v1/delegations/${key.delegationId}/revoke`, ctx.root.token, {});
    expect(revoked.status).toBe(201);
    const got = await api("GET", `/v1/approvals/${a.id}`, ctx.root.token);
    expect(got.body).toMatchObject({ status: "cancelled", end_reason: "delegation_revoked" });
  });

  it("lists the inbox riskiest first, then newest, paged with cursors; mine=true leaves out your own requests", async () => {
    const lows = [await create(requester.token), await create(requester.token)];
    const crit = await create(requester.token, { risk_level: "critical", task_id: "inbox" });
    const page = await api("GET", "/v1/approvals?status=pending&limit=2&mine=true", approver.token);
    expect(page.status).toBe(200);
    expect(page.body.data[0].risk_level).toBe("critical");
    expect(page.body.data[0].id).toBe(crit.body.id);
    expect(page.body.pagination.has_more).toBe(true);
    const rest = await api(
      "GET",
      `/v1/approvals?status=pending&limit=100&mine=true&cursor=${encodeURIComponent(page.body.pagination.next_cursor)}`,
      approver.token,
    );
    const ids = [...page.body.data, ...rest.body.data].map((x: { id: string }) => x.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const l of lows) expect(ids).toContain(l.body.id);
    const mine = await api("GET", "/v1/approvals?status=pending&limit=100&mine=true", requester.token);
    expect(
      mine.body.data.filter((x: { requester_passport_id: string }) => x.requester_passport_id === requester.did),
    ).toEqual([]);
    const bad = await api("GET", "/v1/approvals?cursor=nope", approver.token);
    expect(bad.status).toBe(400);
  });
});

describe("ctx.approvals.request pauses a run until the decision", () => {
  const BUNDLE = `export default async (input, ctx) => {
    ctx.progress(10, "asking");
    const d = await ctx.approvals.request({ action_description: "Refund " + input.invoice, risk_level: "low", request_data: { invoice: input.invoice, amount: input.amount } });
    return { status: d.status, params: d.params, comment: d.comment };
  }`;
  let agentId = "";
  beforeAll(async () => {
    agentId = await deployAndWait(ctx.server.url, ctx.root.token, "approval-asker", BUNDLE, {
      capabilities: [{ id: "svc_api:approvals:write", evidence: ["asks before refunds"] }],
    });
  });
  const execution = (id: string) => api("GET", `/v1/executions/${id}`, ctx.root.token);
  async function waitingApproval(executionId: string) {
    await expect
      .poll(async () => (await execution(executionId)).body.progress_message ?? "", { timeout: 20_000, interval: 50 })
      .toMatch(/^Waiting for approval apr_/);
    const list = await api("GET", `/v1/approvals?task_id=${executionId}`, ctx.root.token);
    expect(list.body.data).toHaveLength(1);
    return list.body.data[0];
  }

  it("waits (processing, the message naming the approval), then completes with the modified parameters", async () => {
    const invoked = await api("POST", `/v1/agents/${agentId}/invoke`, ctx.root.token, {
      input: { invoice: "INV-7", amount: 900 },
    });
    expect(invoked.status, JSON.stringify(invoked.body)).toBe(202);
    const a = await waitingApproval(invoked.body.id);
    const waiting = await execution(invoked.body.id);
    expect(waiting.body.status).toBe("processing");
    expect(waiting.body.progress_message).toContain(a.id);
    expect(a).toMatchObject({ status: "pending", agent_id: agentId, request_data: { invoice: "INV-7", amount: 900 } });
    const decided = await respond(a.id, approver.token, {
      decision: "approve_with_modifications",
      modified_params: { invoice: "INV-7", amount: 500 },
      comment: "half",
    });
    expect(decided.status).toBe(200);
    await expect
      .poll(async () => (await execution(invoked.body.id)).body.status, { timeout: 20_000, interval: 50 })
      .toBe("completed");
    const done = await execution(invoked.body.id);
    expect(done.body.result_json).toEqual({
      status: "approved_with_modifications",
      params: { invoice: "INV-7", amount: 500 },
      comment: "half",
    });
    // The replay found the settled request: still one request for the run.
    const list = await api("GET", `/v1/approvals?task_id=${invoked.body.id}`, ctx.root.token);
    expect(list.body.data).toHaveLength(1);
    // The pause reads as a pause: the attempt says what it waited for (not "The run was cancelled"),
    // spent no attempt, and the resume message is gone once the run has run again.
    expect(done.body.progress_message ?? "").not.toContain("resuming");
    expect(done.body.max_attempts).toBe(4);
    expect(done.body.current_attempt).toBe(2);
    const paused = (
      done.body.attempts as Array<{ attempt: number; status: string; error?: { code: string; message: string } }>
    )[0]!;
    expect(paused).toMatchObject({ attempt: 1, status: "paused", error: { code: "awaiting_approval" } });
    expect(paused.error!.message).toContain(`Waiting for approval ${a.id}`);
    expect((done.body.attempts as Array<{ status: string }>)[1]).toMatchObject({ status: "completed" });
  });

  it("cancelling the execution cancels its request and a decision never resumes it", async () => {
    const invoked = await api("POST", `/v1/agents/${agentId}/invoke`, ctx.root.token, {
      input: { invoice: "INV-8", amount: 10 },
    });
    const a = await waitingApproval(invoked.body.id);
    const cancel = await api("POST", `/v1/executions/${invoked.body.id}/cancel`, ctx.root.token);
    expect(cancel.status).toBe(200);
    expect(await cancelApprovalsOfEndedRuns(await database())).toBeGreaterThanOrEqual(1);
    const got = await api("GET", `/v1/approvals/${a.id}`, ctx.root.token);
    expect(got.body).toMatchObject({ status: "cancelled", end_reason: "execution_ended" });
    expect((await respond(a.id, approver.token, { decision: "approve" })).status).toBe(409);
    expect((await execution(invoked.body.id)).body.status).toBe("cancelled");
  });
});

describe("no one decides their own request (issue 26)", () => {
  const mint = (token: string, delegate_did: string, capabilities = ["svc_api:approvals:respond"]) =>
    api("POST", "/v1/delegation-tokens", token, { delegate_did, capabilities, duration_seconds: 600 });
  const refusal = (e: unknown) => JSON.stringify(e);

  it("an agent cannot approve its own critical request through a token it derives: for the organization, the named approver, or a passport it registers", async () => {
    const agent = await actor("agent", [
      "svc_api:approvals:write",
      "svc_api:approvals:respond",
      "svc_api:approvals:read",
      "svc_api:delegations:write",
      "svc_api:passports:write",
    ]);
    const { body: a } = await create(agent.token, { risk_level: "critical", approver_passport_id: approver.did });
    const direct = await respond(a.id, agent.token, { decision: "approve" });
    expect(direct.status).toBe(403);
    expect(direct.body.reason).toBe("own_request");

    const forOrg = await mint(agent.token, ctx.root.orgDid);
    const forApprover = await mint(agent.token, approver.did);
    const passport = await api("POST", "/v1/passports", agent.token, {
      type: "organization",
      name: `own-${Math.random().toString(36).slice(2, 8)}`,
      public_key: ed25519Jwk(),
    });
    expect(passport.status, JSON.stringify(passport.body)).toBe(201);
    const forOwn = await mint(agent.token, passport.body.did);
    for (const derived of [forOrg, forApprover, forOwn]) {
      expect(derived.status, JSON.stringify(derived.body)).toBe(201);
      const refused = await respond(a.id, derived.body.token, { decision: "approve" });
      expect(refused.status, JSON.stringify(refused.body)).toBe(403);
      expect(refused.body).toMatchObject({ reason: "own_request" });
      expect(refused.body.remediation[0].description).toMatch(/Ask a person/);
    }
    expect((await api("GET", `/v1/approvals/${a.id}`, approver.token)).body.status).toBe("pending");
    const ok = await respond(a.id, approver.token, { decision: "approve" });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ responded_by: approver.did, step_up: "non_agent_delegation" });
  });

  it("a chain through any agent's delegation decides nothing: agent_chain on a low request, the step-up on a critical one", async () => {
    const other = await actor("agent", ["svc_api:approvals:respond", "svc_api:delegations:write"]);
    const derived = await mint(other.token, ctx.root.orgDid);
    expect(derived.status).toBe(201);
    const { body: low } = await create(requester.token);
    const refused = await respond(low.id, derived.body.token, { decision: "approve" });
    expect(refused.status).toBe(403);
    expect(refused.body.reason).toBe("agent_chain");
    const { body: critical } = await create(requester.token, { risk_level: "critical" });
    const stepUp = await respond(critical.id, derived.body.token, { decision: "approve" });
    expect(stepUp.status).toBe(403);
    expect(stepUp.body).toMatchObject({ step_up: "non_agent_delegation" });
    expect(stepUp.body.type).toContain("approval_step_up_required");
    // Nor can a request be handed to an agent to decide.
    const handed = await respond(low.id, approver.token, { decision: "delegate", delegated_to: other.did });
    expect(handed.status).toBe(400);
    expect(handed.body.errors[0]).toMatchObject({ field: "delegated_to" });
  });

  it("a request escalated to a console role is decided by members of that role only, not by any key with approvals:respond", async () => {
    const { body: a } = await create(requester.token, {
      escalation_schema: { levels: [{ after_seconds: 60, approvers: "admin" }], on_exhausted: "expire" },
    });
    expect(a.id).toMatch(/^apr_/);
    const db = await database();
    await escalateDueApprovals(db, new Date(Date.now() + 61_000));
    expect((await api("GET", `/v1/approvals/${a.id}`, approver.token)).body).toMatchObject({ escalation_level: 1 });
    const key = await respond(a.id, approver.token, { decision: "approve" });
    expect(key.status).toBe(403);
    expect(key.body.reason).toBe("not_assigned");
    const member = await consoleMember("approver");
    const wrongRole = await member.caller.approvals.respond({ id: a.id, decision: "approve" }).catch((e: unknown) => e);
    expect(refusal(wrongRole)).toContain("not_assigned");
    const admin = await consoleMember("admin");
    const ok = await admin.caller.approvals.respond({ id: a.id, decision: "approve" });
    expect(ok).toMatchObject({ status: "approved", responded_by: admin.did });
  });

  it("the clock is checked in the decision and in the use: past expires_at both are 409, swept or not", async () => {
    const db = await database();
    const past = new Date(Date.now() - 60_000);
    const { body: open } = await create(requester.token);
    await db.writeTx((tx) => tx.approvalRequest.update({ where: { id: open.id }, data: { expiresAt: past } }));
    const late = await respond(open.id, approver.token, { decision: "approve" });
    expect(late.status).toBe(409);
    expect(late.body).toMatchObject({ current_state: "expired", requested_state: "approved" });
    expect((await api("GET", `/v1/approvals/${open.id}`, approver.token)).body.status).toBe("pending");

    const { body: decided } = await create(requester.token);
    expect((await respond(decided.id, approver.token, { decision: "approve" })).status).toBe(200);
    const params = { invoice: "INV-2041", amount: 1250 };
    expect((await api("POST", `/v1/approvals/${decided.id}/use`, requester.token, { params })).status).toBe(200);
    await db.writeTx((tx) => tx.approvalRequest.update({ where: { id: decided.id }, data: { expiresAt: past } }));
    const used = await api("POST", `/v1/approvals/${decided.id}/use`, requester.token, { params });
    expect(used.status).toBe(409);
    expect(used.body).toMatchObject({ current_state: "expired", requested_state: "used" });
  });

  it("a console key names the member who minted it: they cannot decide in their session what they filed with it, while another key decides what the CLI's key filed", async () => {
    const admin = await consoleMember("admin");
    const key = await admin.caller.identity.apiKeys.create({
      name: "filing key",
      capabilities: ["svc_api:approvals:write", "svc_api:approvals:read", "svc_api:approvals:respond"],
      days: 1,
    });
    const minted = await api("GET", `/v1/delegations/${key.delegation_id}`, ctx.root.token);
    expect(minted.body).toMatchObject({ delegate_did: ctx.root.orgDid, grantor_did: admin.did });

    const { body: filed } = await create(key.token);
    expect(filed.requester_passport_id).toBe(ctx.root.orgDid);
    const own = await admin.caller.approvals.respond({ id: filed.id, decision: "approve" }).catch((e: unknown) => e);
    expect(refusal(own)).toContain('"reason":"own_request"');
    const colleague = await consoleMember("admin");
    // The inbox (mine=true) leaves it out of the minting member's, not of a colleague's.
    const inbox = async (who: typeof admin) =>
      (await who.caller.approvals.list({ status: "pending", limit: 100, task_id: "task-1", mine: "true" })).data.map(
        (x: { id: string }) => x.id,
      );
    expect(await inbox(admin)).not.toContain(filed.id);
    expect(await inbox(colleague)).toContain(filed.id);
    expect(await colleague.caller.approvals.respond({ id: filed.id, decision: "approve" })).toMatchObject({
      status: "approved",
      responded_by: colleague.did,
    });

    // Two organization-level keys are not one requester: the operator's CLI key and an admin's console key.
    const cli = await apiKey(["svc_api:approvals:write", "svc_api:approvals:read"]);
    const { body: byCli } = await create(cli.token);
    const decided = await respond(byCli.id, key.token, { decision: "approve" });
    expect(decided.status, JSON.stringify(decided.body)).toBe(200);
    // The operator's own keys are one requester, though.
    const sameOperator = await apiKey(["svc_api:approvals:respond"]);
    const { body: again } = await create(cli.token);
    const refused = await respond(again.id, sameOperator.token, { decision: "approve" });
    expect(refused.status).toBe(403);
    expect(refused.body.reason).toBe("own_request");
  });
});
