import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resetConfig } from "@/server/config";
import { database } from "@/server/db/client";
import { newId } from "@/server/ids";
import { checkConnectorHealth } from "@/server/marketplace/checkConnectorHealth";
import { shutdownSandbox } from "@/server/sandbox/pool";
import { startWorker, type Worker } from "@/server/worker/worker";
import { deployAndWait } from "./agentsHelpers";
import { apiKey, call, secondOrg, useTestServer, waitFor } from "./harness";
import { startProvider } from "./marketplaceProvider";

/**
 * Invocations, usage, ratings and health of installed connectors, through /v1 on both engines.
 * The generic HTTP/JSON connector (no OAuth) is pointed at a loopback provider API; the OAuth
 * journey (consent, tokens) is in marketplaceOAuthInvoke.test.ts.
 */
process.env.SVC_CONNECTOR_MAX_RESPONSE_BYTES = String(1024 * 1024);
process.env.SVC_CONNECTOR_TIMEOUT_MS = "2000";

const ctx = useTestServer();
let provider: Awaited<ReturnType<typeof startProvider>>;
let worker: Worker;

beforeAll(async () => {
  provider = await startProvider({ open: true });
  process.env.SVC_OUTBOUND_ALLOW = provider.hostPort;
  resetConfig();
  worker = startWorker({ log: () => undefined, tasks: [] });
});
afterAll(async () => {
  await worker.stop();
  await shutdownSandbox();
  await provider.close();
});

const api = (method: string, path: string, body?: unknown, token = ctx.root.token) =>
  call(ctx.server.url, method, path, { token, body });

async function install(extra: Record<string, unknown> = {}, token = ctx.root.token) {
  const res = await api(
    "POST",
    "/v1/marketplace/connectors/http-json/install",
    { deployment_mode: "cloud", config: {}, base_url: `${provider.url}/api`, ...extra },
    token,
  );
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect(res.body.status).toBe("active");
  return res.body.installation_id as string;
}
const invoke = (id: string, action: string, input: Record<string, unknown>, token = ctx.root.token) =>
  api("POST", `/v1/marketplace/installations/${id}/invoke`, { action, input }, token);

describe("invoke", () => {
  it("calls the provider, answers its status and result, records the invocation linked to its provenance record", async () => {
    const id = await install();
    const res = await invoke(id, "get_json", { resource: "issues", state: "open" });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      status_code: 200,
      successful: true,
      error: null,
      result: { method: "GET", path: "/api/issues", query: { state: "open" } },
    });
    expect(res.body.invocation_id).toMatch(/^civ_/);
    expect(res.body.duration_ms).toBeGreaterThanOrEqual(0);
    const db = await database();
    const row = await db.read.connectorInvocation.findUniqueOrThrow({ where: { id: res.body.invocation_id } });
    expect(row).toMatchObject({
      status: "success",
      statusCode: 200,
      action: "get_json",
      connectorId: "http-json",
      provenanceRecordId: res.body.provenance_id,
    });
    const record = await db.read.provenanceRecord.findUniqueOrThrow({ where: { id: res.body.provenance_id } });
    expect(record).toMatchObject({
      operation: "POST /v1/marketplace/installations/{id}/invoke",
      capability: "svc_api:marketplace:invoke",
      resourceId: id,
      decision: "allowed",
    });
    const posted = await invoke(id, "post_json", { resource: "notes", title: "hi", tags: ["a"] });
    expect(posted.body.result).toMatchObject({
      method: "POST",
      path: "/api/notes",
      body: { title: "hi", tags: ["a"] },
    });
  });

  it("reports a provider's error status as an outcome, counted as a failed invocation", async () => {
    const id = await install();
    // `/` in a path value is encoded: an input cannot add path segments.
    expect((await invoke(id, "get_json", { resource: "status/503" })).body.result.path).toBe("/api/status%2F503");
    const db = await database();
    const bad = await install({ base_url: `${provider.url}/api/status` });
    const r = await invoke(bad, "get_json", { resource: "404" });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status_code: 404, successful: false, error: null, result: { status: 404 } });
    expect((await db.read.connectorInvocation.findUniqueOrThrow({ where: { id: r.body.invocation_id } })).status).toBe(
      "failed",
    );
  });

  it("refuses input that does not match the action's input_schema (400 errors[]), an unknown action (400), without calling the provider", async () => {
    const id = await install();
    const before = provider.received.length;
    const res = await invoke(id, "get_json", { state: "open" });
    expect(res.status).toBe(400);
    expect(res.body.errors).toContainEqual(
      expect.objectContaining({ field: "input.resource", code: "REQUIRED_FIELD_MISSING" }),
    );
    const wrongType = await invoke(id, "get_json", { resource: 5 });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.errors[0]).toMatchObject({ field: "input.resource", code: "INVALID_TYPE" });
    const unknown = await invoke(id, "delete_everything", {});
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors[0]).toMatchObject({ field: "action", code: "INVALID_ENUM" });
    const dotdot = await invoke(id, "get_json", { resource: ".." });
    expect(dotdot.status).toBe(400);
    expect(provider.received.length).toBe(before);
  });

  it("refuses an action outside granted_permissions (403, recorded denied)", async () => {
    const id = await install({ granted_permissions: ["get_json"] });
    const res = await invoke(id, "post_json", { resource: "notes" });
    expect(res.status).toBe(403);
    expect(res.body.type).toMatch(/action-not-granted|action_not_granted/);
    expect(res.body.detail).toContain("get_json");
    const db = await database();
    const record = await db.read.provenanceRecord.findFirstOrThrow({
      where: { operation: "POST /v1/marketplace/installations/{id}/invoke", resourceId: id },
      orderBy: { seq: "desc" },
    });
    expect(record).toMatchObject({ decision: "denied", status: 403 });
    expect(await db.read.connectorInvocation.count({ where: { installationId: id } })).toBe(0);
  });

  it("answers 409 for a suspended or uninstalled installation", async () => {
    const id = await install();
    expect((await api("PATCH", `/v1/marketplace/installations/${id}`, { status: "suspended" })).status).toBe(200);
    const suspended = await invoke(id, "get_json", { resource: "x" });
    expect(suspended.status).toBe(409);
    expect(suspended.body.current_state).toBe("suspended");
    expect((await api("PATCH", `/v1/marketplace/installations/${id}`, { status: "active" })).status).toBe(200);
    expect((await invoke(id, "get_json", { resource: "x" })).status).toBe(200);
    expect((await api("DELETE", `/v1/marketplace/installations/${id}`)).status).toBe(200);
    const gone = await invoke(id, "get_json", { resource: "x" });
    expect(gone.status).toBe(409);
    expect(gone.body.current_state).toBe("uninstalled");
  });

  it("needs svc_api:marketplace:invoke, and another organization's installation is not found", async () => {
    const id = await install();
    const reader = await apiKey(["svc_api:marketplace:read"]);
    expect((await invoke(id, "get_json", { resource: "x" }, reader.token)).status).toBe(403);
    const other = await secondOrg(ctx.server.url, ctx.root.token);
    expect((await invoke(id, "get_json", { resource: "x" }, other.token)).status).toBe(404);
  });

  it("drops a 50 MB answer at the cap: the invocation fails cleanly, nothing of it is returned", async () => {
    const big = await install({ base_url: `${provider.url}/big` });
    const out = await invoke(big, "get_json", { resource: String(50 * 1024 * 1024) });
    expect(out.status).toBe(200);
    expect(out.body).toMatchObject({
      status_code: 200,
      successful: false,
      result: null,
      error: { code: "connector_answer_too_large" },
    });
    const db = await database();
    expect(
      (await db.read.connectorInvocation.findUniqueOrThrow({ where: { id: out.body.invocation_id } })).error,
    ).toMatch(/connector_answer_too_large/);
  });

  it("a provider that does not answer in time is an outcome with status_code null", async () => {
    const id = await install({ base_url: `${provider.url}/slow` });
    const out = await invoke(id, "get_json", { resource: "5000" });
    expect(out.status).toBe(200);
    expect(out.body).toMatchObject({ status_code: null, successful: false, error: { code: "outbound_timeout" } });
  });

  it("refuses a base URL at a private address (at install, and at invoke when the row points there)", async () => {
    const refused = await api("POST", "/v1/marketplace/connectors/http-json/install", {
      deployment_mode: "cloud",
      config: {},
      base_url: "http://10.1.2.3/api",
    });
    expect(refused.status).toBe(400);
    const id = await install();
    const db = await database();
    await db.writeTx((tx) =>
      tx.connectorInstallation.update({ where: { id }, data: { baseUrl: "http://169.254.169.254/latest" } }),
    );
    const res = await invoke(id, "get_json", { resource: "meta-data" });
    expect(res.status).toBe(400);
    expect(res.body.type).toMatch(/outbound/);
    expect(await db.read.connectorInvocation.count({ where: { installationId: id } })).toBe(0);
  });
});

describe("usage", () => {
  it("is computed from the invocation records: 30 UTC days, totals, failures, cost, every day present", async () => {
    const id = await install();
    for (let i = 0; i < 3; i++) expect((await invoke(id, "get_json", { resource: "ok" })).body.successful).toBe(true);
    const db = await database();
    const installation = await db.read.connectorInstallation.findUniqueOrThrow({ where: { id } });
    const day = 86_400_000;
    // An invocation three days ago (counted on its day) and one 40 days ago (outside the period).
    await db.writeTx(async (tx) => {
      for (const [ago, status, cost] of [
        [3, "failed", 0.25],
        [40, "success", 1],
      ] as const) {
        await tx.connectorInvocation.create({
          data: {
            id: newId("civ"),
            orgDid: installation.orgDid,
            installationId: id,
            connectorId: "http-json",
            action: "get_json",
            status,
            statusCode: 500,
            durationMs: 100,
            costUsd: cost,
            createdAt: new Date(Date.now() - ago * day),
          },
        });
      }
    });
    const res = await api("GET", `/v1/marketplace/installations/${id}/usage`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ installation_id: id, connector_id: "http-json", period: "30d" });
    expect(res.body.statistics).toMatchObject({
      total_invocations: 4,
      successful_invocations: 3,
      failed_invocations: 1,
      total_cost_usd: 0.25,
    });
    expect(res.body.statistics.last_invocation_at).not.toBeNull();
    const days = res.body.daily_breakdown as { date: string; invocations: number; cost_usd: number }[];
    expect(days).toHaveLength(30);
    expect(days.at(-1)!.date).toBe(new Date().toISOString().slice(0, 10));
    expect(days.at(-1)!.invocations).toBe(3);
    const threeAgo = new Date(Date.now() - 3 * day).toISOString().slice(0, 10);
    expect(days.find((d) => d.date === threeAgo)).toEqual({ date: threeAgo, invocations: 1, cost_usd: 0.25 });
    expect(days.reduce((n, d) => n + d.invocations, 0)).toBe(4);
    const listed = await api("GET", `/v1/marketplace/installations/${id}`);
    expect(listed.body.invocation_count_30d).toBe(4);
  });

  it("of another organization's installation is not found", async () => {
    const id = await install();
    const other = await secondOrg(ctx.server.url, ctx.root.token);
    expect((await api("GET", `/v1/marketplace/installations/${id}/usage`, undefined, other.token)).status).toBe(404);
  });
});

describe("ratings", () => {
  it("only organizations that used the connector successfully rate it; one rating per person, updated by a second POST; summary computed", async () => {
    const other = await secondOrg(ctx.server.url, ctx.root.token, "Rater Org");
    const refused = await api("POST", "/v1/marketplace/connectors/http-json/ratings", { rating: 5 }, other.token);
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toMatch(/no successful invocation/);
    const id = await install({}, other.token);
    // A failed invocation is not usage.
    const failing = await install({ base_url: `${provider.url}/api/status` }, other.token);
    expect((await invoke(failing, "get_json", { resource: "500" }, other.token)).body.successful).toBe(false);
    expect((await api("POST", "/v1/marketplace/connectors/http-json/ratings", { rating: 5 }, other.token)).status).toBe(
      403,
    );
    expect((await invoke(id, "get_json", { resource: "ok" }, other.token)).body.successful).toBe(true);
    const first = await api(
      "POST",
      "/v1/marketplace/connectors/http-json/ratings",
      { rating: 2, review_text: "Slow docs" },
      other.token,
    );
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(first.body).toMatchObject({
      rating: 2,
      review_text: "Slow docs",
      user: { display_name: expect.any(String) },
    });
    const second = await api("POST", "/v1/marketplace/connectors/http-json/ratings", { rating: 4 }, other.token);
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ rating_id: first.body.rating_id, rating: 4, review_text: null });
    // The root organization used it in the tests above: its key rates too.
    await invoke(await install(), "get_json", { resource: "ok" });
    expect((await api("POST", "/v1/marketplace/connectors/http-json/ratings", { rating: 5 })).status).toBe(201);
    const list = await api("GET", "/v1/marketplace/connectors/http-json/ratings?limit=1");
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(1);
    expect(list.body.pagination.has_more).toBe(true);
    const page2 = await api(
      "GET",
      `/v1/marketplace/connectors/http-json/ratings?limit=1&cursor=${encodeURIComponent(list.body.pagination.next_cursor)}`,
    );
    expect(page2.body.data).toHaveLength(1);
    expect(page2.body.data[0].rating_id).not.toBe(list.body.data[0].rating_id);
    const summary = await api("GET", "/v1/marketplace/connectors/http-json/ratings/summary");
    expect(summary.body).toEqual({ average: 4.5, count: 2, distribution: { "1": 0, "2": 0, "3": 0, "4": 1, "5": 1 } });
    const details = await api("GET", "/v1/marketplace/connectors/http-json");
    expect(details.body.statistics).toMatchObject({ rating_average: 4.5, rating_count: 2 });
  });

  it("refuses a rating outside 1..5 and an unknown connector", async () => {
    for (const rating of [0, 6, 2.5, "5"])
      expect(
        (await api("POST", "/v1/marketplace/connectors/http-json/ratings", { rating })).status,
        String(rating),
      ).toBe(400);
    expect((await api("GET", "/v1/marketplace/connectors/nope/ratings/summary")).status).toBe(404);
    expect((await api("POST", "/v1/marketplace/connectors/nope/ratings", { rating: 3 })).status).toBe(404);
  });
});

describe("health check", () => {
  it("feeds health_status: healthy when the API answers, degraded on 5xx, down when unreachable", async () => {
    const db = await database();
    const healthy = await install();
    const degraded = await install({ base_url: `${provider.url}/status/503` });
    const down = await install();
    await db.writeTx((tx) =>
      tx.connectorInstallation.update({ where: { id: down }, data: { baseUrl: "http://127.0.0.1:1/api" } }),
    );
    const written = await checkConnectorHealth(db, { connectorIds: ["http-json"] });
    expect(written).toBeGreaterThanOrEqual(4);
    const status = async (id: string) => (await api("GET", `/v1/marketplace/installations/${id}`)).body.health_status;
    expect(await status(healthy)).toBe("healthy");
    expect(await status(degraded)).toBe("degraded");
    expect(await status(down)).toBe("down");
    const connector = await api("GET", "/v1/marketplace/connectors/http-json");
    expect(["healthy", "degraded", "down"]).toContain(connector.body.health_status);
    expect(connector.body.last_health_check_at).not.toBeNull();
  });
});

describe("ctx.connectors.invoke", () => {
  it("runs the governed invoke under the run's delegation and returns the /v1 invoke's answer; refusals reach the guest by code", async () => {
    const id = await install({ granted_permissions: ["get_json"] });
    const code = `export default async (input, ctx) => {
      const ok = await ctx.connectors.invoke(input.installation_id, "get_json", { resource: "from-agent", n: 1 });
      let refused;
      try { await ctx.connectors.invoke(input.installation_id, "post_json", { resource: "x" }); }
      catch (e) { refused = { name: e.name, message: e.message }; }
      let invalid;
      try { await ctx.connectors.invoke(input.installation_id, "get_json", {}); }
      catch (e) { invalid = { name: e.name }; }
      return { ok, refused, invalid };
    }`;
    const agentId = await deployAndWait(ctx.server.url, ctx.root.token, "connector-user", code, {
      capabilities: [{ id: "svc_api:marketplace:invoke", evidence: ["invokes connectors"] }],
    });
    const started = await api("POST", `/v1/agents/${agentId}/invoke`, { input: { installation_id: id } });
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    const run = await waitFor(
      "the run",
      async () => {
        const got = await api("GET", `/v1/executions/${started.body.id}`);
        return ["completed", "failed", "cancelled"].includes(got.body.status) ? got.body : undefined;
      },
      30_000,
    );
    expect(run.status, JSON.stringify(run)).toBe("completed");
    // The same shape as the /v1 invoke's answer.
    expect(run.result_json).toMatchObject({
      ok: {
        invocation_id: expect.stringMatching(/^\w+_/),
        status_code: 200,
        successful: true,
        error: null,
        provenance_id: expect.stringMatching(/^prv_/),
        result: { method: "GET", path: "/api/from-agent", query: { n: "1" } },
      },
      refused: { name: "action_not_granted" },
      invalid: { name: "validation_failed" },
    });
    const db = await database();
    const rows = await db.read.connectorInvocation.findMany({ where: { installationId: id } });
    expect(rows).toHaveLength(1);
    expect(run.result_json.ok).toMatchObject({
      invocation_id: rows[0]!.id,
      provenance_id: rows[0]!.provenanceRecordId,
    });
    const record = await db.read.provenanceRecord.findUniqueOrThrow({ where: { id: rows[0]!.provenanceRecordId! } });
    const execution = await db.read.asyncExecution.findUniqueOrThrow({ where: { id: run.id } });
    expect(record).toMatchObject({ delegationId: execution.delegationId, decision: "allowed" });
  });
});
