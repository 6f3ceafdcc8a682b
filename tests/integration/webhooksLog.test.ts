import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { database } from "@/server/db/client";
import { servicePrincipal } from "@/server/events/platformEvents";
import { updateWebhook } from "@/server/webhooks/updateWebhook";
import { deployAndWait } from "./agentsHelpers";
import { apiKey, call, useTestServer } from "./harness";
import { useReceiverAndWorker } from "./receiverAndWorker";
import { putEvent } from "./webhooksHelpers";

// Issue 14, items 10, 13, 16 and 17: what a webhook delivers, under whose authority, and what is kept of it.
process.env.SVC_WEBHOOK_RETRY_SCHEDULE = "0,0.2,0.2";
process.env.SVC_WEBHOOK_TIMEOUT_MS = "1000";

const ctx = useTestServer();
const outbound = useReceiverAndWorker();

const api = (method: string, path: string, body?: unknown, token = ctx.root.token) =>
  call(ctx.server.url, method, path, { token, body });
const deliveries = async (id: string) =>
  (await api("GET", `/v1/webhooks/${id}/deliveries`)).body.data as Array<Record<string, any>>;
const until = <T>(fn: () => Promise<T>, timeout = 10_000) => expect.poll(fn, { timeout, interval: 25 });

describe("the delivery pipeline and the ledger (item 13)", () => {
  it("records a webhook's and a callback's target as origin and path: a query-string secret never reaches the ledger", async () => {
    const token = "qs-secret-7f3a9c1e";
    const created = await api("POST", "/v1/webhooks", {
      target_url: `${outbound.receiver.url}/hook?token=${token}`,
      event_types: ["invoice.*"],
    });
    expect(created.status).toBe(201);
    const event = await putEvent(ctx.root.orgDid, [created.body.id]);
    await until(async () => (await deliveries(created.body.id)).length).toBe(1);
    expect(outbound.receiver.received.some((r) => r.path === `/hook?token=${token}` && r.body.includes(event.id))).toBe(
      true,
    );

    const db = await database();
    const records = await db.read.provenanceRecord.findMany({ where: { resourceId: created.body.id } });
    expect(records.map((r) => r.operation)).toContain(`WEBHOOK ${outbound.receiver.url}/hook`);

    // The same pipeline delivers an execution's callback.
    const agentId = await deployAndWait(
      ctx.server.url,
      ctx.root.token,
      "called-back",
      "export default async () => ({ ok: true })",
    );
    const invoked = await api("POST", `/v1/agents/${agentId}/invoke`, {
      input: {},
      callback_url: `${outbound.receiver.url}/callback?token=${token}`,
    });
    expect(invoked.status).toBe(202);
    await until(
      async () => outbound.receiver.received.filter((r) => r.path === `/callback?token=${token}`).length,
    ).toBe(1);
    const cb = outbound.receiver.received.find((r) => r.path === `/callback?token=${token}`)!;
    expect(cb.headers["user-agent"]).toBe("svc-callbacks");
    expect(cb.headers["webhook-signature"]).toMatch(/^v1,/);
    await until(
      async () =>
        await db.read.provenanceRecord.count({
          where: { resourceId: invoked.body.id, operation: { startsWith: "CALLBACK " } },
        }),
    ).toBe(1);
    expect(
      (
        await db.read.provenanceRecord.findFirstOrThrow({
          where: { resourceId: invoked.body.id, operation: { startsWith: "CALLBACK " } },
        })
      ).operation,
    ).toBe(`CALLBACK ${outbound.receiver.url}/callback`);

    const ledger = await db.read.provenanceRecord.findMany();
    expect(JSON.stringify(ledger, (_k, v) => (typeof v === "bigint" ? String(v) : v))).not.toContain(token);
  });
});

describe("the delivery log (item 10)", () => {
  it("shows each attempt's event type, request headers and body (signatures, never the secret), status, response headers and excerpt", async () => {
    const created = await api("POST", "/v1/webhooks", {
      target_url: `${outbound.receiver.url}/logged`,
      event_types: ["invoice.*"],
    });
    const secret = created.body.secret as string;
    const event = await putEvent(ctx.root.orgDid, [created.body.id], "invoice.paid", { invoice_id: "inv_log" });
    await until(async () => (await deliveries(created.body.id)).length).toBe(1);
    const [d] = await deliveries(created.body.id);
    const got = outbound.receiver.at("/logged").find((r) => r.body.includes(event.id))!;
    expect(d).toMatchObject({
      event_id: event.id,
      event_type: "invoice.paid",
      status_code: 200,
      success: true,
      response_headers: expect.objectContaining({ "content-type": "text/plain" }),
    });
    expect(d!.response_excerpt).toContain("answer 200 to /logged");
    expect(d!.request.body).toBe(got.body);
    expect(d!.request.body_truncated).toBe(false);
    expect(d!.request.headers).toMatchObject({
      "content-type": "application/json",
      "user-agent": "svc-webhooks",
      "webhook-id": got.headers["webhook-id"],
      "webhook-timestamp": got.headers["webhook-timestamp"],
      "webhook-signature": got.headers["webhook-signature"],
    });
    // What the log shows verifies like the delivery itself did.
    expect(new Webhook(secret).verify(d!.request.body, d!.request.headers)).toBeTruthy();
    const one = await api("GET", `/v1/webhooks/${created.body.id}/deliveries/${d!.id}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(d);
    for (const shown of [JSON.stringify(await deliveries(created.body.id)), JSON.stringify(one.body)]) {
      expect(shown).not.toContain(secret);
      expect(shown).not.toContain(secret.slice(6, 30));
    }
    expect((await api("GET", `/v1/webhooks/${created.body.id}/deliveries/whd_nope`)).status).toBe(404);
  });
});

describe("a webhook carries only what its creator may read (item 16)", () => {
  it("creating or widening needs svc_api:events:read, and for platform types the capability reading what they carry", async () => {
    const writer = await apiKey(["svc_api:events:write"]);
    const create = (event_types: string[], token: string) =>
      api("POST", "/v1/webhooks", { target_url: `${outbound.receiver.url}/cap`, event_types }, token);
    let res = await create(["invoice.*"], writer.token);
    expect(res.status).toBe(403);
    expect(res.body.missing_capability).toBe("svc_api:events:read");
    expect((await create(["execution.completed", "agent.*"], writer.token)).status).toBe(403);

    const events = await apiKey(["svc_api:events:write", "svc_api:events:read"]);
    expect((await create(["invoice.*", "webhook.disabled"], events.token)).status).toBe(201);
    for (const [types, missing] of [
      [["execution.completed"], "svc_api:executions:read"],
      [["execution.*"], "svc_api:executions:read"],
      [["agent.*"], "svc_api:agents:read"],
      [["delegation.*"], "svc_api:delegations:read"],
      // A proposal's event carries its `proposed` and `previous` state: a learning reader's.
      [["learning.*"], "svc_api:learning:read"],
      [["learning.proposed"], "svc_api:learning:read"],
    ] as const) {
      res = await create([...types], events.token);
      expect(res.status, types.join()).toBe(403);
      expect(res.body.missing_capability).toBe(missing);
    }
    const hook = (await create(["invoice.*"], events.token)).body;
    res = await api("PATCH", `/v1/webhooks/${hook.id}`, { event_types: ["invoice.*", "execution.*"] }, events.token);
    expect(res.status).toBe(403);
    expect(res.body.missing_capability).toBe("svc_api:executions:read");
    // Narrowing, or keeping what it has, needs nothing more.
    expect(
      (await api("PATCH", `/v1/webhooks/${hook.id}`, { event_types: ["invoice.paid"] }, events.token)).status,
    ).toBe(200);

    const learning = await apiKey(["svc_api:events:write", "svc_api:events:read", "svc_api:learning:read"]);
    expect((await create(["learning.*"], learning.token)).status).toBe(201);

    const executions = await apiKey(["svc_api:events:write", "svc_api:events:read", "svc_api:executions:read"]);
    expect((await create(["execution.completed"], executions.token)).status).toBe(201);
    expect(
      (await api("PATCH", `/v1/webhooks/${hook.id}`, { event_types: ["invoice.*", "execution.*"] }, executions.token))
        .status,
    ).toBe(200);
  });
});

describe("re-enabling a webhook whose delegation was revoked (item 17)", () => {
  it("binds it to the caller's live delegation and says so; no delivery acts under the revoked one", async () => {
    const creator = await apiKey(["svc_api:events:write", "svc_api:events:read"]);
    const created = await api(
      "POST",
      "/v1/webhooks",
      { target_url: `${outbound.receiver.url}/rebound`, event_types: ["invoice.*"] },
      creator.token,
    );
    expect(created.body.delegation_id).toBe(creator.delegationId);
    expect(
      (await api("POST", `/v1/delegations/${creator.delegationId}/revoke`, { reason: "left the team" })).status,
    ).toBe(201);
    expect((await api("GET", `/v1/webhooks/${created.body.id}`)).body).toMatchObject({
      status: "disabled",
      health: { disabled_reason: "delegation_revoked" },
    });

    // A caller with no delegation of its own to give (the platform's service) gets a 409 naming the revoked one.
    const db0 = await database();
    await expect(
      db0.writeTx((tx) => updateWebhook(tx, servicePrincipal(ctx.root.orgDid), created.body.id, { status: "active" })),
    ).rejects.toMatchObject({
      status: 409,
      extra: expect.objectContaining({ revoked_delegation_id: creator.delegationId }),
    });

    const other = await apiKey(["svc_api:events:write", "svc_api:events:read"]);
    const patched = await api("PATCH", `/v1/webhooks/${created.body.id}`, { status: "active" }, other.token);
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      status: "active",
      delegation_id: other.delegationId,
      rebound_from_delegation_id: creator.delegationId,
    });

    await putEvent(ctx.root.orgDid, [created.body.id]);
    await until(async () => (await deliveries(created.body.id)).length).toBe(1);
    const db = await database();
    const records = await db.read.provenanceRecord.findMany({
      where: { resourceId: created.body.id, operation: { startsWith: "WEBHOOK " } },
    });
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ delegationId: other.delegationId, decision: "allowed" });
    expect(
      await db.read.provenanceRecord.count({
        where: { operation: { startsWith: "WEBHOOK " }, delegationId: creator.delegationId },
      }),
    ).toBe(0);
  });

  it("a queued delivery finds the delegation revoked and sends nothing", async () => {
    const creator = await apiKey(["svc_api:events:write", "svc_api:events:read"]);
    const created = await api(
      "POST",
      "/v1/webhooks",
      { target_url: `${outbound.receiver.url}/raced`, event_types: ["invoice.*"] },
      creator.token,
    );
    // The revocation commits without its hook having run (say, another process's revocation raced the disable).
    const db = await database();
    await db.writeTx((tx) =>
      tx.delegation.update({ where: { id: creator.delegationId }, data: { revokedAt: new Date() } }),
    );
    await putEvent(ctx.root.orgDid, [created.body.id]);
    await until(async () => (await api("GET", `/v1/webhooks/${created.body.id}`)).body.status).toBe("disabled");
    await new Promise((r) => setTimeout(r, 300));
    expect(outbound.receiver.at("/raced")).toHaveLength(0);
    expect(
      await db.read.provenanceRecord.count({
        where: { operation: { startsWith: "WEBHOOK " }, delegationId: creator.delegationId },
      }),
    ).toBe(0);
  });
});
