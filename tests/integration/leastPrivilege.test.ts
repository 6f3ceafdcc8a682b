import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { database } from "@/server/db/client";
import { countsFromRecords, delegationSubtree, usageSince } from "@/server/identity/capabilityUsage";
import { DelegationUsage, SimulateNarrowingResponse } from "@/server/identity/schemas";
import { delegationCounts } from "@/server/identity/usageRollup";
import { AgentUsage } from "@/server/agents/schemas";
import { proposeNarrowing } from "@/server/learning/proposeNarrowing";
import { shutdownSandbox } from "@/server/sandbox/pool";
import { startWorker } from "@/server/worker/worker";
import { deployAndWait } from "./agentsHelpers";
import { consoleMember } from "./consoleMembers";
import { apiKey, call, ed25519Jwk, lastProvenance, secondOrg, useTestServer } from "./harness";

/**
 * Issue 31: least privilege from evidence. A key's real calls, per capability, against what it
 * holds; what a narrower grant would have refused; narrowing as a learning proposal.
 */
const ctx = useTestServer();
afterAll(() => shutdownSandbox());
const api = (method: string, path: string, body?: unknown, token = ctx.root.token) =>
  call(ctx.server.url, method, path, { token, body });

const SIX = [
  "svc_api:passports:read",
  "svc_api:agents:read",
  "svc_api:delegations:read",
  "svc_api:delegations:write",
  "svc_api:events:read",
  "svc_api:prompts:read",
];

/** A key holding the six capabilities that called with two of them: 3 passports reads, 2 agents reads, and one refused call. */
async function keyUsingTwoOfSix() {
  const key = await apiKey(SIX);
  for (let i = 0; i < 3; i++) expect((await api("GET", "/v1/passports", undefined, key.token)).status).toBe(200);
  for (let i = 0; i < 2; i++) expect((await api("GET", "/v1/agents", undefined, key.token)).status).toBe(200);
  expect((await api("GET", "/v1/workflows", undefined, key.token)).status).toBe(403);
  return key;
}

describe("usage of a delegation", () => {
  it("lists the four capabilities a key never used, with the right counts", async () => {
    const key = await keyUsingTwoOfSix();
    const usage = await api("GET", `/v1/delegations/${key.delegationId}/usage`);
    expect(usage.status, JSON.stringify(usage.body)).toBe(200);
    const body = DelegationUsage.parse(usage.body);
    expect(body.delegation_id).toBe(key.delegationId);
    expect(body.derived_delegations).toBe(0);
    expect([...body.unused].sort()).toEqual(SIX.filter((c) => !/passports:read|agents:read/.test(c)).sort());
    const row = (c: string) => body.capabilities.find((r) => r.capability === c);
    expect(row("svc_api:passports:read")).toMatchObject({ granted: true, calls: 3, refused: 0 });
    expect(row("svc_api:agents:read")).toMatchObject({ granted: true, calls: 2, refused: 0 });
    expect(row("svc_api:passports:read")!.last_used_at).not.toBeNull();
    expect(row("svc_api:events:read")).toEqual({
      capability: "svc_api:events:read",
      granted: true,
      calls: 0,
      refused: 0,
      last_used_at: null,
    });
    expect(row("svc_api:workflows:read")).toMatchObject({ granted: false, calls: 0, refused: 1 });
  });

  it("refuses a bad since (400) and another organization's delegation (404)", async () => {
    const key = await apiKey(SIX);
    expect((await api("GET", `/v1/delegations/${key.delegationId}/usage?since=yesterday`)).status).toBe(400);
    expect((await api("GET", `/v1/delegations/${key.delegationId}/usage?since=2026-13-01T00:00:00Z`)).status).toBe(400);
    const other = await secondOrg(ctx.server.url, ctx.root.token, "Least privilege B");
    const foreign = await api("GET", `/v1/delegations/${key.delegationId}/usage`, undefined, other.token);
    expect(foreign.status).toBe(404);
    const sim = await api("POST", `/v1/delegations/${key.delegationId}/simulate`, { capabilities: [] }, other.token);
    expect(sim.status).toBe(404);
  });
});

describe("the usage rollup", () => {
  it("counts what the records of the delegation and those derived from it say, in whole UTC days", async () => {
    const key = await keyUsingTwoOfSix();
    // Two levels down: a token the key issued, and one that token issued.
    const child = await derivedToken(key.token, ["svc_api:passports:read", "svc_api:delegations:write"]);
    const grandchild = await derivedToken(child.token, ["svc_api:passports:read"], 600);
    expect((await api("GET", "/v1/passports", undefined, grandchild.token)).status).toBe(200);
    expect((await api("GET", "/v1/agents", undefined, grandchild.token)).status).toBe(403);
    const db = await database();
    const ids = await delegationSubtree(db.read, key.orgDid, key.delegationId);
    expect(ids.sort()).toEqual([key.delegationId, child.delegationId, grandchild.delegationId].sort());
    const since = usageSince(new Date(Date.now() - 2 * 86_400_000).toISOString());
    expect(since.toISOString()).toMatch(/T00:00:00.000Z$/);
    const fromRollup = await delegationCounts(db.read, key.orgDid, [key.delegationId], since);
    const fromRecords = await countsFromRecords(db.read, key.orgDid, ids, since);
    expect(Object.fromEntries(fromRollup)).toEqual(Object.fromEntries(fromRecords));
    expect(fromRollup.get("svc_api:passports:read")).toMatchObject({ calls: 4, refused: 0 });
    expect(fromRollup.get("svc_api:agents:read")).toMatchObject({ calls: 2, refused: 1 });
    expect(fromRollup.get("svc_api:delegations:write")).toMatchObject({ calls: 2, refused: 0 });
    expect(fromRollup.get("svc_api:workflows:read")).toMatchObject({ calls: 0, refused: 1, lastUsedAt: null });
    const usage = DelegationUsage.parse((await api("GET", `/v1/delegations/${key.delegationId}/usage`)).body);
    expect(usage.derived_delegations).toBe(2);
    const ofChild = DelegationUsage.parse((await api("GET", `/v1/delegations/${child.delegationId}/usage`)).body);
    expect(ofChild).toMatchObject({ derived_delegations: 1, unused: [] });
    expect(ofChild.capabilities.find((c) => c.capability === "svc_api:passports:read")).toMatchObject({ calls: 1 });
    // Simulated without passports:read, the grandchild's call is among those refused.
    const sim = await api("POST", `/v1/delegations/${key.delegationId}/simulate`, {
      capabilities: ["svc_api:agents:read", "svc_api:delegations:write"],
    });
    expect(sim.body).toMatchObject({ would_refuse: 4, would_allow: 4 });
    expect(sim.body.examples).toHaveLength(4);
  });
});

describe("the usage rollup's backfill", () => {
  it("computes from the records what the trigger kept (shards summed)", async () => {
    await keyUsingTwoOfSix();
    const db = await database();
    const summed = async () =>
      (
        await db.read.delegationUsageRollup.groupBy({
          by: ["orgDid", "delegationId", "capability", "day"],
          _sum: { calls: true, refused: true },
          _max: { lastUsedAt: true },
          orderBy: [{ orgDid: "asc" }, { delegationId: "asc" }, { capability: "asc" }, { day: "asc" }],
        })
      ).map((r) => JSON.stringify(r, (_k, v: unknown) => (typeof v === "bigint" ? Number(v) : v)));
    const kept = await summed();
    expect(kept.length).toBeGreaterThan(0);
    const sql = readFileSync(
      join("prisma/migrations", db.engine, "20261128080000_identity_least_privilege/migration.sql"),
      "utf8",
    );
    const backfill = /^INSERT INTO "delegation_usage_rollup"[\s\S]*?;$/m.exec(sql)?.[0];
    expect(backfill).toBeDefined();
    await db.writeTx(async (tx) => {
      await tx.$executeRawUnsafe(`DELETE FROM "delegation_usage_rollup"`);
      await tx.$executeRawUnsafe(backfill!);
    });
    expect(await summed()).toEqual(kept);
  });
});

describe("simulating a narrower grant", () => {
  it("refuses exactly the calls that used a removed capability", async () => {
    const key = await keyUsingTwoOfSix();
    const sim = await api("POST", `/v1/delegations/${key.delegationId}/simulate`, {
      capabilities: SIX.filter((c) => c !== "svc_api:agents:read"),
    });
    expect(sim.status, JSON.stringify(sim.body)).toBe(200);
    const body = SimulateNarrowingResponse.parse(sim.body);
    expect(body.would_refuse).toBe(2);
    expect(body.would_allow).toBe(3);
    expect(body.examples).toHaveLength(2);
    for (const e of body.examples)
      expect(e).toMatchObject({ operation: "GET /v1/agents", capability: "svc_api:agents:read" });
    const wildcard = await api("POST", `/v1/delegations/${key.delegationId}/simulate`, {
      capabilities: ["svc_api:passports:*", "svc_api:agents:*"],
    });
    expect(wildcard.body).toMatchObject({ would_refuse: 0, would_allow: 5, examples: [] });
  });
});

/** A passport of the root organization and a delegation token of `capabilities` issued to it by `token`. */
async function derivedToken(token: string, capabilities: string[], durationSeconds = 1800) {
  const passport = await api("POST", "/v1/passports", {
    type: "organization",
    name: `lp-${Math.random().toString(36).slice(2, 8)}`,
    public_key: ed25519Jwk(),
  });
  expect(passport.status, JSON.stringify(passport.body)).toBe(201);
  const issued = await api(
    "POST",
    "/v1/delegation-tokens",
    { delegate_did: passport.body.did, capabilities, duration_seconds: durationSeconds },
    token,
  );
  expect(issued.status, JSON.stringify(issued.body)).toBe(201);
  return { token: issued.body.token as string, delegationId: issued.body.delegation_id as string };
}

describe("narrowing as a learning proposal", () => {
  it("is proposed once the thresholds hold; applying narrows the key and its derived delegation, rollback restores both", async () => {
    const db = await database();
    const key = await apiKey(SIX);
    // The key existed through the whole window.
    await db.writeTx((tx) =>
      tx.delegation.update({
        where: { id: key.delegationId },
        data: { createdAt: new Date(Date.now() - 31 * 86_400_000) },
      }),
    );
    const child = await derivedToken(key.token, ["svc_api:passports:read", "svc_api:events:read"]);
    for (let i = 0; i < 3; i++) expect((await api("GET", "/v1/passports", undefined, key.token)).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await api("GET", "/v1/agents", undefined, key.token)).status).toBe(200);
    expect((await api("GET", "/v1/passports", undefined, child.token)).status).toBe(200);
    // 7 calls let through (the child's issuance and its call included): under the threshold, nothing.
    expect(await proposeNarrowing(db, { windowMs: 30 * 86_400_000, minCalls: 8 })).toBe(0);

    process.env.SVC_NARROWING_MIN_CALLS = "5";
    try {
      expect(await proposeNarrowing(db)).toBe(1);
      // One open proposal per target.
      expect(await proposeNarrowing(db)).toBe(0);
    } finally {
      delete process.env.SVC_NARROWING_MIN_CALLS;
    }
    // A person's passport (the organization itself proposed it, and cannot decide its own proposal).
    const decider = await derivedToken(ctx.root.token, ["svc_api:learning:*"]);
    const list = await api(
      "GET",
      `/v1/svcos/learning/proposals?kind=delegation_narrowing&target=${key.delegationId}`,
      undefined,
      decider.token,
    );
    expect(list.body.data).toHaveLength(1);
    const p = list.body.data[0];
    const kept = ["svc_api:passports:read", "svc_api:agents:read", "svc_api:delegations:write"];
    expect(p).toMatchObject({
      approval_state: "pending",
      proposed: { capabilities: kept },
      previous: { capabilities: SIX },
      explain: { source: "inferred", scope: `delegation:${key.delegationId}` },
    });
    expect(p.explain.evidence_refs).toHaveLength(2);
    expect(p.explain.evidence_refs[0]).toMatch(/^stats:delegation_usage\?delegation_id=dlg_/);
    expect(p.explain.evidence_refs[1]).toContain(`&simulate=${encodeURIComponent(kept.join(","))}`);

    const act = (action: string) =>
      api("POST", `/v1/svcos/learning/proposals/${p.id}/${action}`, undefined, decider.token);
    expect((await act("approve")).status).toBe(200);
    const applied = await act("apply");
    expect(applied.status, JSON.stringify(applied.body)).toBe(200);

    const detail = async (id: string) => (await api("GET", `/v1/delegations/${id}`)).body.capabilities;
    expect(await detail(key.delegationId)).toEqual(kept);
    // The derived delegation keeps only what its narrowed parent still holds.
    expect(await detail(child.delegationId)).toEqual(["svc_api:passports:read"]);
    const narrowed = await db.read.provenanceRecord.findFirst({
      where: { operation: "DELEGATION_NARROW", resourceId: key.delegationId },
    });
    expect(narrowed).toMatchObject({ decision: "allowed", actorDid: key.orgDid });

    // A call needing a removed capability: 403, and its record names the capability.
    const refused = await api("GET", "/v1/delegations", undefined, key.token);
    expect(refused.status).toBe(403);
    expect(refused.body.missing_capability).toBe("svc_api:delegations:read");
    expect(await lastProvenance()).toMatchObject({
      delegationId: key.delegationId,
      capability: "svc_api:delegations:read",
      decision: "denied",
      status: 403,
    });
    expect((await api("GET", "/v1/events", undefined, child.token)).status).toBe(403);

    const rolled = await act("rollback");
    expect(rolled.status, JSON.stringify(rolled.body)).toBe(200);
    expect(await detail(key.delegationId)).toEqual(SIX);
    expect(await detail(child.delegationId)).toEqual(["svc_api:passports:read", "svc_api:events:read"]);
    expect((await api("GET", "/v1/delegations?limit=1", undefined, key.token)).status).toBe(200);
  });

  it("never widens: a proposal naming a capability the delegation does not hold is 400", async () => {
    const key = await apiKey(["svc_api:passports:read"]);
    const proposer = await apiKey(["svc_api:learning:*"]);
    const made = await api(
      "POST",
      "/v1/svcos/learning/proposals",
      { kind: "delegation_narrowing", target: key.delegationId, proposed: { capabilities: ["svc_api:agents:read"] } },
      proposer.token,
    );
    expect(made.status).toBe(400);
    expect(made.body.errors[0]).toMatchObject({ field: "/capabilities", code: "NOT_A_NARROWING" });
    for (const [proposed, code] of [
      [{ capabilities: "svc_api:passports:read" }, "INVALID_TYPE"],
      [{}, "REQUIRED_FIELD_MISSING"],
      [{ capabilities: [] }, "OUT_OF_RANGE"],
      [{ capabilities: ["not a capability"] }, "INVALID_FORMAT"],
      [{ capabilities: ["svc_api:passports:read"], extra: 1 }, "UNKNOWN_FIELD"],
    ] as const) {
      const bad = await api(
        "POST",
        "/v1/svcos/learning/proposals",
        { kind: "delegation_narrowing", target: key.delegationId, proposed },
        proposer.token,
      );
      expect(bad.status, JSON.stringify(proposed)).toBe(400);
      expect(bad.body.errors.map((e: { code: string }) => e.code)).toContain(code);
    }
    const unknown = await api(
      "POST",
      "/v1/svcos/learning/proposals",
      { kind: "delegation_narrowing", target: "dlg_nope", proposed: { capabilities: ["svc_api:passports:read"] } },
      proposer.token,
    );
    expect(unknown.status).toBe(404);
  });
});

describe("usage of an agent", () => {
  it("lists the manifest's declared capabilities, unused while no run used them", async () => {
    const agentId = await deployAndWait(ctx.server.url, ctx.root.token, "lp-agent", "export default async () => 1", {
      capabilities: [{ id: "svc_api:agents:read", evidence: ["looks itself up"] }],
    });
    const usage = await api("GET", `/v1/agents/${agentId}/usage`);
    expect(usage.status, JSON.stringify(usage.body)).toBe(200);
    expect(AgentUsage.parse(usage.body)).toMatchObject({
      agent_id: agentId,
      runs: 0,
      unused: ["svc_api:agents:read"],
      capabilities: [{ capability: "svc_api:agents:read", granted: true, calls: 0, refused: 0, last_used_at: null }],
    });
    expect((await api("GET", `/v1/agents/${agentId}/usage?since=nope`)).status).toBe(400);
  });

  it("counts what its runs used against what it declares", async () => {
    const agentId = await deployAndWait(
      ctx.server.url,
      ctx.root.token,
      "lp-emitter",
      `export default async (input, ctx) => ({ emitted: await ctx.events.emit("lp.used", { n: 1 }) })`,
      {
        capabilities: [
          { id: "svc_api:events:write", evidence: ["emits lp.used"] },
          { id: "svc_api:agents:read", evidence: ["never, in fact"] },
        ],
      },
    );
    const run = await api("POST", `/v1/agents/${agentId}/invoke`, {});
    expect(run.status, JSON.stringify(run.body)).toBe(202);
    const worker = startWorker({ log: () => undefined, tasks: [] });
    try {
      await expect
        .poll(async () => (await api("GET", `/v1/executions/${run.body.id}`)).body.status, {
          timeout: 30_000,
          interval: 50,
        })
        .toBe("completed");
    } finally {
      await worker.stop();
    }
    const usage = AgentUsage.parse((await api("GET", `/v1/agents/${agentId}/usage`)).body);
    expect(usage).toMatchObject({ agent_id: agentId, runs: 1, unused: ["svc_api:agents:read"] });
    expect(usage.capabilities.find((c) => c.capability === "svc_api:events:write")).toMatchObject({
      granted: true,
      calls: 1,
      refused: 0,
    });
    // The run's end record (the service recording its outcome under the run's delegation) is not
    // a call the agent made: nothing it did not declare shows up as used.
    expect(usage.capabilities.map((c) => c.capability).sort()).toEqual(["svc_api:agents:read", "svc_api:events:write"]);
  }, 60_000);
});

describe("the overview's needs attention", () => {
  it("lists a key holding high-risk capabilities it never used, and not the ones it used", async () => {
    const key = await apiKey(["svc_api:passports:read", "svc_api:passports:write", "svc_api:delegations:admin"]);
    const registered = await api(
      "POST",
      "/v1/passports",
      { type: "organization", name: "lp-attention", public_key: ed25519Jwk() },
      key.token,
    );
    expect(registered.status).toBe(201);
    const admin = (await consoleMember("admin")).caller;
    const listed = (await admin.overview.dashboard()).attention.unused_high_risk;
    expect(listed.find((k) => k.id === key.delegationId)).toEqual({
      id: key.delegationId,
      name: null,
      kind: "api_key",
      unused: ["svc_api:delegations:admin"],
    });
  });
});
