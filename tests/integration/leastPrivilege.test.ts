import { describe, expect, it } from "vitest";
import { database } from "@/server/db/client";
import { countsFromRecords, delegationSubtree } from "@/server/identity/capabilityUsage";
import { DelegationUsage, SimulateNarrowingResponse } from "@/server/identity/schemas";
import { delegationCounts } from "@/server/identity/usageRollup";
import { apiKey, call, secondOrg, useTestServer } from "./harness";

/**
 * Issue 31: least privilege from evidence. A key's real calls, per capability, against what it
 * holds; what a narrower grant would have refused; narrowing as a learning proposal.
 */
const ctx = useTestServer();
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
  it("counts what the records say, whole days from the rollup and the window's first day from the records", async () => {
    const key = await keyUsingTwoOfSix();
    const db = await database();
    const ids = await delegationSubtree(db.read, key.orgDid, key.delegationId);
    // Since two days back: today comes from the rollup, the window's first day from the records.
    const since = new Date(Date.now() - 2 * 86_400_000);
    const fromRollup = await delegationCounts(db.read, key.orgDid, ids, since);
    const fromRecords = await countsFromRecords(db.read, key.orgDid, ids, since);
    expect(Object.fromEntries(fromRollup)).toEqual(Object.fromEntries(fromRecords));
    expect(fromRollup.get("svc_api:passports:read")).toMatchObject({ calls: 3, refused: 0 });
    expect(fromRollup.get("svc_api:workflows:read")).toMatchObject({ calls: 0, refused: 1, lastUsedAt: null });
    const rows = await db.read.delegationUsageRollup.findMany({ where: { delegationId: key.delegationId } });
    expect(rows.reduce((n, r) => n + Number(r.calls), 0)).toBe(5);
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
