import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resetConfig } from "@/server/config";
import { database } from "@/server/db/client";
import { catchUp } from "@/server/ledger/buildTree";
import { startWorker, type Worker } from "@/server/worker/worker";
import { apiKey, call, secondOrg, useTestServer } from "./harness";
import { putEvent, startReceiver } from "./webhooksHelpers";

process.env.SVC_WEBHOOK_RETRY_SCHEDULE = "0,0.2,0.2,0.5,0.5,0.5";
process.env.SVC_WEBHOOK_DISABLE_AFTER_SECONDS = "1";
process.env.SVC_WEBHOOK_TIMEOUT_MS = "300";

const ctx = useTestServer();
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let worker: Worker;

beforeAll(async () => {
  receiver = await startReceiver((path, n) => {
    if (path === "/flaky") return n === 1 ? 500 : 200;
    if (path === "/hang") return n === 1 ? "hang" : 200;
    if (path === "/redirect") return { status: 307, location: `${receiver.url}/landed` };
    if (path === "/gone") return 410;
    if (path === "/fail") return 500;
    return 200;
  });
  process.env.SVC_OUTBOUND_ALLOW = receiver.hostPort;
  resetConfig();
  worker = startWorker({ log: () => undefined, tasks: [] });
});
afterAll(async () => {
  await worker.stop();
  await receiver.close();
});

const api = (method: string, path: string, body?: unknown, token = ctx.root.token) =>
  call(ctx.server.url, method, path, { token, body });
async function createWebhook(path: string, extra: Record<string, unknown> = {}, token = ctx.root.token) {
  const res = await api(
    "POST",
    "/v1/webhooks",
    { target_url: `${receiver.url}${path}`, event_types: ["invoice.*"], ...extra },
    token,
  );
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; secret: string };
}
const deliveries = async (id: string) =>
  (await api("GET", `/v1/webhooks/${id}/deliveries`)).body.data as Array<Record<string, any>>;
const until = <T>(fn: () => Promise<T>, timeout = 10_000) => expect.poll(fn, { timeout, interval: 25 });

describe("webhooks: registering", () => {
  it("shows the whsec_ secret once: in the create answer, never in get or list; lists both kinds", async () => {
    const created = await api("POST", "/v1/webhooks", {
      target_url: `${receiver.url}/ok`,
      event_types: ["invoice.*", "order.shipped"],
      description: "billing",
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      kind: "webhook",
      target_url: `${receiver.url}/ok`,
      event_types: ["invoice.*", "order.shipped"],
      description: "billing",
      status: "active",
    });
    expect(created.body.secret).toMatch(/^whsec_/);
    const got = await api("GET", `/v1/webhooks/${created.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body).not.toHaveProperty("secret");
    expect(got.body.health).toMatchObject({ consecutive_failures: 0, failing_since: null, last_success_at: null });
    const list = await api("GET", "/v1/webhooks?limit=100");
    expect(list.status).toBe(200);
    const item = list.body.data.find((s: { id: string }) => s.id === created.body.id);
    expect(item).toMatchObject({ kind: "webhook", agent_id: null, status: "active", target_url: `${receiver.url}/ok` });
    expect(JSON.stringify(list.body)).not.toContain(created.body.secret);
    const db = await database();
    const row = await db.read.subscription.findUniqueOrThrow({ where: { id: created.body.id } });
    expect(row.secretSealed).not.toContain(created.body.secret.slice(6, 20));
  });

  it("refuses private, metadata and non-allowed loopback targets, plain http elsewhere, and bad patterns", async () => {
    for (const target_url of [
      "http://10.0.0.7/hook",
      "https://169.254.169.254/latest/meta-data",
      "https://127.0.0.1:9/x",
      "http://hooks.example.com/x",
      "ftp://hooks.example.com/x",
      "https://user:pw@hooks.example.com/x",
    ]) {
      const res = await api("POST", "/v1/webhooks", { target_url, event_types: ["invoice.paid"] });
      expect(res.status, target_url).toBe(400);
      expect(res.body.errors[0].field).toBe("target_url");
    }
    for (const pattern of ["Invoice..paid", "*", "a.*.b", "x".repeat(300)]) {
      const res = await api("POST", "/v1/webhooks", {
        target_url: "https://hooks.example.com/x",
        event_types: [pattern],
      });
      expect(res.status, pattern).toBe(400);
    }
    expect(
      (
        await api("POST", "/v1/webhooks", {
          target_url: "https://hooks.example.com/x",
          event_types: ["invoice.paid"],
          secret: "mine",
        })
      ).status,
    ).toBe(400);
    const ok = await api("POST", "/v1/webhooks", {
      target_url: "https://hooks.example.com/x",
      event_types: ["invoice.paid"],
    });
    expect(ok.status).toBe(201);
    expect((await api("PATCH", `/v1/webhooks/${ok.body.id}`, { target_url: "http://192.168.1.1/x" })).status).toBe(400);
  });
});

describe("webhooks: delivering", () => {
  it("delivers a Standard Webhooks message the standardwebhooks package verifies, carrying the event's ledger position", async () => {
    const hook = await createWebhook("/ok");
    const event = await putEvent(ctx.root.orgDid, [hook.id], "invoice.paid", { invoice_id: "inv_42", amount: 1250 });
    await until(async () => receiver.at("/ok").filter((r) => r.body.includes(event.id)).length).toBe(1);
    const got = receiver.at("/ok").find((r) => r.body.includes(event.id))!;
    const message = new Webhook(hook.secret).verify(got.body, got.headers as Record<string, string>) as any;
    expect(got.headers["webhook-id"]).toBe(`msg_${event.id}_${hook.id}`);
    expect(message).toMatchObject({
      type: "invoice.paid",
      data: { event_id: event.id, payload: { invoice_id: "inv_42", amount: 1250 } },
    });
    expect(message.provenance).toMatchObject({ record_id: event.recordId, leaf_index: event.seq });
    expect(message.provenance.checkpoint_url).toMatch(new RegExp(`/v1/provenance/${event.recordId}/proof$`));
    const record = await api("GET", `/v1/provenance/${event.recordId}`);
    expect(record.body.seq).toBe(message.provenance.leaf_index);

    await until(async () => (await deliveries(hook.id)).length).toBe(1);
    const [d] = await deliveries(hook.id);
    expect(d).toMatchObject({ event_id: event.id, attempt: 1, status_code: 200, success: true, next_attempt_at: null });
    expect(d!.response_excerpt.length).toBeLessThanOrEqual(1024);
    expect(d!.response_excerpt).toContain("answer 200");
    // Every attempt leaves a provenance record.
    const db = await database();
    expect(
      await db.read.provenanceRecord.count({
        where: { resourceType: "webhook", resourceId: hook.id, requestId: `msg_${event.id}_${hook.id}` },
      }),
    ).toBe(1);
    const health = (await api("GET", `/v1/webhooks/${hook.id}`)).body.health;
    expect(health.last_success_at).not.toBeNull();
  });

  it("an event ingested through POST /v1/events/ingest reaches the matching webhooks (and only them), naming the ingest call's record", async () => {
    const hook = await createWebhook("/ingested", { event_types: ["billing.*"] });
    const exact = await createWebhook("/ingested-exact", { event_types: ["billing.invoice.paid"] });
    const other = await createWebhook("/ingested-other", { event_types: ["shipping.*"] });
    const res = await api("POST", "/v1/events/ingest", {
      type: "billing.invoice.paid",
      payload: { amount: 7 },
      id: "sender-77",
    });
    expect(res.status).toBe(202);
    expect(res.body.matched_subscriptions).toBe(2);
    await until(async () => receiver.at("/ingested").length + receiver.at("/ingested-exact").length).toBe(2);
    const got = receiver.at("/ingested")[0]!;
    const message = new Webhook(hook.secret).verify(got.body, got.headers as Record<string, string>) as any;
    const event = (await api("GET", `/v1/events/${res.body.event_id}`)).body;
    expect(message).toMatchObject({
      type: "billing.invoice.paid",
      data: { event_id: res.body.event_id, payload: { amount: 7 } },
      provenance: { record_id: event.provenance_record_id, leaf_index: event.leaf_index },
    });
    const record = await api("GET", `/v1/provenance/${event.provenance_record_id}`);
    expect(record.body).toMatchObject({
      operation: "POST /v1/events/ingest",
      resource_id: res.body.event_id,
      seq: event.leaf_index,
    });
    // The event's match names the delivery it caused.
    await until(
      async () =>
        (await api("GET", `/v1/events/${res.body.event_id}`)).body.matches.find(
          (m: any) => m.subscription_id === hook.id,
        )?.delivery_id,
    ).toMatch(/^whd_/);
    // The same sender id again dispatches nothing.
    expect(
      (
        await api("POST", "/v1/events/ingest", {
          type: "billing.invoice.paid",
          payload: { amount: 7 },
          id: "sender-77",
        })
      ).body.event_id,
    ).toBe(res.body.event_id);
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.at("/ingested")).toHaveLength(1);
    expect(receiver.at("/ingested-other")).toHaveLength(0);
    expect(await deliveries(exact.id)).toHaveLength(1);
    expect(await deliveries(other.id)).toHaveLength(0);
  });

  it("a receiver can check the event was logged: the delivery's record and its proof verify with `svc verify --record --proof --key`", async () => {
    const hook = await createWebhook("/proof", { event_types: ["proof.*"] });
    const res = await api("POST", "/v1/events/ingest", { type: "proof.checked", payload: { n: 1 } });
    await until(async () => receiver.at("/proof").length).toBe(1);
    const got = receiver.at("/proof")[0]!;
    const message = new Webhook(hook.secret).verify(got.body, got.headers as Record<string, string>) as any;
    expect(message.data.event_id).toBe(res.body.event_id);
    await catchUp(await database());
    const reader = await apiKey(["svc_api:provenance:read"]);
    const fetchText = async (url: string) =>
      (
        await fetch(url.replace(/^https?:\/\/[^/]+/, ctx.server.url), {
          headers: { authorization: `Bearer ${reader.token}` },
        })
      ).text();
    const dir = mkdtempSync(join(tmpdir(), "svc-webhook-proof-"));
    writeFileSync(
      join(dir, "record.json"),
      await fetchText(`${ctx.server.url}/v1/provenance/${message.provenance.record_id}`),
    );
    writeFileSync(join(dir, "proof.json"), await fetchText(message.provenance.checkpoint_url));
    writeFileSync(join(dir, "key.txt"), await fetchText(`${ctx.server.url}/v1/provenance/verifier-key`));
    const verified = await promisify(execFile)(process.execPath, [
      join(process.cwd(), "bin/svc.mjs"),
      "verify",
      "--record",
      join(dir, "record.json"),
      "--proof",
      join(dir, "proof.json"),
      "--key",
      join(dir, "key.txt"),
    ]);
    expect(verified.stdout).toContain(
      `ok: record ${message.provenance.record_id} (leaf ${message.provenance.leaf_index})`,
    );
    const record = JSON.parse(await fetchText(`${ctx.server.url}/v1/provenance/${message.provenance.record_id}`));
    expect(record).toMatchObject({ resource_type: "event", resource_id: res.body.event_id });
  });

  it("a receiver answering 500 then 200 is retried on the schedule and delivered once, with the same webhook-id", async () => {
    const hook = await createWebhook("/flaky");
    const event = await putEvent(ctx.root.orgDid, [hook.id]);
    await until(async () => (await deliveries(hook.id)).filter((d) => d.success).length).toBe(1);
    const log = (await deliveries(hook.id)).reverse();
    expect(log.map((d) => [d.attempt, d.status_code, d.success])).toEqual([
      [1, 500, false],
      [2, 200, true],
    ]);
    expect(log[0]!.next_attempt_at).not.toBeNull();
    expect(Date.parse(log[1]!.created_at) - Date.parse(log[0]!.created_at)).toBeGreaterThanOrEqual(150);
    const sent = receiver.at("/flaky");
    expect(sent).toHaveLength(2);
    expect(new Set(sent.map((r) => r.headers["webhook-id"]))).toEqual(new Set([`msg_${event.id}_${hook.id}`]));
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.at("/flaky")).toHaveLength(2);
  });

  it("a hanging receiver: the timeout is recorded and the event retried", async () => {
    const hook = await createWebhook("/hang");
    await putEvent(ctx.root.orgDid, [hook.id]);
    await until(async () => (await deliveries(hook.id)).some((d) => d.success)).toBe(true);
    const log = (await deliveries(hook.id)).reverse();
    expect(log[0]).toMatchObject({ attempt: 1, status_code: null, success: false });
    expect(log[0]!.error).toMatch(/outbound_timeout/);
    expect(log[0]!.duration_ms).toBeGreaterThanOrEqual(250);
    expect(log[1]).toMatchObject({ attempt: 2, status_code: 200, success: true });
  });

  it("a 3xx is a failure and is not followed", async () => {
    const hook = await createWebhook("/redirect");
    await putEvent(ctx.root.orgDid, [hook.id]);
    await until(async () => (await deliveries(hook.id)).length >= 2).toBe(true);
    const [d] = (await deliveries(hook.id)).reverse();
    expect(d).toMatchObject({ status_code: 307, success: false });
    expect(receiver.at("/landed")).toHaveLength(0);
  });

  it("410 disables the endpoint at once, with a webhook.disabled event", async () => {
    const watcher = await createWebhook("/watcher", { event_types: ["webhook.disabled"] });
    const hook = await createWebhook("/gone");
    await putEvent(ctx.root.orgDid, [hook.id]);
    await until(async () => (await api("GET", `/v1/webhooks/${hook.id}`)).body.status).toBe("disabled");
    const got = (await api("GET", `/v1/webhooks/${hook.id}`)).body;
    expect(got.health.disabled_reason).toBe("gone");
    const log = await deliveries(hook.id);
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ status_code: 410, success: false, next_attempt_at: null });
    const db = await database();
    const events = await db.read.event.findMany({ where: { orgDid: ctx.root.orgDid, type: "webhook.disabled" } });
    expect(
      events.some(
        (e) =>
          (e.payload as { webhook_id: string; reason: string }).webhook_id === hook.id &&
          (e.payload as { reason: string }).reason === "gone",
      ),
    ).toBe(true);
    // Put on the bus: a webhook subscribed to webhook.disabled hears of it.
    await until(
      async () =>
        receiver
          .at("/watcher")
          .map((r) => JSON.parse(r.body))
          .find((m) => m.data.payload.webhook_id === hook.id)?.data.payload.reason,
    ).toBe("gone");
    const notice = receiver.at("/watcher").find((r) => JSON.parse(r.body).data.payload.webhook_id === hook.id)!;
    expect(new Webhook(watcher.secret).verify(notice.body, notice.headers as Record<string, string>)).toMatchObject({
      type: "webhook.disabled",
      provenance: { record_id: expect.stringMatching(/^prv_/) },
    });
    // Disabled: further events are not sent.
    await putEvent(ctx.root.orgDid, [hook.id]);
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.at("/gone")).toHaveLength(1);
  });

  it("an endpoint failing for longer than the configured period is disabled with webhook.disabled; re-enabling starts over", async () => {
    const hook = await createWebhook("/fail");
    await putEvent(ctx.root.orgDid, [hook.id]);
    await until(async () => (await api("GET", `/v1/webhooks/${hook.id}`)).body.status, 8000).toBe("disabled");
    const got = (await api("GET", `/v1/webhooks/${hook.id}`)).body;
    expect(got.health).toMatchObject({ disabled_reason: "failing" });
    expect(got.health.consecutive_failures).toBeGreaterThanOrEqual(3);
    const log = await deliveries(hook.id);
    expect(log[0]!.next_attempt_at).toBeNull();
    const db = await database();
    const events = await db.read.event.findMany({ where: { orgDid: ctx.root.orgDid, type: "webhook.disabled" } });
    expect(
      events.some(
        (e) =>
          (e.payload as { webhook_id: string; reason: string }).webhook_id === hook.id &&
          (e.payload as { reason: string }).reason === "failing",
      ),
    ).toBe(true);
    // A replay of a disabled webhook is refused until it is re-enabled.
    expect((await api("POST", `/v1/webhooks/${hook.id}/deliveries/${log[0]!.id}/retry`)).status).toBe(409);
    const enabled = await api("PATCH", `/v1/webhooks/${hook.id}`, { status: "active" });
    expect(enabled.body).toMatchObject({ status: "active", health: { failing_since: null, disabled_reason: null } });
  });

  it("a delivery can be sent again by hand: one more attempt, same webhook-id", async () => {
    const hook = await createWebhook("/ok");
    const event = await putEvent(ctx.root.orgDid, [hook.id]);
    await until(async () => (await deliveries(hook.id)).length).toBe(1);
    const [first] = await deliveries(hook.id);
    const retried = await api("POST", `/v1/webhooks/${hook.id}/deliveries/${first!.id}/retry`);
    expect(retried.status).toBe(202);
    expect(retried.body).toMatchObject({ webhook_id: hook.id, event_id: event.id, status: "queued" });
    await until(async () => (await deliveries(hook.id)).length).toBe(2);
    expect((await deliveries(hook.id))[0]).toMatchObject({ attempt: 2, success: true, event_id: event.id });
    expect(
      new Set(
        receiver
          .at("/ok")
          .filter((r) => r.body.includes(event.id))
          .map((r) => r.headers["webhook-id"]),
      ),
    ).toEqual(new Set([`msg_${event.id}_${hook.id}`]));
    expect((await api("POST", `/v1/webhooks/${hook.id}/deliveries/whd_nope/retry`)).status).toBe(404);
  });

  it("rotate-secret: deliveries carry two signatures, each verifying alone", async () => {
    const hook = await createWebhook("/ok");
    const rotated = await api("POST", `/v1/webhooks/${hook.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(hook.secret);
    expect(Date.parse(rotated.body.previous_expires_at) - Date.now()).toBeGreaterThan(23 * 3600 * 1000);
    const event = await putEvent(ctx.root.orgDid, [hook.id]);
    await until(async () => receiver.at("/ok").filter((r) => r.body.includes(event.id)).length).toBe(1);
    const got = receiver.at("/ok").find((r) => r.body.includes(event.id))!;
    expect(String(got.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    expect(new Webhook(hook.secret).verify(got.body, got.headers as Record<string, string>)).toBeTruthy();
    expect(new Webhook(rotated.body.secret).verify(got.body, got.headers as Record<string, string>)).toBeTruthy();
  });

  it("revoking the delegation that created a webhook disables it", async () => {
    const key = await apiKey(["svc_api:events:write", "svc_api:events:read"]);
    const hook = await createWebhook("/ok", {}, key.token);
    const other = await createWebhook("/ok");
    const revoked = await api("POST", `/v1/delegations/${key.delegationId}/revoke`, { reason: "rotating keys" });
    expect(revoked.status).toBe(201);
    const got = (await api("GET", `/v1/webhooks/${hook.id}`)).body;
    expect(got).toMatchObject({ status: "disabled", health: { disabled_reason: "delegation_revoked" } });
    expect((await api("GET", `/v1/webhooks/${other.id}`)).body.status).toBe("active");
    await putEvent(ctx.root.orgDid, [hook.id]);
    await new Promise((r) => setTimeout(r, 300));
    expect(await deliveries(hook.id)).toHaveLength(0);
  });

  it("delete removes it: 404 after, queued deliveries send nothing", async () => {
    const hook = await createWebhook("/deleted", { event_types: ["invoice.paid"] });
    const del = await api("DELETE", `/v1/webhooks/${hook.id}`);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ id: hook.id, deleted: true });
    expect((await api("GET", `/v1/webhooks/${hook.id}`)).status).toBe(404);
    expect((await api("DELETE", `/v1/webhooks/${hook.id}`)).status).toBe(404);
    await putEvent(ctx.root.orgDid, [hook.id]);
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.at("/deleted")).toHaveLength(0);
  });

  it("another organization sees none of it (404)", async () => {
    const hook = await createWebhook("/ok");
    const tenant = await secondOrg(ctx.server.url, ctx.root.token, "Webhook tenant");
    for (const [method, path, body] of [
      ["GET", `/v1/webhooks/${hook.id}`],
      ["PATCH", `/v1/webhooks/${hook.id}`, { description: "mine" }],
      ["DELETE", `/v1/webhooks/${hook.id}`],
      ["GET", `/v1/webhooks/${hook.id}/deliveries`],
      ["POST", `/v1/webhooks/${hook.id}/rotate-secret`],
      ["POST", `/v1/webhooks/${hook.id}/deliveries/whd_x/retry`],
    ] as const) {
      expect((await api(method, path, body, tenant.token)).status, `${method} ${path}`).toBe(404);
    }
    const list = await api("GET", "/v1/webhooks", undefined, tenant.token);
    expect(list.body.data).toEqual([]);
    expect((await api("GET", `/v1/webhooks/${hook.id}`)).body.status).toBe("active");
  });

  it("needs events:read to list and events:write to create", async () => {
    const reader = await apiKey(["svc_api:events:read"]);
    expect((await api("GET", "/v1/webhooks", undefined, reader.token)).status).toBe(200);
    expect(
      (
        await api(
          "POST",
          "/v1/webhooks",
          { target_url: "https://hooks.example.com/x", event_types: ["a.b"] },
          reader.token,
        )
      ).status,
    ).toBe(403);
  });
});
