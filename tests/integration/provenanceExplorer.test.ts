import { beforeAll, describe, expect, it } from "vitest";
import { database } from "@/server/db/client";
import { EMPTY_SHA256 } from "@/server/governance/governCall";
import { newId } from "@/server/ids";
import { appendProvenance } from "@/server/provenance/appendProvenance";
import { call, useTestServer } from "./harness";

/**
 * The provenance explorer's filters, on the list both /v1 and the console use: operation by
 * prefix, the console's own reads left out on request (still recorded), a time range.
 */
const ctx = useTestServer();
const api = (query: string) =>
  call(ctx.server.url, "GET", `/v1/provenance?limit=100&${query}`, { token: ctx.root.token });
const ops = (body: { data: { operation: string; decision: string }[] }) =>
  body.data.map((r) => `${r.operation} ${r.decision}`);

beforeAll(async () => {
  const db = await database();
  const entry = (operation: string, capability: string | null, decision: "allowed" | "denied") =>
    appendProvenance(db, {
      org_did: ctx.root.orgDid,
      actor_did: "did:key:z6MkExplorerPerson",
      delegation_id: ctx.root.delegationId,
      grantor_did: ctx.root.orgDid,
      capability,
      operation,
      resource_type: null,
      resource_id: null,
      decision,
      status: decision === "allowed" ? 200 : 403,
      request_hash: EMPTY_SHA256,
      request_id: newId("req"),
    });
  await entry("TRPC explorer.list", "svc_api:provenance:read", "allowed");
  await entry("TRPC explorer.me", null, "allowed");
  await entry("TRPC explorer.create", "svc_api:delegations:write", "allowed");
  await entry("TRPC explorer.list", "svc_api:provenance:read", "denied");
});

describe("the provenance list's filters", () => {
  it("matches operations by prefix", async () => {
    const res = await api(`operation=${encodeURIComponent("TRPC explorer.")}`);
    expect(res.status).toBe(200);
    expect(ops(res.body).sort()).toEqual([
      "TRPC explorer.create allowed",
      "TRPC explorer.list allowed",
      "TRPC explorer.list denied",
      "TRPC explorer.me allowed",
    ]);
    expect((await api(`operation=${encodeURIComponent("TRPC explorer.l")}`)).body.data).toHaveLength(2);
  });

  it("leaves out the console's allowed reads on request, keeping its writes and refusals", async () => {
    const hidden = await api(`operation=${encodeURIComponent("TRPC explorer.")}&console_reads=exclude`);
    expect(hidden.status).toBe(200);
    expect(ops(hidden.body).sort()).toEqual(["TRPC explorer.create allowed", "TRPC explorer.list denied"]);
    // Included by default: the records are all still there.
    expect(
      (await api(`operation=${encodeURIComponent("TRPC explorer.")}&console_reads=include`)).body.data,
    ).toHaveLength(4);
    expect((await api("console_reads=sometimes")).status).toBe(400);
  });

  it("filters by a time range", async () => {
    const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
    const inAMinute = new Date(Date.now() + 60_000).toISOString();
    expect(
      (
        await api(
          `operation=${encodeURIComponent("TRPC explorer.")}&from=${encodeURIComponent(hourAgo)}&to=${encodeURIComponent(inAMinute)}`,
        )
      ).body.data,
    ).toHaveLength(4);
    expect(
      (await api(`operation=${encodeURIComponent("TRPC explorer.")}&to=${encodeURIComponent(hourAgo)}`)).body.data,
    ).toHaveLength(0);
  });
});
