import { describe, expect, it } from "vitest";
import { newId } from "@/server/ids";
import { createCaller } from "@/server/appRouter";
import { apiKey, call, ed25519Jwk, lastProvenance, useTestServer } from "./harness";

/** Attacks found in review: each must fail cleanly, with a problem+json answer and a record. */
const t = useTestServer();
const api = (
  method: string,
  path: string,
  token: string | undefined,
  body?: unknown,
  headers?: Record<string, string>,
) => call(t.server.url, method, path, { token, body, headers });
const agent = async () =>
  (await api("POST", "/v1/passports", t.root.token, { type: "agent", name: "a", public_key: ed25519Jwk() })).body;

describe("idempotency keys belong to one credential", () => {
  it("another credential reusing the key and body does not get the first response (nor its token)", async () => {
    const admin = await apiKey();
    const reader = await apiKey(["svc_api:passports:read"]);
    const headers = { "Idempotency-Key": "order-1" };
    const first = await api(
      "POST",
      "/v1/sessions/exchange",
      admin.token,
      { capabilities: ["svc_api:passports:read"] },
      headers,
    );
    expect(first.status).toBe(201);
    const other = await api(
      "POST",
      "/v1/sessions/exchange",
      reader.token,
      { capabilities: ["svc_api:passports:read"] },
      headers,
    );
    expect(other.status).toBe(201);
    expect(other.headers.get("idempotent-replayed")).toBeNull();
    expect(other.body.token).not.toBe(first.body.token);
    const again = await api(
      "POST",
      "/v1/sessions/exchange",
      admin.token,
      { capabilities: ["svc_api:passports:read"] },
      headers,
    );
    expect(again.body.token).toBe(first.body.token);
  });
});

describe("revocation needs a right to the delegation", () => {
  it("a delegation revokes itself and its descendants, not its peers or its ancestors", async () => {
    const a = await agent();
    const narrow = await api("POST", "/v1/delegation-tokens", t.root.token, {
      delegate_did: a.did,
      capabilities: ["svc_api:delegations:write", "svc_api:delegations:read"],
      duration_seconds: 600,
    });
    const child = await api("POST", "/v1/sessions/exchange", narrow.body.token, {
      capabilities: ["svc_api:delegations:read"],
    });
    const peer = await apiKey(["svc_api:passports:read"]);
    const refused = await api("POST", `/v1/delegations/${peer.delegationId}/revoke`, narrow.body.token);
    expect(refused.status).toBe(403);
    expect(refused.body.missing_capability).toBe("svc_api:delegations:admin");
    expect((await api("POST", `/v1/delegations/${t.root.delegationId}/revoke`, narrow.body.token)).status).toBe(403);
    expect((await api("POST", `/v1/delegations/${child.body.delegation_id}/revoke`, narrow.body.token)).status).toBe(
      201,
    );
    expect((await api("POST", `/v1/delegations/${narrow.body.delegation_id}/revoke`, narrow.body.token)).status).toBe(
      201,
    );
    expect((await api("GET", "/v1/passports", t.root.token)).status).toBe(200);
  });
});

describe("tiers", () => {
  it("only an administrator sets tiers, and never on their own passport", async () => {
    const a = await agent();
    const writer = await api("POST", "/v1/delegation-tokens", t.root.token, {
      delegate_did: a.did,
      capabilities: ["svc_api:passports:write", "svc_api:passports:read"],
      duration_seconds: 600,
    });
    const self = await api("PATCH", `/v1/passports/${a.did}`, writer.body.token, { verification_tier: 3 });
    expect(self.status).toBe(403);
    expect((await api("PATCH", `/v1/passports/${a.did}`, writer.body.token, { name: "renamed" })).status).toBe(200);
    const adminOnSelf = await api("POST", "/v1/delegation-tokens", t.root.token, {
      delegate_did: a.did,
      capabilities: ["svc_api:*"],
      duration_seconds: 600,
    });
    expect(
      (await api("PATCH", `/v1/passports/${a.did}`, adminOnSelf.body.token, { verification_tier: 3 })).status,
    ).toBe(403);
    expect((await api("PATCH", `/v1/passports/${a.did}`, t.root.token, { verification_tier: 3 })).status).toBe(200);
  });

  it("a low-tier grantor cannot borrow a higher-tier passport's standing", async () => {
    const low = await agent();
    const high = await agent();
    await api("PATCH", `/v1/passports/${high.did}`, t.root.token, { verification_tier: 3 });
    const lowToken = await api("POST", "/v1/delegation-tokens", t.root.token, {
      delegate_did: low.did,
      capabilities: ["svc_api:delegations:write", "svc_api:executions:read"],
      duration_seconds: 600,
    });
    const borrow = await api("POST", "/v1/delegation-tokens", lowToken.body.token, {
      delegate_did: high.did,
      capabilities: ["svc_api:executions:read"],
      duration_seconds: 60,
    });
    expect(borrow.status).toBe(403);
  });
});

describe("hostile input", () => {
  it("deep nesting is a 400, not a stack overflow", async () => {
    const deep = "[".repeat(100_000) + "]".repeat(100_000);
    const res = await call(t.server.url, "POST", "/v1/passports", {
      token: t.root.token,
      rawBody: deep,
      headers: { "Content-Type": "application/json" },
    });
    expect(res.status).toBe(400);
    expect(await lastProvenance()).toMatchObject({ status: 400, decision: "denied" });
  });

  it("NUL characters through tRPC are BAD_REQUEST and recorded", async () => {
    const caller = createCaller({
      authorization: `Bearer ${t.root.token}`,
      clientAddress: "127.0.0.1",
      requestId: newId("req"),
    });
    await expect(caller.identity.delegations.get({ id: "dlg_\u0000" })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    expect(await lastProvenance()).toMatchObject({ status: 400, decision: "denied", resourceId: null });
  });
});
