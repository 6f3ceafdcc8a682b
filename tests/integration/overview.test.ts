import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resetConfig } from "@/server/config";
import { database } from "@/server/db/client";
import { newId } from "@/server/ids";
import { shutdownSandbox } from "@/server/sandbox/pool";
import { rootOrgDid } from "@/server/setup/bootstrap";
import { createCaller } from "@/server/appRouter";
import { startWorker, type Worker } from "@/server/worker/worker";
import { deployAndWait } from "./agentsHelpers";
import { consoleMember } from "./consoleMembers";
import { apiKey, call, lastProvenance, useTestServer } from "./harness";

/**
 * The overview's dashboard (issue "Found from outside, second round", item 9): one governed read
 * whose figures are aggregations in SQL over the caller's organization, on both engines.
 */
const ctx = useTestServer();
let worker: Worker;
beforeAll(() => {
  process.env.SVC_OUTBOUND_ALLOW = "127.0.0.1/32";
  resetConfig();
  worker = startWorker({ log: () => undefined, tasks: [] });
});
afterAll(async () => {
  await worker.stop();
  await shutdownSandbox();
});

const person = async (role: "admin" | "viewer") => (await consoleMember(role)).caller;

const api = (method: string, path: string, body?: unknown, token = ctx.root.token) =>
  call(ctx.server.url, method, path, { token, body });

describe("the overview's dashboard", () => {
  it("counts calls per hour (allowed vs refused, the console's own reads left out), executions by status with the success rate, webhook health and what needs attention", async () => {
    const admin = await person("admin");
    const ok = await deployAndWait(ctx.server.url, ctx.root.token, "dash-ok", "export default async () => 1");
    const bad = await deployAndWait(
      ctx.server.url,
      ctx.root.token,
      "dash-bad",
      `export default async () => { throw new Error("nope"); }`,
    );
    const runs = [
      (await api("POST", `/v1/agents/${ok}/invoke`, {})).body.id,
      (await api("POST", `/v1/agents/${bad}/invoke`, { max_attempts: 1 })).body.id,
    ] as string[];
    await expect
      .poll(async () => Promise.all(runs.map(async (id) => (await api("GET", `/v1/executions/${id}`)).body.status)), {
        timeout: 20_000,
        interval: 50,
      })
      .toEqual(["completed", "failed"]);
    // A refused call, a webhook its creator disabled, a key that expires in three days.
    expect((await api("GET", "/v1/passports", undefined, "svc_nope")).status).toBe(401);
    const weak = await apiKey(["svc_api:agents:read"]);
    expect((await api("GET", "/v1/passports", undefined, weak.token)).status).toBe(403);
    const hook = (
      await api("POST", "/v1/webhooks", {
        target_url: "http://127.0.0.1:9/hook?token=secret",
        event_types: ["invoice.*"],
      })
    ).body;
    expect((await api("PATCH", `/v1/webhooks/${hook.id}`, { status: "disabled" })).status).toBe(200);
    const expiring = await apiKey(["svc_api:agents:read"], undefined, 3 * 86_400);

    const first = await admin.overview.dashboard();
    expect(await lastProvenance()).toMatchObject({
      operation: "TRPC overview.dashboard",
      decision: "allowed",
      status: 200,
    });
    expect(first.calls_per_hour).toHaveLength(24);
    const now = first.calls_per_hour!.at(-1)!;
    expect(now.hour).toBe(`${new Date().toISOString().slice(0, 13)}:00:00Z`);
    expect(now.refused).toBeGreaterThanOrEqual(1);
    expect(now.allowed).toBeGreaterThanOrEqual(6);
    // The dashboard's own read (and any other console read) is not a call the chart counts.
    await admin.identity.passports.list({ limit: 1 });
    const second = await admin.overview.dashboard();
    expect(second.calls_per_hour!.at(-1)!.allowed).toBe(now.allowed);

    expect(first.executions).toMatchObject({
      days: 7,
      by_status: { completed: 1, failed: 1, queued: 0, processing: 0, cancelled: 0 },
      success_rate: 0.5,
    });
    expect(first.webhooks).toMatchObject({ disabled: 1, active: 0, failing: 0 });
    expect(first.ledger).toMatchObject({ status: expect.stringMatching(/in_sync|behind/) });
    expect(first.attention.failed_executions).toEqual([
      expect.objectContaining({ id: runs[1], agent_id: bad, agent_name: "dash-bad" }),
    ]);
    // Origin and path only: the query string's token never reaches the page.
    expect(first.attention.disabled_webhooks).toEqual([
      { id: hook.id, target: "http://127.0.0.1:9/hook", reason: "manual" },
    ]);
    expect(first.attention.expiring_keys.map((k) => k.id)).toContain(expiring.delegationId);
  }, 60_000);

  it("needs attention: open approvals oldest first, with what each blocks, and the workflows blocked on one", async () => {
    const admin = await person("admin");
    const before = await admin.overview.dashboard();
    expect(before.attention.pending_approvals).toEqual([]);
    expect(before.attention.blocked_workflows).toEqual([]);
    const loose = await api("POST", "/v1/approvals", {
      task_id: "task-dash",
      agent_id: "agt_external",
      action_description: "Refund invoice INV-9",
      risk_level: "low",
      request_data: { amount: 9 },
    });
    expect(loose.status, JSON.stringify(loose.body)).toBe(201);
    const started = await api("POST", "/v1/workflows", {
      name: "refund-flow",
      nodes: [
        { id: "ask", node_type: "approval", approval: { action_description: "Refund 1,250 EUR", risk_level: "high" } },
        { id: "pay", node_type: "svc", operation: "emitEvent", input: { type: "wf.pay" } },
      ],
      edges: [{ from_node_id: "ask", to_node_id: "pay", edge_type: "success" }],
    });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const workflowId = started.body.workflow_id as string;
    await expect
      .poll(async () => (await admin.overview.dashboard()).attention.blocked_workflows, {
        timeout: 20_000,
        interval: 50,
      })
      .toEqual([expect.objectContaining({ id: workflowId, name: "refund-flow", node: "ask" })]);
    const d = await admin.overview.dashboard();
    // The oldest first: the request filed first heads the list, whatever its risk.
    expect(d.attention.pending_approvals.map((a) => a.id)[0]).toBe(loose.body.id);
    expect(d.attention.pending_approvals[0]).toMatchObject({
      action_description: "Refund invoice INV-9",
      blocks: null,
    });
    const flowRequest = d.attention.pending_approvals[1]!;
    expect(flowRequest).toMatchObject({
      risk_level: "high",
      blocks: { kind: "workflow", id: workflowId, name: "refund-flow" },
    });
    expect(d.attention.blocked_workflows[0]!.approval_id).toBe(flowRequest.id);
    // A viewer reads approvals and workflows too; a decision takes the request off the list.
    const viewer = await person("viewer");
    expect((await viewer.overview.dashboard()).attention.pending_approvals).toHaveLength(2);
  }, 60_000);

  it("is the console's own: a bearer token is refused", async () => {
    const { token } = await apiKey(["svc_api:*"]);
    const bearer = createCaller({
      authorization: `Bearer ${token}`,
      clientAddress: "127.0.0.1",
      requestId: newId("req"),
    });
    await expect(bearer.overview.dashboard()).rejects.toMatchObject({ code: "FORBIDDEN" });
  });
});
