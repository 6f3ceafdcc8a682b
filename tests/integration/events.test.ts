import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { database } from "@/server/db/client";
import { SubscriptionIndex } from "@/server/events/matcher";
import { shutdownSandbox } from "@/server/sandbox/pool";
import { startWorker, type Worker } from "@/server/worker/worker";
import { apiKey, call, startOtherProcess, useTestServer, waitFor } from "./harness";
import { bundleOf, deployAndWait } from "./agentsHelpers";

process.env.SVC_SANDBOX_THREADS = "2";
process.env.SVC_EXECUTION_RETRY_BASE_MS = "20";

const ctx = useTestServer();
let worker: Worker;
beforeAll(() => {
  worker = startWorker({ log: () => undefined, tasks: [] });
});
afterAll(async () => {
  await worker.stop();
  await shutdownSandbox();
});

const ECHO = `export default async (input) => ({ got: input })`;
const triggerManifest = (events: string[], extra: { id: string; evidence: string[] }[] = []) => ({
  capabilities: [
    { id: "svc_api:agents:read", evidence: ["reads agents"] },
    ...extra,
    { id: "event_trigger", evidence: ["started by events"] },
    ...events.map((e) => ({ id: `event_trigger:${e}`, evidence: [`reacts to ${e}`] })),
  ],
  on: events.map((e) => ({ event: e, description: `on ${e}` })),
});

const ingest = (body: unknown, token = ctx.root.token, path = "/v1/events/ingest", base = ctx.server.url) =>
  call(base, "POST", path, { token, body });

async function finishedExecution(id: string) {
  return waitFor(`execution ${id}`, async () => {
    const res = await call(ctx.server.url, "GET", `/v1/executions/${id}`, { token: ctx.root.token });
    return ["completed", "failed", "cancelled"].includes(res.body.status) ? res.body : undefined;
  });
}

describe("ingest and emit", () => {
  it("answer 202 {event_id, matched_subscriptions, queued_executions} and record the call", async () => {
    for (const path of ["/v1/events/ingest", "/v1/events/emit"]) {
      const res = await ingest(
        { type: "nobody.listens", payload: { a: 1 }, source: "tests", occurred_at: "2026-11-21T09:30:00.000Z" },
        ctx.root.token,
        path,
      );
      expect(res.status).toBe(202);
      expect(res.body).toEqual({
        event_id: expect.stringMatching(/^evt_/),
        matched_subscriptions: 0,
        queued_executions: 0,
        replayed: false,
      });
      const event = await call(ctx.server.url, "GET", `/v1/events/${res.body.event_id}`, { token: ctx.root.token });
      expect(event.body).toMatchObject({
        type: "nobody.listens",
        payload: { a: 1 },
        source: "tests",
        occurred_at: "2026-11-21T09:30:00.000Z",
        via: path.endsWith("ingest") ? "ingest" : "emit",
        depth: 0,
        matches: [],
      });
      const record = await call(ctx.server.url, "GET", `/v1/provenance/${event.body.provenance_record_id}`, {
        token: ctx.root.token,
      });
      expect(record.body).toMatchObject({
        operation: `POST ${path}`,
        decision: "allowed",
        resource_id: res.body.event_id,
        seq: event.body.leaf_index,
      });
    }
  });

  it("need svc_api:events:write", async () => {
    const reader = await apiKey(["svc_api:events:read"]);
    const res = await ingest({ type: "a.b" }, reader.token);
    expect(res.status).toBe(403);
    expect(res.body.missing_capability).toBe("svc_api:events:write");
  });

  it("refuse malformed types with 400", async () => {
    for (const type of ["Invoice..paid", "*", "a.*.b", "invoice.*", "a".repeat(300), "", "a..b", ".a", "a."]) {
      const res = await ingest({ type, payload: {} });
      expect(res.status, type).toBe(400);
      expect(res.body.errors[0].field).toBe("type");
    }
    expect((await ingest({ type: "a.b", payload: [1] })).status).toBe(400);
    expect((await ingest({ type: "a.b", unknown: 1 })).status).toBe(400);
  });

  it("answer a repeated sender id with the first answer and dispatch nothing twice", async () => {
    const agentId = await deployAndWait(
      ctx.server.url,
      ctx.root.token,
      "dedup-agent",
      ECHO,
      triggerManifest(["dedup.happened"]),
    );
    const first = await ingest({ type: "dedup.happened", id: "sender-42", payload: { n: 1 } });
    expect(first.status).toBe(202);
    expect(first.body).toMatchObject({ matched_subscriptions: 1, queued_executions: 1 });
    const again = await ingest({ type: "dedup.happened", id: "sender-42", payload: { n: 2 } });
    expect(again.status).toBe(202);
    expect(again.body).toEqual({ ...first.body, replayed: true });
    const db = await database();
    expect(await db.read.event.count({ where: { senderId: "sender-42" } })).toBe(1);
    expect(await db.read.asyncExecution.count({ where: { agentId } })).toBe(1);
  });
});

describe("concurrent repeats", () => {
  it("five concurrent ingests with one sender id: one event, the same answer for all", async () => {
    const answers = await Promise.all(Array.from({ length: 5 }, () => ingest({ type: "race.same", id: "racer-1" })));
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202, 202, 202]);
    expect(new Set(answers.map((a) => a.body.event_id)).size).toBe(1);
    const db = await database();
    expect(await db.read.event.count({ where: { senderId: "racer-1" } })).toBe(1);
  });
});

describe("agent triggers", () => {
  it("run under the authority of whoever deployed (then activated) the agent, narrowed to the manifest's grantable capabilities, named as grantor, revoked with them", async () => {
    const deployer = await apiKey([
      "svc_api:agents:deploy",
      "svc_api:agents:read",
      "svc_api:agents:manage",
      "svc_api:executions:read",
    ]);
    const sender = await apiKey(["svc_api:events:write"]);
    const agentId = await deployAndWait(
      ctx.server.url,
      deployer.token,
      "narrowed",
      ECHO,
      triggerManifest(["narrow.me"], [{ id: "svc_api:executions:read", evidence: ["reads executions"] }]),
    );
    // The agent lists every capability its manifest declares, trigger declarations included.
    const status = await call(ctx.server.url, "GET", `/v1/agents/${agentId}/status`, { token: ctx.root.token });
    expect(status.body.data.capabilities).toEqual([
      "svc_api:agents:read",
      "svc_api:executions:read",
      "event_trigger",
      "event_trigger:narrow.me",
    ]);
    const res = await ingest({ type: "narrow.me" }, sender.token);
    expect(res.body.queued_executions).toBe(1);
    const db = await database();
    const match = await db.read.eventMatch.findFirstOrThrow({ where: { eventId: res.body.event_id } });
    const run = await db.read.asyncExecution.findUniqueOrThrow({
      where: { id: match.executionId! },
      include: { delegation: true },
    });
    const authority = await db.read.delegation.findUniqueOrThrow({ where: { id: run.delegation.parentId! } });
    expect(authority).toMatchObject({
      kind: "trigger",
      parentId: deployer.delegationId,
      grantorDid: deployer.orgDid,
      revokedAt: null,
    });
    expect(authority.capabilities).toEqual(["svc_api:agents:read", "svc_api:executions:read"]);
    // The run's delegation holds only grantable capabilities, never the trigger declarations.
    expect(run.delegation.capabilities).toEqual(["svc_api:agents:read", "svc_api:executions:read"]);
    expect(run.delegation.ancestry.split(" ")).not.toContain(sender.delegationId);
    const done = await finishedExecution(run.id);
    expect(done.status).toBe("completed");
    const record = await db.read.provenanceRecord.findUniqueOrThrow({ where: { id: done.provenance_id } });
    expect(record).toMatchObject({
      grantorDid: deployer.orgDid,
      delegationId: run.delegationId,
      operation: `RUN /v1/agents/${agentId}`,
    });
    // Activating again lends the activator's authority instead.
    const activator = await apiKey(["svc_api:agents:manage", "svc_api:agents:read", "svc_api:executions:read"]);
    expect(
      (await call(ctx.server.url, "POST", `/v1/agents/${agentId}/deactivate`, { token: activator.token })).status,
    ).toBe(200);
    expect(
      (await call(ctx.server.url, "POST", `/v1/agents/${agentId}/activate`, { token: activator.token })).status,
    ).toBe(200);
    const again = await ingest({ type: "narrow.me" }, sender.token);
    const run2 = await db.read.asyncExecution.findUniqueOrThrow({
      where: {
        id: (await db.read.eventMatch.findFirstOrThrow({ where: { eventId: again.body.event_id } })).executionId!,
      },
      include: { delegation: { include: { parent: true } } },
    });
    expect(run2.delegation.parent).toMatchObject({ kind: "trigger", parentId: activator.delegationId });
    await finishedExecution(run2.id);
    // Revoking the activator silences the triggers: the event is matched, no run starts.
    expect(
      (
        await call(ctx.server.url, "POST", `/v1/delegations/${activator.delegationId}/revoke`, {
          token: ctx.root.token,
          body: { reason: "left" },
        })
      ).status,
    ).toBe(201);
    const silent = await ingest({ type: "narrow.me" }, sender.token);
    expect(silent.body.matched_subscriptions).toBe(1);
    expect(await db.read.eventMatch.findFirstOrThrow({ where: { eventId: silent.body.event_id } })).toMatchObject({
      executionId: null,
    });
  });

  it("start runs on platform events (agent.deployed, execution.failed) under the deployer's authority", async () => {
    const deployer = await apiKey(["svc_api:agents:deploy", "svc_api:agents:read", "svc_api:agents:invoke"]);
    const watcher = await deployAndWait(
      ctx.server.url,
      deployer.token,
      "platform-watcher",
      ECHO,
      triggerManifest(["agent.deployed", "execution.failed"]),
    );
    const db = await database();
    const runsOf = () => db.read.asyncExecution.findMany({ where: { agentId: watcher }, orderBy: { queuedAt: "asc" } });
    const FAILS = `export default async () => { throw new Error("no"); }`;
    const failing = await deployAndWait(ctx.server.url, ctx.root.token, "platform-failing", FAILS);
    const deployedRun = await waitFor("the agent.deployed run", async () =>
      (await runsOf()).find(
        (r) =>
          (r.input as { event_type?: string }).event_type === "agent.deployed" &&
          (r.input as { payload: { agent_id: string } }).payload.agent_id === failing,
      ),
    );
    expect(deployedRun.requesterPassportId).toBe(deployer.orgDid);
    expect(await finishedExecution(deployedRun.id)).toMatchObject({ status: "completed" });
    const inv = await call(ctx.server.url, "POST", `/v1/agents/${failing}/invoke`, {
      token: ctx.root.token,
      body: { max_attempts: 1 },
    });
    expect((await finishedExecution(inv.body.id)).status).toBe("failed");
    const failedRun = await waitFor("the execution.failed run", async () =>
      (await runsOf()).find((r) => (r.input as { event_type?: string }).event_type === "execution.failed"),
    );
    const done = await finishedExecution(failedRun.id);
    expect(done.result_json).toMatchObject({
      got: { event_type: "execution.failed", payload: { id: inv.body.id, status: "failed" } },
    });
    const record = await db.read.provenanceRecord.findUniqueOrThrow({ where: { id: done.provenance_id } });
    expect(record.grantorDid).toBe(deployer.orgDid);
    await call(ctx.server.url, "POST", `/v1/agents/${watcher}/deactivate`, { token: ctx.root.token });
  });

  it("an agent triggered by execution.completed does not start itself for ever: its chain stops at SVC_EVENT_MAX_DEPTH", async () => {
    const selfish = await deployAndWait(
      ctx.server.url,
      ctx.root.token,
      "completion-chaser",
      ECHO,
      triggerManifest(["execution.completed"]),
    );
    const db = await database();
    const start = await call(ctx.server.url, "POST", `/v1/agents/${selfish}/invoke`, {
      token: ctx.root.token,
      body: {},
    });
    await finishedExecution(start.body.id);
    // Each of its runs raises execution.completed one step deeper; the run at the last depth raises none that triggers.
    let last = -1;
    await waitFor(
      "the chain to stop growing",
      async () => {
        const rows = await db.read.asyncExecution.findMany({ where: { agentId: selfish } });
        const settled =
          rows.every((r) => ["completed", "failed", "cancelled"].includes(r.status)) && rows.length === last;
        last = rows.length;
        await new Promise((r) => setTimeout(r, 500));
        return settled ? rows : undefined;
      },
      60_000,
    );
    await call(ctx.server.url, "POST", `/v1/agents/${selfish}/deactivate`, { token: ctx.root.token });
    const completions = await db.read.event.findMany({
      where: { type: "execution.completed" },
      select: { depth: true },
    });
    expect(Math.max(...completions.map((e) => e.depth))).toBe(7);
    const runs = await db.read.asyncExecution.findMany({ where: { agentId: selfish } });
    expect(runs.length).toBeGreaterThanOrEqual(9);
  });

  it("run the agent with {event_id, event_type, payload, org_did, verification}", async () => {
    await deployAndWait(ctx.server.url, ctx.root.token, "invoice-echo", ECHO, triggerManifest(["invoice.paid"]));
    const res = await ingest({ type: "invoice.paid", payload: { invoice_id: "inv_1", amount: 5 } });
    expect(res.body).toMatchObject({ matched_subscriptions: 1, queued_executions: 1 });
    const event = (await call(ctx.server.url, "GET", `/v1/events/${res.body.event_id}`, { token: ctx.root.token }))
      .body;
    expect(event.matches).toEqual([
      expect.objectContaining({
        kind: "agent_trigger",
        execution_id: expect.stringMatching(/^exe_/),
        delivery_id: null,
      }),
    ]);
    const execution = await finishedExecution(event.matches[0].execution_id);
    expect(execution.status).toBe("completed");
    expect(execution.result_json.got).toEqual({
      event_id: res.body.event_id,
      event_type: "invoice.paid",
      payload: { invoice_id: "inv_1", amount: 5 },
      org_did: ctx.root.orgDid,
      verification: {
        provenance_record_id: event.provenance_record_id,
        leaf_index: event.leaf_index,
        actor: ctx.root.orgDid,
        via: "ingest",
      },
    });
    const record = await call(ctx.server.url, "GET", `/v1/provenance/${event.provenance_record_id}`, {
      token: ctx.root.token,
    });
    expect(record.body).toMatchObject({
      operation: "POST /v1/events/ingest",
      seq: event.leaf_index,
      resource_id: res.body.event_id,
    });
  });

  it("match a trailing .* on every type under the prefix, and nothing else", async () => {
    await deployAndWait(ctx.server.url, ctx.root.token, "bill-family", ECHO, triggerManifest(["bill.*"]));
    const matched = async (type: string) => (await ingest({ type })).body.matched_subscriptions;
    expect(await matched("bill.paid")).toBe(1);
    expect(await matched("bill.line.added")).toBe(1);
    expect(await matched("bills.x")).toBe(0);
    expect(await matched("bill")).toBe(0);
    expect(await matched("other.bill.paid")).toBe(0);
  });

  it("refuse a deploy whose on entries lack their event_trigger capabilities (400 naming the field)", async () => {
    const code = bundleOf(ECHO);
    const deploy = (manifest: Record<string, unknown>) =>
      call(ctx.server.url, "POST", "/v1/agents/deploy", {
        token: ctx.root.token,
        body: { manifest: { name: "undeclared", version: "1.0.0", ...manifest }, ...code, wait: true },
      });
    const none = await deploy({ capabilities: [], on: [{ event: "x.y", description: "" }] });
    expect(none.status).toBe(400);
    expect(none.body.errors).toEqual([
      expect.objectContaining({
        field: "manifest.on.0.event",
        code: "TRIGGER_NOT_DECLARED",
        message: expect.stringContaining("capability event_trigger,"),
      }),
      expect.objectContaining({
        field: "manifest.on.0.event",
        code: "TRIGGER_NOT_DECLARED",
        message: expect.stringContaining("event_trigger:x.y"),
      }),
    ]);
    const noEvidence = await deploy({
      capabilities: [
        { id: "event_trigger", evidence: ["yes"] },
        { id: "event_trigger:x.y", evidence: [] },
      ],
      on: [{ event: "x.y", description: "" }],
    });
    expect(noEvidence.status).toBe(400);
    expect(noEvidence.body.errors).toEqual([
      expect.objectContaining({ field: "manifest.on.0.event", message: expect.stringContaining("event_trigger:x.y") }),
    ]);
    const badPattern = await deploy({ capabilities: [{ id: "event_trigger:a.*.b", evidence: ["x"] }] });
    expect(badPattern.status).toBe(400);
    const ok = await deploy({
      capabilities: [
        { id: "event_trigger", evidence: ["yes"] },
        { id: "event_trigger:x.y", evidence: ["yes"] },
      ],
      on: [{ event: "x.y", description: "" }],
    });
    expect(ok.status).toBe(201);
    // The agent lists its trigger declarations with its capabilities (they authorize its trigger runs; runs are never granted them).
    const agent = await call(ctx.server.url, "GET", `/v1/agents/${ok.body.data.agentId}/status`, {
      token: ctx.root.token,
    });
    expect(agent.body.data.capabilities).toEqual(["event_trigger", "event_trigger:x.y"]);
  });

  it("stop at once when the agent is deactivated, and come back when it is activated", async () => {
    const agentId = await deployAndWait(
      ctx.server.url,
      ctx.root.token,
      "switchable",
      ECHO,
      triggerManifest(["switch.flipped"]),
    );
    expect((await ingest({ type: "switch.flipped" })).body.matched_subscriptions).toBe(1);
    expect(
      (await call(ctx.server.url, "POST", `/v1/agents/${agentId}/deactivate`, { token: ctx.root.token })).status,
    ).toBe(200);
    expect((await ingest({ type: "switch.flipped" })).body).toMatchObject({
      matched_subscriptions: 0,
      queued_executions: 0,
    });
    expect(
      (await call(ctx.server.url, "POST", `/v1/agents/${agentId}/activate`, { token: ctx.root.token })).status,
    ).toBe(200);
    expect((await ingest({ type: "switch.flipped" })).body.matched_subscriptions).toBe(1);
  });

  it("follow a redeploy: entries removed from the manifest stop matching, new ones start", async () => {
    await deployAndWait(ctx.server.url, ctx.root.token, "redeployed", ECHO, triggerManifest(["first.kind"]));
    expect((await ingest({ type: "first.kind" })).body.matched_subscriptions).toBe(1);
    await deployAndWait(ctx.server.url, ctx.root.token, "redeployed", ECHO, {
      ...triggerManifest(["second.kind"]),
      version: "2.0.0",
    });
    expect((await ingest({ type: "first.kind" })).body.matched_subscriptions).toBe(0);
    expect((await ingest({ type: "second.kind" })).body.matched_subscriptions).toBe(1);
  });
});

describe("emitting from agents", () => {
  it("cuts a loop of agents emitting the event that triggers them at depth 8, with a denied record", async () => {
    const LOOP = `export default async (input, ctx) => {
      try { const answer = await ctx.events.emit("loop.ping", { n: input.payload.n + 1 }); return { emitted: answer }; }
      catch (e) { return { refused: e.message, name: e.name }; }
    }`;
    const agentId = await deployAndWait(
      ctx.server.url,
      ctx.root.token,
      "looper",
      LOOP,
      triggerManifest(["loop.ping"], [{ id: "svc_api:events:write", evidence: ["emits loop.ping"] }]),
    );
    const res = await ingest({ type: "loop.ping", payload: { n: 0 } });
    expect(res.body.queued_executions).toBe(1);
    const db = await database();
    const refused = await waitFor(
      "the refused emit",
      async () => {
        const rows = await db.read.asyncExecution.findMany({ where: { agentId, status: "completed" } });
        return rows.find((r) => (r.resultJson as { refused?: string }).refused);
      },
      30_000,
    );
    expect(refused.resultJson).toMatchObject({
      name: "event_depth_exceeded",
      refused: expect.stringContaining("SVC_EVENT_MAX_DEPTH"),
    });
    const events = await db.read.event.findMany({ where: { type: "loop.ping" }, orderBy: { depth: "asc" } });
    expect(events.map((e) => e.depth)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(events.slice(1).every((e) => e.ingestedVia === "emit")).toBe(true);
    expect(await db.read.asyncExecution.count({ where: { agentId } })).toBe(8);
    const denied = await db.read.provenanceRecord.findMany({
      where: { operation: "POST /v1/events/emit", decision: "denied", delegationId: refused.delegationId },
    });
    expect(denied).toEqual([expect.objectContaining({ status: 403, actorDid: ctx.root.orgDid })]);
    // Each allowed emit is its own record, under the emitting run's delegation.
    const emitted = events[1]!;
    const run = await db.read.asyncExecution.findFirstOrThrow({
      where: { id: (await db.read.eventMatch.findFirstOrThrow({ where: { eventId: events[0]!.id } })).executionId! },
    });
    expect(emitted.delegationId).toBe(run.delegationId);
    const emitRecord = await db.read.provenanceRecord.findUniqueOrThrow({ where: { id: emitted.provenanceId! } });
    expect(emitRecord).toMatchObject({
      operation: "POST /v1/events/emit",
      decision: "allowed",
      delegationId: run.delegationId,
    });
  });

  it("refuses an emit from a run whose manifest lacks svc_api:events:write (a denied record)", async () => {
    const EMIT = `export default async (input, ctx) => { try { await ctx.events.emit("unauth.x", {}); return { ok: true }; } catch (e) { return { refused: e.message }; } }`;
    const agentId = await deployAndWait(ctx.server.url, ctx.root.token, "no-emit", EMIT);
    const inv = await call(ctx.server.url, "POST", `/v1/agents/${agentId}/invoke`, { token: ctx.root.token, body: {} });
    const done = await finishedExecution(inv.body.id ?? inv.body.data?.id ?? inv.body.execution_id);
    expect(done.result_json.refused).toContain("svc_api:events:write");
    const db = await database();
    const run = await db.read.asyncExecution.findUniqueOrThrow({ where: { id: done.id } });
    expect(
      await db.read.provenanceRecord.findMany({
        where: { operation: "POST /v1/events/emit", delegationId: run.delegationId },
      }),
    ).toEqual([expect.objectContaining({ decision: "denied", status: 403 })]);
  });
});

/**
 * Probes until `sees` answers true and returns the probes that missed although they started a
 * second or more after `committed`: the requirement is that a new subscription is matched within a
 * second of its commit. Each probe is timed from when it starts, not from when its answer comes
 * back: on a loaded machine one ingest can take longer than a second by itself, and a probe that
 * started early, missed, and answered late says nothing against the requirement (the next probe
 * then starts past the second and must see it). A process that took longer than a second to notice
 * leaves a late miss here, whatever the machine's load.
 */
async function withinASecond(committed: number, sees: () => Promise<boolean>): Promise<number[]> {
  const missed: number[] = [];
  await waitFor("the new subscription to be matched", async () => {
    const startedAfter = Date.now() - committed;
    if (await sees()) return true;
    if (startedAfter >= 1000) missed.push(startedAfter);
    return undefined;
  });
  return missed;
}

describe("matching across processes", () => {
  it("another matcher reading the database sees a new subscription within a second", async () => {
    const db = await database();
    const other = new SubscriptionIndex();
    await other.refresh(db.read, db.engine);
    expect(other.match(ctx.root.orgDid, "fresh.sub.added")).toEqual([]);
    await deployAndWait(ctx.server.url, ctx.root.token, "fresh-sub", ECHO, triggerManifest(["fresh.sub.*"]));
    // The subscription committed before the deploy answered: from here, every look that starts a
    // second later or more must see it (see withinASecond).
    const committed = Date.now();
    const missed = await withinASecond(committed, async () => {
      await other.refresh(db.read, db.engine);
      return other.match(ctx.root.orgDid, "fresh.sub.added").length === 1;
    });
    expect(missed).toEqual([]);
  });

  it("another process on the same database matches a new trigger within a second", async () => {
    const proc = await startOtherProcess();
    try {
      expect(
        (await ingest({ type: "remote.seen" }, ctx.root.token, "/v1/events/ingest", proc.url)).body
          .matched_subscriptions,
      ).toBe(0);
      await deployAndWait(ctx.server.url, ctx.root.token, "remote-sub", ECHO, triggerManifest(["remote.seen"]));
      const committed = Date.now();
      const missed = await withinASecond(
        committed,
        async () =>
          (await ingest({ type: "remote.seen" }, ctx.root.token, "/v1/events/ingest", proc.url)).body
            .matched_subscriptions === 1,
      );
      expect(missed).toEqual([]);
    } finally {
      proc.stop();
    }
  });
});

describe("the event list", () => {
  it("lists events newest first with their matches, by type, with cursors", async () => {
    await deployAndWait(ctx.server.url, ctx.root.token, "listed", ECHO, triggerManifest(["listed.thing"]));
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await ingest({ type: "listed.thing", payload: { i } })).body.event_id);
    const page1 = await call(ctx.server.url, "GET", "/v1/events?type=listed.thing&limit=2", { token: ctx.root.token });
    expect(page1.status).toBe(200);
    expect(page1.body.data.map((e: { id: string }) => e.id)).toEqual([ids[2], ids[1]]);
    expect(page1.body.data[0].matches).toEqual([
      expect.objectContaining({
        kind: "agent_trigger",
        agent_id: expect.stringMatching(/^agt_/),
        execution_id: expect.stringMatching(/^exe_/),
      }),
    ]);
    expect(page1.body.pagination.has_more).toBe(true);
    const page2 = await call(
      ctx.server.url,
      "GET",
      `/v1/events?type=listed.thing&limit=2&cursor=${encodeURIComponent(page1.body.pagination.next_cursor)}`,
      { token: ctx.root.token },
    );
    expect(page2.body.data.map((e: { id: string }) => e.id)).toEqual([ids[0]]);
    expect((await call(ctx.server.url, "GET", "/v1/events/evt_nope", { token: ctx.root.token })).status).toBe(404);
  });
});

describe("platform events and the dispatcher registry", () => {
  it("a platform event is recorded, listed, and handed to the dispatcher of each matched kind", async () => {
    const { registerSubscriptionDispatcher } = await import("@/server/events/dispatch");
    const { putPlatformEvent } = await import("@/server/events/platformEvents");
    const { subscriptionsChanged } = await import("@/server/events/matcher");
    const db = await database();
    const seen: string[] = [];
    const unregister = registerSubscriptionDispatcher("webhook", async (_tx, { event, subscription }) => {
      seen.push(`${event.type} ${subscription.id} ${event.provenanceId}`);
      return { deliveryId: "dlv_test" };
    });
    try {
      await db.writeTx(async (tx) => {
        await tx.subscription.create({
          data: {
            id: "whk_test",
            orgDid: ctx.root.orgDid,
            kind: "webhook",
            eventTypes: ["webhook.*"],
            targetUrl: "https://example.com/h",
            status: "active",
          },
        });
        await subscriptionsChanged(tx);
      });
      const answer = await db.writeTx((tx) =>
        putPlatformEvent(tx, db.engine, ctx.root.orgDid, {
          type: "webhook.disabled",
          payload: { webhook_id: "whk_x" },
        }),
      );
      expect(answer).toMatchObject({ matched_subscriptions: 1, queued_executions: 0 });
      const event = (await call(ctx.server.url, "GET", `/v1/events/${answer.event_id}`, { token: ctx.root.token }))
        .body;
      expect(event).toMatchObject({
        type: "webhook.disabled",
        via: "emit",
        matches: [{ subscription_id: "whk_test", kind: "webhook", delivery_id: "dlv_test", execution_id: null }],
      });
      expect(seen).toEqual([`webhook.disabled whk_test ${event.provenance_record_id}`]);
      const record = await db.read.provenanceRecord.findUniqueOrThrow({ where: { id: event.provenance_record_id } });
      expect(record).toMatchObject({
        operation: "PLATFORM_EVENT webhook.disabled",
        decision: "allowed",
        resourceId: answer.event_id,
        seq: BigInt(event.leaf_index),
      });
    } finally {
      unregister();
    }
  });

  it("agents and executions raise their platform events (agent.deployed, agent.activated, agent.deactivated, execution.completed)", async () => {
    const agentId = await deployAndWait(ctx.server.url, ctx.root.token, "announced", ECHO);
    // Nothing subscribes to execution.completed yet: a run that ends raises no event (and no record) nobody reads.
    const unheard = await call(ctx.server.url, "POST", `/v1/agents/${agentId}/invoke`, {
      token: ctx.root.token,
      body: { input: { x: 0 } },
    });
    await finishedExecution(unheard.body.id);
    const hook = await call(ctx.server.url, "POST", "/v1/webhooks", {
      token: ctx.root.token,
      body: { target_url: "https://example.com/svc-executions", event_types: ["execution.completed"] },
    });
    expect(hook.status).toBe(201);
    const inv = await call(ctx.server.url, "POST", `/v1/agents/${agentId}/invoke`, {
      token: ctx.root.token,
      body: { input: { x: 1 } },
    });
    await finishedExecution(inv.body.id);
    await call(ctx.server.url, "POST", `/v1/agents/${agentId}/deactivate`, { token: ctx.root.token });
    const of = async (type: string) =>
      (await call(ctx.server.url, "GET", `/v1/events?type=${type}&limit=100`, { token: ctx.root.token })).body.data as {
        payload: Record<string, unknown>;
        provenance_record_id: string;
      }[];
    expect((await of("agent.deployed")).some((e) => e.payload.agent_id === agentId)).toBe(true);
    expect((await of("agent.activated")).some((e) => e.payload.agent_id === agentId)).toBe(true);
    expect((await of("agent.deactivated")).some((e) => e.payload.agent_id === agentId)).toBe(true);
    expect((await of("execution.completed")).some((e) => e.payload.id === unheard.body.id)).toBe(false);
    const completed = (await of("execution.completed")).find((e) => e.payload.id === inv.body.id);
    expect(completed?.payload).toMatchObject({
      status: "completed",
      result_json: { got: { x: 1 } },
      provenance_id: expect.stringMatching(/^prv_/),
    });
    const db = await database();
    expect(await db.read.provenanceRecord.findUnique({ where: { id: completed!.provenance_record_id } })).toMatchObject(
      { operation: "PLATFORM_EVENT execution.completed" },
    );
    await call(ctx.server.url, "DELETE", `/v1/webhooks/${hook.body.id}`, { token: ctx.root.token });
  });

  it("a payload over the body limit is refused with 413", async () => {
    const res = await ingest({ type: "big.one", payload: { blob: "x".repeat(1_100_000) } });
    expect(res.status).toBe(413);
  });
});
