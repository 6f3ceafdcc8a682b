import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { database } from "@/server/db/client";
import { shutdownSandbox } from "@/server/sandbox/pool";
import type { ApprovalStatus } from "@/server/approvals/schemas";
import { settleApproval } from "@/server/approvals/settleApproval";
import { runNodeJob } from "@/server/workflows/runNode";
import { startWorker, type Worker } from "@/server/worker/worker";
import { apiKey, call, ed25519Jwk, waitFor, useTestServer } from "./harness";
import { deployAndWait } from "./agentsHelpers";

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

type Node = { id: string; node_type: string; [k: string]: unknown };
type Edge = { from_node_id: string; to_node_id: string; edge_type: string };
const start = (body: { name?: string; input?: object; nodes: Node[]; edges: Edge[] }, token = ctx.root.token) =>
  call(ctx.server.url, "POST", "/v1/workflows", { token, body });
const get = (id: string, token = ctx.root.token) => call(ctx.server.url, "GET", `/v1/workflows/${id}`, { token });
const ended = (id: string, token = ctx.root.token) =>
  waitFor(
    `workflow ${id} to end`,
    async () => {
      const res = await get(id, token);
      return res.body.status === "running" ? undefined : res.body;
    },
    30_000,
  );
const byName = (dag: { nodes: { node_name: string }[] }) =>
  Object.fromEntries(dag.nodes.map((n) => [n.node_name, n])) as Record<string, any>;
const emit = (id: string, type: string) => ({ id, node_type: "svc", operation: "emitEvent", input: { type } });

describe("workflow definitions", () => {
  const errorsOf = async (nodes: Node[], edges: Edge[]) => {
    const res = await start({ nodes, edges });
    expect(res.status).toBe(400);
    return res.body.errors as { field: string; code: string; message: string }[];
  };

  it("refuses a cycle, naming the nodes on it", async () => {
    const errors = await errorsOf(
      [{ id: "a", node_type: "fork" }, emit("b", "t.b"), emit("c", "t.c"), emit("d", "t.d")],
      [
        { from_node_id: "a", to_node_id: "b", edge_type: "fork" },
        { from_node_id: "a", to_node_id: "d", edge_type: "fork" },
        { from_node_id: "b", to_node_id: "c", edge_type: "sequence" },
        { from_node_id: "c", to_node_id: "b", edge_type: "sequence" },
      ],
    );
    expect(errors.filter((e) => e.code === "WORKFLOW_CYCLE").map((e) => e.field)).toEqual(["nodes[1]", "nodes[2]"]);
  });

  it("refuses a dangling edge, a join without its fork and a condition without both branches", async () => {
    const dangling = await errorsOf(
      [emit("a", "t.a")],
      [{ from_node_id: "a", to_node_id: "ghost", edge_type: "sequence" }],
    );
    expect(dangling).toContainEqual(expect.objectContaining({ field: "edges[0].to_node_id", code: "DANGLING_EDGE" }));

    const join = await errorsOf(
      [emit("a", "t.a"), emit("b", "t.b"), { id: "j", node_type: "join" }],
      [
        { from_node_id: "a", to_node_id: "b", edge_type: "sequence" },
        { from_node_id: "b", to_node_id: "j", edge_type: "join" },
      ],
    );
    expect(join).toContainEqual(expect.objectContaining({ field: "nodes[2]", code: "JOIN_WITHOUT_FORK" }));

    const condition = await errorsOf(
      [{ id: "c", node_type: "condition", condition: { "==": [1, 1] } }, emit("yes", "t.yes")],
      [{ from_node_id: "c", to_node_id: "yes", edge_type: "condition_true" }],
    );
    expect(condition).toContainEqual(expect.objectContaining({ field: "nodes[0]", code: "CONDITION_BRANCHES" }));
    expect(condition.find((e) => e.code === "CONDITION_BRANCHES")!.message).toContain("condition_false");
  });

  it("refuses code as a condition, unknown JSON Logic operations, unknown operations and missing node fields", async () => {
    const errors = await errorsOf(
      [
        { id: "f", node_type: "fork" },
        { id: "c", node_type: "condition", condition: "input.amount > 1000" },
        { id: "d", node_type: "condition", condition: { eval: ["process.exit()"] } },
        { id: "s", node_type: "svc", operation: "noSuchOperation" },
        { id: "g", node_type: "agent" },
      ],
      [
        { from_node_id: "f", to_node_id: "c", edge_type: "fork" },
        { from_node_id: "f", to_node_id: "d", edge_type: "fork" },
        { from_node_id: "f", to_node_id: "s", edge_type: "fork" },
        { from_node_id: "f", to_node_id: "g", edge_type: "fork" },
      ],
    );
    const fields = errors.map((e) => `${e.field} ${e.code}`);
    expect(fields).toEqual(
      expect.arrayContaining([
        "nodes[1].condition INVALID_CONDITION",
        "nodes[2].condition INVALID_CONDITION",
        "nodes[3].operation UNKNOWN_OPERATION",
        "nodes[4].agent_id REQUIRED_FIELD_MISSING",
      ]),
    );
  });

  it("refuses unknown fields, a bad node_type and more nodes than the limit (schema errors, 400)", async () => {
    const res = await start({ nodes: [{ id: "a", node_type: "robot" }], edges: [], ...{ extra: 1 } } as never);
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { code: string }) => e.code)).toEqual(
      expect.arrayContaining(["INVALID_ENUM", "UNKNOWN_FIELD"]),
    );
    const many = await start({ nodes: Array.from({ length: 501 }, (_, i) => emit(`n${i}`, "t.x")), edges: [] });
    expect(many.status).toBe(400);
    expect(many.body.errors[0]).toMatchObject({ field: "nodes", code: "OUT_OF_RANGE" });
  });
});

describe("running workflows", () => {
  it("runs a fork, a condition and a join: the untaken branch is skipped, stats are computed, every node is recorded under the workflow's delegation", async () => {
    const res = await start({
      name: "fork-condition",
      input: { amount: 1250 },
      nodes: [
        { id: "start", node_type: "fork" },
        { id: "big", node_type: "condition", condition: { ">": [{ var: "input.amount" }, 1000] } },
        emit("review", "wf.review"),
        emit("autopay", "wf.autopay"),
        emit("notify", "wf.notify"),
        { id: "done", node_type: "join" },
      ],
      edges: [
        { from_node_id: "start", to_node_id: "big", edge_type: "fork" },
        { from_node_id: "start", to_node_id: "notify", edge_type: "fork" },
        { from_node_id: "big", to_node_id: "review", edge_type: "condition_true" },
        { from_node_id: "big", to_node_id: "autopay", edge_type: "condition_false" },
        { from_node_id: "review", to_node_id: "done", edge_type: "join" },
        { from_node_id: "autopay", to_node_id: "done", edge_type: "join" },
        { from_node_id: "notify", to_node_id: "done", edge_type: "join" },
      ],
    });
    expect(res.status).toBe(201);
    expect(res.body.nodes).toHaveLength(6);
    expect(res.body.root_node.node_name).toBe("start");
    expect(res.body.stats).toMatchObject({ total_nodes: 6, pending: 6, completed: 0 });
    const dag = await ended(res.body.workflow_id);
    expect(dag.status).toBe("completed");
    const n = byName(dag);
    expect(n.big.output).toEqual({ result: true });
    expect(n.review.status).toBe("completed");
    expect(n.autopay.status).toBe("skipped");
    expect(n.done.status).toBe("completed");
    expect(Object.keys(n.done.output.branches).sort()).toEqual(["notify", "review"]);
    expect(dag.stats).toMatchObject({ total_nodes: 6, completed: 5, skipped: 1, failed: 0, running: 0, pending: 0 });
    expect(dag.stats.total_duration_ms).toBeGreaterThanOrEqual(0);
    for (const node of dag.nodes.filter((x: any) => x.status === "completed"))
      expect(node.duration_ms, node.node_name).toBeGreaterThanOrEqual(0);
    // The svc node made one governed call, recorded under the workflow's own delegation, allowed by the starter.
    expect(n.review.output.event_id).toMatch(/^evt_/);
    const db = await database();
    const record = await db.read.provenanceRecord.findUniqueOrThrow({ where: { id: n.review.provenance_id } });
    expect(record).toMatchObject({
      operation: "POST /v1/events/emit",
      delegationId: dag.delegation_id,
      decision: "allowed",
      status: 202,
    });
    const delegation = await db.read.delegation.findUniqueOrThrow({ where: { id: dag.delegation_id } });
    expect(delegation.kind).toBe("workflow");
    expect(delegation.ancestry.split(" ")).toContain(ctx.root.delegationId);
    // Its delegation ended with it.
    expect(delegation.revokedAt).not.toBeNull();
  });

  it("follows a failure edge when a node fails; without one the workflow fails and what had not run is skipped", async () => {
    const handled = await start({
      nodes: [
        { id: "lookup", node_type: "svc", operation: "getAgentStatus", input: { id: "agt_missing" } },
        emit("fallback", "wf.fallback"),
        emit("next", "wf.next"),
      ],
      edges: [
        { from_node_id: "lookup", to_node_id: "fallback", edge_type: "failure" },
        { from_node_id: "lookup", to_node_id: "next", edge_type: "success" },
      ],
    });
    const a = await ended(handled.body.workflow_id);
    expect(a.status).toBe("completed");
    const na = byName(a);
    expect(na.lookup).toMatchObject({ status: "failed", error: { code: "not_found", status: 404 } });
    expect(na.lookup.provenance_id).toMatch(/^prv_/);
    expect(na.fallback.status).toBe("completed");
    expect(na.next.status).toBe("skipped");

    const unhandled = await start({
      nodes: [
        { id: "lookup", node_type: "svc", operation: "getAgentStatus", input: { id: "agt_missing" } },
        emit("next", "wf.next"),
      ],
      edges: [{ from_node_id: "lookup", to_node_id: "next", edge_type: "success" }],
    });
    const b = await ended(unhandled.body.workflow_id);
    expect(b.status).toBe("failed");
    expect(b.error).toMatchObject({ code: "node_failed", node_id: `${b.workflow_id}:lookup` });
    expect(byName(b).next.status).toBe("skipped");
  });

  it("a svc node acts with the starter's authority only: a capability the starter lacks is refused and recorded", async () => {
    const narrow = await apiKey(["svc_api:workflows:*", "svc_api:agents:read"]);
    const res = await start({ nodes: [emit("e", "wf.narrow")], edges: [] }, narrow.token);
    const dag = await ended(res.body.workflow_id, narrow.token);
    const node = byName(dag).e;
    expect(node).toMatchObject({ status: "failed", error: { code: "forbidden", status: 403 } });
    const db = await database();
    const record = await db.read.provenanceRecord.findUniqueOrThrow({ where: { id: node.provenance_id } });
    expect(record).toMatchObject({ decision: "denied", status: 403, capability: "svc_api:events:write" });
  });

  it("runs an agent node as an execution and passes it its predecessors' outputs", async () => {
    const agentId = await deployAndWait(
      ctx.server.url,
      ctx.root.token,
      "wf-echo",
      "export default async (input) => ({ seen: Object.keys(input).sort() })",
    );
    const res = await start({
      nodes: [emit("first", "wf.first"), { id: "echo", node_type: "agent", agent_id: agentId }],
      edges: [{ from_node_id: "first", to_node_id: "echo", edge_type: "sequence" }],
    });
    const dag = await ended(res.body.workflow_id);
    expect(dag.status).toBe("completed");
    const echo = byName(dag).echo;
    expect(echo).toMatchObject({
      status: "completed",
      agent_id: agentId,
      agent_name: "wf-echo",
      output: { seen: ["first"] },
    });
    expect(echo.execution_id).toMatch(/^exe_/);
    const execution = await call(ctx.server.url, "GET", `/v1/executions/${echo.execution_id}`, {
      token: ctx.root.token,
    });
    expect(execution.body.status).toBe("completed");
    const db = await database();
    const record = await db.read.provenanceRecord.findUniqueOrThrow({ where: { id: echo.provenance_id } });
    expect(record).toMatchObject({ operation: "POST /v1/agents/{id}/invoke", delegationId: dag.delegation_id });
  });

  it("cancels a running workflow: its run is cancelled, its node fails, the rest is skipped; a second cancel is 409", async () => {
    const agentId = await deployAndWait(
      ctx.server.url,
      ctx.root.token,
      "wf-slow",
      "export default async () => { const t = Date.now(); while (Date.now() - t < 20000) {} return {}; }",
      { limits: { timeout_ms: 30000 } },
    );
    const res = await start({
      nodes: [{ id: "slow", node_type: "agent", agent_id: agentId }, emit("after", "wf.after")],
      edges: [{ from_node_id: "slow", to_node_id: "after", edge_type: "sequence" }],
    });
    const id = res.body.workflow_id;
    await waitFor("the agent node to run", async () => {
      const dag = await get(id);
      return byName(dag.body).slow.status === "running" ? true : undefined;
    });
    const cancelled = await call(ctx.server.url, "POST", `/v1/workflows/${id}/cancel`, { token: ctx.root.token });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe("cancelled");
    const n = byName(cancelled.body);
    expect(n.slow).toMatchObject({ status: "failed", error: { code: "workflow_ended" } });
    expect(n.after.status).toBe("skipped");
    const execution = await call(ctx.server.url, "GET", `/v1/executions/${n.slow.execution_id}`, {
      token: ctx.root.token,
    });
    expect(execution.body.status).toBe("cancelled");
    const again = await call(ctx.server.url, "POST", `/v1/workflows/${id}/cancel`, { token: ctx.root.token });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ current_state: "cancelled", requested_state: "cancelled" });
  });

  it("revoking the starter's key cancels its running workflows", async () => {
    const key = await apiKey(["svc_api:*"]);
    const agentId = await deployAndWait(
      ctx.server.url,
      ctx.root.token,
      "wf-slow-2",
      "export default async () => { const t = Date.now(); while (Date.now() - t < 20000) {} return {}; }",
      { limits: { timeout_ms: 30000 } },
    );
    const res = await start({ nodes: [{ id: "slow", node_type: "agent", agent_id: agentId }], edges: [] }, key.token);
    const revoked = await call(ctx.server.url, "POST", `/v1/delegations/${key.delegationId}/revoke`, {
      token: ctx.root.token,
      body: { reason: "test" },
    });
    expect(revoked.status).toBeLessThan(300);
    const dag = (await get(res.body.workflow_id)).body;
    expect(dag.status).toBe("cancelled");
    expect(dag.error.code).toBe("delegation_revoked");
  });

  /** Settles a request through the approvals area's own settling move (which calls the waiter it names). */
  const decide = async (approvalId: string, status: ApprovalStatus, modified?: object) => {
    const db = await database();
    await db.writeTx(async (tx) => {
      const row = await tx.approvalRequest.findUniqueOrThrow({ where: { id: approvalId } });
      await settleApproval(tx, row, status, {
        respondedAt: new Date(),
        respondedBy: "did:key:z6MkApprover",
        ...(modified ? { modifiedParams: modified } : {}),
      });
    });
  };
  const approvalFlow = {
    nodes: [
      {
        id: "ask",
        node_type: "approval",
        approval: { action_description: "Refund 1,250 EUR", risk_level: "high", request_data: { amount: 1250 } },
      },
      emit("pay", "wf.pay"),
      emit("refused", "wf.refused"),
    ],
    edges: [
      { from_node_id: "ask", to_node_id: "pay", edge_type: "success" },
      { from_node_id: "ask", to_node_id: "refused", edge_type: "failure" },
    ],
  };
  const waitingApproval = (id: string) =>
    waitFor("the approval node to wait", async () => {
      const node = byName((await get(id)).body).ask;
      return node.status === "waiting_approval" ? node : undefined;
    });

  it("an approval node files its request, waits for it, and goes on with the modified parameters once approved", async () => {
    const res = await start(approvalFlow);
    const node = await waitingApproval(res.body.workflow_id);
    expect(node.approval_id).toMatch(/^apr_/);
    expect(res.body.stats.total_nodes).toBe(3);
    const db = await database();
    const request = await db.read.approvalRequest.findUniqueOrThrow({ where: { id: node.approval_id } });
    expect(request).toMatchObject({
      status: "pending",
      taskId: node.id,
      waiterKind: "workflow_node",
      waiterRef: node.id,
    });
    const mid = (await get(res.body.workflow_id)).body;
    expect(mid.stats).toMatchObject({ waiting_approval: 1, running: 1, pending: 2 });
    await decide(node.approval_id, "approved_with_modifications", { amount: 1000 });
    const dag = await ended(res.body.workflow_id);
    expect(dag.status).toBe("completed");
    const n = byName(dag);
    expect(n.ask).toMatchObject({
      status: "completed",
      output: { status: "approved_with_modifications", params: { amount: 1000 } },
    });
    expect(n.pay.status).toBe("completed");
    expect(n.refused.status).toBe("skipped");
  });

  it("an approval node takes POST /v1/approvals's task_id (issue 26, item 17)", async () => {
    const res = await start({
      ...approvalFlow,
      nodes: approvalFlow.nodes.map((n) =>
        n.id === "ask" && "approval" in n ? { ...n, approval: { ...n.approval, task_id: "refund-7781" } } : n,
      ),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const node = await waitingApproval(res.body.workflow_id);
    const db = await database();
    const request = await db.read.approvalRequest.findUniqueOrThrow({ where: { id: node.approval_id } });
    expect(request.taskId).toBe("refund-7781");
    await call(ctx.server.url, "POST", `/v1/workflows/${res.body.workflow_id}/cancel`, { token: ctx.root.token });
  });

  it("an approval node decided through /v1 takes the decision's provenance record as its own", async () => {
    const passport = await call(ctx.server.url, "POST", "/v1/passports", {
      token: ctx.root.token,
      body: { type: "organization", name: "wf-approver", public_key: ed25519Jwk() },
    });
    const grant = await call(ctx.server.url, "POST", "/v1/delegation-tokens", {
      token: ctx.root.token,
      body: { delegate_did: passport.body.did, capabilities: ["svc_api:approvals:*"], duration_seconds: 600 },
    });
    const res = await start(approvalFlow);
    const node = await waitingApproval(res.body.workflow_id);
    // While it waits, the node's record is the request's.
    const db = await database();
    const filed = await db.read.approvalRequest.findUniqueOrThrow({ where: { id: node.approval_id } });
    expect(node.provenance_id).toBe(filed.provenanceId);
    const decided = await call(ctx.server.url, "POST", `/v1/approvals/${node.approval_id}/respond`, {
      token: grant.body.token,
      body: { decision: "approve", comment: "fine" },
    });
    expect(decided.status, JSON.stringify(decided.body)).toBe(200);
    const dag = await ended(res.body.workflow_id);
    const ask = byName(dag).ask;
    const request = await db.read.approvalRequest.findUniqueOrThrow({ where: { id: node.approval_id } });
    expect(request.decisionProvenanceId).toMatch(/^prv_/);
    expect(ask).toMatchObject({ status: "completed", provenance_id: request.decisionProvenanceId });
    const record = await call(ctx.server.url, "GET", `/v1/provenance/${ask.provenance_id}`, { token: ctx.root.token });
    expect(record.body).toMatchObject({
      operation: "POST /v1/approvals/{id}/respond",
      actor_did: passport.body.did,
      resource_id: node.approval_id,
    });
  });

  it("the starter cannot decide its approval node, not even through a token it derives for the organization (issue 26)", async () => {
    const passport = await call(ctx.server.url, "POST", "/v1/passports", {
      token: ctx.root.token,
      body: { type: "organization", name: "wf-starter", public_key: ed25519Jwk() },
    });
    const starter = await call(ctx.server.url, "POST", "/v1/delegation-tokens", {
      token: ctx.root.token,
      body: { delegate_did: passport.body.did, capabilities: ["svc_api:*"], duration_seconds: 600 },
    });
    expect(starter.status, JSON.stringify(starter.body)).toBe(201);
    const res = await start(approvalFlow, starter.body.token);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const node = await waitingApproval(res.body.workflow_id);
    const derived = await call(ctx.server.url, "POST", "/v1/delegation-tokens", {
      token: starter.body.token,
      body: { delegate_did: ctx.root.orgDid, capabilities: ["svc_api:approvals:respond"], duration_seconds: 300 },
    });
    expect(derived.status, JSON.stringify(derived.body)).toBe(201);
    for (const token of [starter.body.token, derived.body.token]) {
      const refused = await call(ctx.server.url, "POST", `/v1/approvals/${node.approval_id}/respond`, {
        token,
        body: { decision: "approve" },
      });
      expect(refused.status, JSON.stringify(refused.body)).toBe(403);
      expect(refused.body.reason).toBe("own_request");
    }
    expect(byName((await get(res.body.workflow_id)).body).ask.status).toBe("waiting_approval");
    await call(ctx.server.url, "POST", `/v1/workflows/${res.body.workflow_id}/cancel`, { token: ctx.root.token });
  });

  it("cancelling a workflow cancels the request its approval node waits for", async () => {
    const res = await start(approvalFlow);
    const node = await waitingApproval(res.body.workflow_id);
    const cancelled = await call(ctx.server.url, "POST", `/v1/workflows/${res.body.workflow_id}/cancel`, {
      token: ctx.root.token,
    });
    expect(byName(cancelled.body).ask.status).toBe("skipped");
    const db = await database();
    const request = await db.read.approvalRequest.findUniqueOrThrow({ where: { id: node.approval_id } });
    expect(request.status).toBe("cancelled");
  });

  it("a rejected approval fails its node, which follows its failure edge", async () => {
    const res = await start(approvalFlow);
    const node = await waitingApproval(res.body.workflow_id);
    await decide(node.approval_id, "rejected");
    const dag = await ended(res.body.workflow_id);
    const n = byName(dag);
    expect(n.ask).toMatchObject({ status: "failed", error: { code: "approval_rejected" } });
    expect(n.refused.status).toBe("completed");
    expect(n.pay.status).toBe("skipped");
  });

  it("a node job that runs again (a restart) changes nothing", async () => {
    const res = await start({ nodes: [emit("once", "wf.once")], edges: [] });
    const dag = await ended(res.body.workflow_id);
    const node = byName(dag).once;
    await runNodeJob({ payload: { nodeId: node.id } } as never);
    const db = await database();
    expect(await db.read.event.count({ where: { type: "wf.once" } })).toBe(1);
    expect(byName((await get(dag.workflow_id)).body).once).toEqual(node);
  });

  it("lists workflows newest first with stats, by status, with cursors; another organization's are not found", async () => {
    const page1 = await call(ctx.server.url, "GET", "/v1/workflows?limit=2", { token: ctx.root.token });
    expect(page1.status).toBe(200);
    expect(page1.body.data).toHaveLength(2);
    expect(page1.body.pagination.has_more).toBe(true);
    expect(page1.body.data[0].stats.total_nodes).toBeGreaterThan(0);
    expect(page1.body.data[0].root_node.id).toContain(page1.body.data[0].workflow_id);
    const page2 = await call(
      ctx.server.url,
      "GET",
      `/v1/workflows?limit=2&cursor=${encodeURIComponent(page1.body.pagination.next_cursor)}`,
      { token: ctx.root.token },
    );
    expect(page2.body.data[0].workflow_id).not.toBe(page1.body.data[1].workflow_id);
    const failed = await call(ctx.server.url, "GET", "/v1/workflows?status=failed", { token: ctx.root.token });
    expect(failed.body.data.length).toBeGreaterThan(0);
    expect(failed.body.data.every((w: { status: string }) => w.status === "failed")).toBe(true);
    const bad = await call(ctx.server.url, "GET", "/v1/workflows?cursor=nope", { token: ctx.root.token });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatchObject({ field: "cursor", code: "INVALID_CURSOR" });
    const missing = await get("wf_nope");
    expect(missing.status).toBe(404);
  });

  it("needs svc_api:workflows:read to read and :write to start", async () => {
    const reader = await apiKey(["svc_api:workflows:read"]);
    const res = await start({ nodes: [emit("x", "wf.x")], edges: [] }, reader.token);
    expect(res.status).toBe(403);
    expect(res.body.missing_capability).toBe("svc_api:workflows:write");
  });
});
