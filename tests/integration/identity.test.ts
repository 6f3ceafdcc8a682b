import { describe, expect, it } from "vitest";
import { Passport, RevocationRecord, SessionExchangeResponse } from "@/server/identity/schemas";
import { apiKey, call, ed25519Jwk, p256Jwk, secondOrg, startOtherProcess, useTestServer } from "./harness";

const t = useTestServer();

const api = (method: string, path: string, token: string | undefined, body?: unknown) =>
  call(t.server.url, method, path, { token, body });
const newAgent = async (name = "agent", token = t.root.token) =>
  (await api("POST", "/v1/passports", token, { type: "agent", name, public_key: ed25519Jwk() })).body;

describe("passports", () => {
  it("registers from an Ed25519 JWK, a P-256 JWK and a did:key, with did:key DIDs and tier 0", async () => {
    for (const public_key of [ed25519Jwk(), p256Jwk(), "did:key:zDnaerDaTF5BXEavCrfRZEk316dpbLsfPDZ3WJ5hRTPFU2169"]) {
      const res = await api("POST", "/v1/passports", t.root.token, { type: "agent", name: "k", public_key });
      expect(res.status).toBe(201);
      expect(() => Passport.parse(res.body)).not.toThrow();
      expect(res.body.did).toMatch(/^did:key:z(6Mk|Dn)/);
      expect(res.body).toMatchObject({ verification_tier: 0, identity_tier: 0, org_did: t.root.orgDid });
    }
    const again = await api("POST", "/v1/passports", t.root.token, {
      type: "agent",
      name: "k",
      public_key: "did:key:zDnaerDaTF5BXEavCrfRZEk316dpbLsfPDZ3WJ5hRTPFU2169",
    });
    expect(again.status).toBe(409);
  });

  it("refuses a private key, a point off the curve, and human passports", async () => {
    const { generateKeyPairSync } = await import("node:crypto");
    const priv = generateKeyPairSync("ed25519").privateKey.export({ format: "jwk" });
    const res = await api("POST", "/v1/passports", t.root.token, { type: "agent", name: "k", public_key: priv });
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/private/);
    const bad = p256Jwk();
    expect(
      (await api("POST", "/v1/passports", t.root.token, { type: "agent", name: "k", public_key: { ...bad, y: bad.x } }))
        .status,
    ).toBe(400);
    expect(
      (await api("POST", "/v1/passports", t.root.token, { type: "human", name: "k", public_key: ed25519Jwk() })).status,
    ).toBe(400);
  });

  it("lists with cursors, newest first, and filters by type", async () => {
    for (let i = 0; i < 5; i++) await newAgent(`page-${i}`);
    const seen = new Set<string>();
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: any = await api(
        "GET",
        `/v1/passports?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
        t.root.token,
      );
      expect(res.status).toBe(200);
      expect(res.body.data.length).toBeLessThanOrEqual(2);
      for (const p of res.body.data) seen.add(p.did);
      cursor = res.body.pagination.next_cursor;
      expect(res.body.pagination.has_more).toBe(cursor !== null);
      pages++;
    } while (cursor && pages < 100);
    const all = await api("GET", "/v1/passports?limit=100", t.root.token);
    expect(seen.size).toBe(all.body.data.length);
    const orgs = await api("GET", "/v1/passports?type=organization&limit=100", t.root.token);
    expect(orgs.body.data.every((p: any) => p.type === "organization")).toBe(true);
  });

  it("PATCH sets tiers within 0..3", async () => {
    const p = await newAgent();
    const res = await api("PATCH", `/v1/passports/${p.did}`, t.root.token, { verification_tier: 2, identity_tier: 3 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ verification_tier: 2, identity_tier: 3 });
    const bad = await api("PATCH", `/v1/passports/${p.did}`, t.root.token, { verification_tier: 4 });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatchObject({ field: "verification_tier", code: "OUT_OF_RANGE" });
  });
});

describe("delegation tokens", () => {
  it("issue a narrower delegation that works for what it covers and nothing else", async () => {
    const agent = await newAgent();
    const res = await api("POST", "/v1/delegation-tokens", t.root.token, {
      delegate_did: agent.did,
      capabilities: ["svc_api:passports:read"],
      duration_seconds: 600,
    });
    expect(res.status).toBe(201);
    expect(() => SessionExchangeResponse.parse(res.body)).not.toThrow();
    expect(res.body).toMatchObject({
      passport_id: agent.did,
      did: agent.did,
      capabilities: ["svc_api:passports:read"],
    });
    expect(new Date(res.body.expires_at).getTime() - new Date(res.body.created_at).getTime()).toBe(600_000);
    expect((await api("GET", "/v1/passports", res.body.token)).status).toBe(200);
    const denied = await api("GET", "/v1/delegations", res.body.token);
    expect(denied.status).toBe(403);
    expect(denied.body.detail).toContain("svc_api:delegations:read");
    const detail = await api("GET", `/v1/delegations/${res.body.delegation_id}`, t.root.token);
    expect(detail.body).toMatchObject({
      grantor_did: t.root.orgDid,
      delegate_did: agent.did,
      parent_id: t.root.delegationId,
      ancestry: [t.root.delegationId],
      status: "active",
      kind: "delegation_token",
    });
    const parent = await api("GET", `/v1/delegations/${t.root.delegationId}`, t.root.token);
    expect(parent.body.derived.map((d: any) => d.id)).toContain(res.body.delegation_id);
  });

  it("can only narrow: capabilities and lifetime beyond the grantor's are 403", async () => {
    const narrow = await apiKey(["svc_api:passports:read", "svc_api:delegations:write"]);
    const agent = await newAgent();
    const wider = await api("POST", "/v1/delegation-tokens", narrow.token, {
      delegate_did: agent.did,
      capabilities: ["svc_api:passports:write"],
      duration_seconds: 60,
    });
    expect(wider.status).toBe(403);
    expect(wider.body.detail).toContain("svc_api:passports:write");
    const family = await api("POST", "/v1/delegation-tokens", narrow.token, {
      delegate_did: agent.did,
      capabilities: ["svc_api:passports:*"],
      duration_seconds: 60,
    });
    expect(family.status).toBe(403);
    const longer = await api("POST", "/v1/delegation-tokens", narrow.token, {
      delegate_did: agent.did,
      capabilities: ["svc_api:passports:read"],
      duration_seconds: 7200,
    });
    expect(longer.status).toBe(403);
    expect(longer.body.detail).toMatch(/outlive/);
  });

  it("the delegate must be a passport of the caller's organization", async () => {
    const res = await api("POST", "/v1/delegation-tokens", t.root.token, {
      delegate_did: "did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooXX",
      capabilities: ["svc_api:passports:read"],
      duration_seconds: 60,
    });
    expect(res.status).toBe(400);
    expect(res.body.errors[0]).toMatchObject({ field: "delegate_did", code: "UNKNOWN_PASSPORT" });
    expect(
      (
        await api("POST", "/v1/delegation-tokens", t.root.token, {
          delegate_did: "nope",
          capabilities: ["svc_api:x"],
          duration_seconds: 60,
        })
      ).status,
    ).toBe(400);
    expect(
      (
        await api("POST", "/v1/delegation-tokens", t.root.token, {
          delegate_did: t.root.orgDid,
          capabilities: ["Not A Capability"],
          duration_seconds: 60,
        })
      ).status,
    ).toBe(400);
  });
});

describe("session exchange", () => {
  const exchange = (token: string, body?: unknown) => api("POST", "/v1/sessions/exchange", token, body);

  it("defaults: agents read/invoke and reasoning (the contract's default), 86400 seconds, risk standard", async () => {
    const longLived = await apiKey(["svc_api:*"], undefined, 7 * 86_400);
    const res = await exchange(longLived.token);
    expect(res.status).toBe(201);
    expect(() => SessionExchangeResponse.parse(res.body)).not.toThrow();
    expect(res.body.capabilities.sort()).toEqual([
      "svc_api:agents:invoke",
      "svc_api:agents:read",
      "svc_api:reasoning:think",
    ]);
    expect(new Date(res.body.expires_at).getTime() - new Date(res.body.created_at).getTime()).toBe(86_400_000);
    expect(res.body.passport_id).toBe(t.root.orgDid);
    const d = await api("GET", `/v1/delegations/${res.body.delegation_id}`, t.root.token);
    expect(d.body).toMatchObject({ kind: "session", risk_level: "standard", parent_id: longLived.delegationId });
  });

  it("scopes is an alias of capabilities; an empty list means the defaults", async () => {
    expect((await exchange(t.root.token, { scopes: ["svc_api:passports:read"] })).body.capabilities).toEqual([
      "svc_api:passports:read",
    ]);
    expect((await exchange(t.root.token, { capabilities: [] })).body.capabilities).toHaveLength(3);
    expect((await exchange(t.root.token, { capabilities: ["svc_api:a:b"], scopes: ["svc_api:c:d"] })).status).toBe(400);
  });

  it("duration bounds 1..2592000", async () => {
    expect((await exchange(t.root.token, { duration_seconds: 1 })).status).toBe(201);
    for (const d of [0, -5, 2_592_001, 1.5]) {
      const res = await exchange(t.root.token, { duration_seconds: d });
      expect(res.status, String(d)).toBe(400);
      expect(res.body.errors[0].field).toBe("duration_seconds");
    }
    expect((await exchange(t.root.token, { duration_seconds: "60" })).body.errors[0]).toMatchObject({
      field: "duration_seconds",
      code: "INVALID_TYPE",
    });
    expect((await exchange(t.root.token, { risk_level: "extreme" })).body.errors[0]).toMatchObject({
      field: "risk_level",
      code: "INVALID_ENUM",
    });
  });

  it("cannot exceed what the caller holds; the default lifetime shrinks to what is left", async () => {
    const short = await api("POST", "/v1/sessions/exchange", t.root.token, {
      capabilities: ["svc_api:passports:read"],
      duration_seconds: 120,
    });
    const res = await exchange(short.body.token, { capabilities: ["svc_api:passports:read"] });
    expect(res.status).toBe(201);
    expect(new Date(res.body.expires_at).getTime()).toBeLessThanOrEqual(new Date(short.body.expires_at).getTime());
    const wider = await exchange(short.body.token);
    expect(wider.status).toBe(403);
    expect(wider.body.detail).toMatch(/svc_api:agents:read/);
    expect(
      (await exchange(short.body.token, { capabilities: ["svc_api:passports:read"], duration_seconds: 3600 })).status,
    ).toBe(403);
  });

  it("rejects with 403 naming the tier that fell short", async () => {
    const agent = await newAgent();
    await api("PATCH", `/v1/passports/${agent.did}`, t.root.token, { verification_tier: 1, identity_tier: 2 });
    const issued = await api("POST", "/v1/delegation-tokens", t.root.token, {
      delegate_did: agent.did,
      capabilities: ["svc_api:executions:read"],
      duration_seconds: 600,
    });
    const v = await exchange(issued.body.token, {
      capabilities: ["svc_api:executions:read"],
      required_verification_tier: 2,
    });
    expect(v.status).toBe(403);
    expect(v.body).toMatchObject({ tier: "verification", actual_tier: 1, required_tier: 2 });
    expect(v.body.detail).toMatch(/verification tier is 1, below the required 2/);
    const i = await exchange(issued.body.token, {
      capabilities: ["svc_api:executions:read"],
      required_identity_tier: 3,
    });
    expect(i.status).toBe(403);
    expect(i.body.tier).toBe("identity");
    const ok = await exchange(issued.body.token, {
      capabilities: ["svc_api:executions:read"],
      required_verification_tier: 1,
      required_identity_tier: 2,
    });
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({ verification_tier: 1, identity_tier: 2, passport_id: agent.did });
    expect((await exchange(issued.body.token, { required_verification_tier: 4 })).status).toBe(400);
  });
});

describe("revocation", () => {
  it("revoking a delegation revokes everything derived from it, each with its record", async () => {
    const key = await apiKey();
    const agent = await newAgent();
    const child = await api("POST", "/v1/delegation-tokens", key.token, {
      delegate_did: agent.did,
      capabilities: ["svc_api:passports:read", "svc_api:executions:read"],
      duration_seconds: 600,
    });
    const grandchild = await exchange(child.body.token, { capabilities: ["svc_api:passports:read"] });
    expect((await api("GET", "/v1/passports", grandchild.body.token)).status).toBe(200);

    const rev = await api("POST", `/v1/delegations/${key.delegationId}/revoke`, t.root.token, {
      reason: "compromised",
      metadata: { ticket: "SEC-1" },
    });
    expect(rev.status).toBe(201);
    expect(() => RevocationRecord.parse(rev.body)).not.toThrow();
    expect(rev.body).toMatchObject({
      delegation_id: key.delegationId,
      revoked_by: t.root.orgDid,
      reason: "compromised",
      metadata: { ticket: "SEC-1" },
    });

    for (const t of [key.token, child.body.token, grandchild.body.token])
      expect((await api("GET", "/v1/passports", t)).status).toBe(401);
    const list = await api("GET", "/v1/revocations?limit=100", t.root.token);
    const ids = list.body.data.map((r: any) => r.delegation_id);
    expect(ids).toEqual(
      expect.arrayContaining([key.delegationId, child.body.delegation_id, grandchild.body.delegation_id]),
    );
    expect((await api("GET", `/v1/delegations/${grandchild.body.delegation_id}`, t.root.token)).body.status).toBe(
      "revoked",
    );

    const again = await api("POST", `/v1/delegations/${key.delegationId}/revoke`, t.root.token);
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ current_state: "revoked", requested_state: "revoked" });
  });

  function exchange(token: string, body?: unknown) {
    return api("POST", "/v1/sessions/exchange", token, body);
  }

  it("a revoked token is refused at once by another process on the same database", async () => {
    const other = await startOtherProcess();
    try {
      const key = await apiKey();
      expect((await call(other.url, "GET", "/v1/passports", { token: key.token })).status).toBe(200);
      expect((await api("POST", `/v1/delegations/${key.delegationId}/revoke`, t.root.token)).status).toBe(201);
      const refused = await call(other.url, "GET", "/v1/passports", { token: key.token });
      expect(refused.status).toBe(401);
      expect(refused.body.detail).toMatch(/revoked/);
    } finally {
      other.stop();
    }
  });

  it("filters delegations by status", async () => {
    const revoked = await api("GET", "/v1/delegations?status=revoked&limit=100", t.root.token);
    expect(revoked.body.data.length).toBeGreaterThan(0);
    expect(revoked.body.data.every((d: any) => d.status === "revoked")).toBe(true);
    const active = await api("GET", "/v1/delegations?status=active&limit=100", t.root.token);
    expect(active.body.data.every((d: any) => d.status === "active")).toBe(true);
  });
});

describe("capability match", () => {
  it("finds the passports whose delegations cover the required capabilities", async () => {
    const full = await newAgent("full");
    const half = await newAgent("half");
    await api("POST", "/v1/delegation-tokens", t.root.token, {
      delegate_did: full.did,
      capabilities: ["svc_api:agents:*"],
      duration_seconds: 600,
    });
    await api("POST", "/v1/delegation-tokens", t.root.token, {
      delegate_did: half.did,
      capabilities: ["svc_api:agents:read"],
      duration_seconds: 600,
    });
    const res = await api("POST", "/v1/capabilities/match", t.root.token, {
      requiredCapabilities: ["svc_api:agents:read", "svc_api:agents:invoke"],
      agent_ids: [full.did, half.did],
    });
    expect(res.status).toBe(200);
    expect(res.body.data.matches.map((m: any) => m.passport_id)).toEqual([full.did]);
    expect(res.body.data.partial).toEqual([
      expect.objectContaining({ passport_id: half.did, missing_capabilities: ["svc_api:agents:invoke"] }),
    ]);
    const bad = await api("POST", "/v1/capabilities/match", t.root.token, {});
    expect(bad.body.errors[0]).toMatchObject({ field: "requiredCapabilities", code: "REQUIRED_FIELD_MISSING" });
  });
});

describe("organizations and tenancy", () => {
  it("creates, lists, gets and updates organizations", async () => {
    const passport = (
      await api("POST", "/v1/passports", t.root.token, { type: "organization", name: "Acme", public_key: ed25519Jwk() })
    ).body;
    const created = await api("POST", "/v1/cp/orgs", t.root.token, {
      org_did: passport.did,
      name: "Acme Corp",
      autonomy_profile: "balanced",
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      org_did: passport.did,
      name: "Acme Corp",
      deployment_mode: "cloud",
      autonomy_profile: "balanced",
      parent_org_did: t.root.orgDid,
      slug: "acme-corp",
    });
    expect((await api("POST", "/v1/cp/orgs", t.root.token, { org_did: passport.did, name: "Again" })).status).toBe(409);
    const agent = await newAgent();
    expect(
      (await api("POST", "/v1/cp/orgs", t.root.token, { org_did: agent.did, name: "Not an org" })).body.errors[0],
    ).toMatchObject({ field: "org_did", code: "UNKNOWN_PASSPORT" });
    expect(
      (await api("POST", "/v1/cp/orgs", t.root.token, { org_did: passport.did, name: "x", deployment_mode: "moon" }))
        .body.errors[0],
    ).toMatchObject({ field: "deployment_mode", code: "INVALID_ENUM" });
    const updated = await api("PATCH", `/v1/cp/orgs/${passport.did}`, t.root.token, {
      deployment_mode: "hybrid",
      data_residency_tier: "regional",
    });
    expect(updated.body).toMatchObject({ deployment_mode: "hybrid", data_residency_tier: "regional" });
    const list = await api("GET", "/v1/cp/orgs?limit=100", t.root.token);
    expect(list.body.data.map((o: any) => o.org_did)).toEqual(expect.arrayContaining([t.root.orgDid, passport.did]));
    expect((await api("GET", `/v1/cp/orgs/${t.root.orgDid}`, t.root.token)).body.slug).toBe("root");
  });

  it("a token of one organization gets 404 for every id of another", async () => {
    const tenant = await secondOrg(t.server.url, t.root.token, "Tenant B");
    const mine = await newAgent("root agent");
    const theirs = await newAgent("b agent", tenant.token);
    const rootDelegation = t.root.delegationId;
    const probes: [string, string, unknown?][] = [
      ["GET", `/v1/passports/${mine.did}`],
      ["PATCH", `/v1/passports/${mine.did}`, { verification_tier: 3 }],
      ["GET", `/v1/delegations/${rootDelegation}`],
      ["POST", `/v1/delegations/${rootDelegation}/revoke`],
      ["GET", `/v1/cp/orgs/${t.root.orgDid}`],
      ["PATCH", `/v1/cp/orgs/${t.root.orgDid}`, { name: "pwned" }],
    ];
    for (const [method, path, body] of probes)
      expect((await api(method, path, tenant.token, body)).status, `${method} ${path}`).toBe(404);
    // And the reverse: the root organization does not see the tenant's passports either.
    expect((await api("GET", `/v1/passports/${theirs.did}`, t.root.token)).status).toBe(404);
    // Lists show only the caller's own records.
    const list = await api("GET", "/v1/passports?limit=100", tenant.token);
    expect(list.body.data.map((p: any) => p.did)).toEqual([theirs.did]);
    const dlg = await api("POST", "/v1/delegation-tokens", tenant.token, {
      delegate_did: mine.did,
      capabilities: ["svc_api:passports:read"],
      duration_seconds: 60,
    });
    expect(dlg.status).toBe(400);
    expect((await api("GET", "/v1/revocations?limit=100", tenant.token)).body.data).toEqual([]);
  });
});

describe("capabilities are checked against the catalogue", () => {
  const unknownNamed = (body: { errors?: { code: string; message: string }[] }) =>
    body.errors?.some((e) => e.code === "UNKNOWN_CAPABILITY" && e.message.includes('"svc_api:pasports:read"'));

  it("a misspelt capability is a 400 naming it, wherever capabilities are given", async () => {
    const agent = await newAgent("catalogue");
    const token = await api("POST", "/v1/delegation-tokens", t.root.token, {
      delegate_did: agent.did,
      capabilities: ["svc_api:passports:read", "svc_api:pasports:read"],
      duration_seconds: 60,
    });
    expect(token.status).toBe(400);
    expect(unknownNamed(token.body)).toBe(true);
    const session = await api("POST", "/v1/sessions/exchange", t.root.token, {
      capabilities: ["svc_api:pasports:read"],
    });
    expect(session.status).toBe(400);
    expect(unknownNamed(session.body)).toBe(true);
    const match = await api("POST", "/v1/capabilities/match", t.root.token, {
      requiredCapabilities: ["svc_api:pasports:read"],
    });
    expect(match.status).toBe(400);
    await expect(apiKey(["svc_api:pasports:read"])).rejects.toMatchObject({ status: 400 });
    const { createCaller } = await import("@/server/appRouter");
    const { newId } = await import("@/server/ids");
    const trpc = createCaller({
      authorization: `Bearer ${t.root.token}`,
      clientAddress: "127.0.0.1",
      requestId: newId("req"),
    });
    await expect(
      trpc.identity.delegations.issue({
        delegate_did: agent.did,
        capabilities: ["svc_api:pasports:read"],
        duration_seconds: 60,
      }),
    ).rejects.toMatchObject({ code: "BAD_REQUEST" });
  });

  it("families of known areas are accepted; families of unknown areas are not", async () => {
    const agent = await newAgent("families");
    for (const capabilities of [["svc_api:*"], ["svc_api:agents:*"], ["svc_api:cp:write", "svc_api:members:read"]]) {
      expect(
        (
          await api("POST", "/v1/delegation-tokens", t.root.token, {
            delegate_did: agent.did,
            capabilities,
            duration_seconds: 60,
          })
        ).status,
        capabilities.join(),
      ).toBe(201);
    }
    expect(
      (
        await api("POST", "/v1/delegation-tokens", t.root.token, {
          delegate_did: agent.did,
          capabilities: ["svc_api:agentz:*"],
          duration_seconds: 60,
        })
      ).status,
    ).toBe(400);
  });
});

describe("answers that fit the caller's situation", () => {
  const remediation = (body: { remediation?: { description: string }[] }) =>
    (body.remediation ?? []).map((r) => r.description).join(" ");

  it("a delegation token takes a name, shown on the delegation", async () => {
    const passport = await call(t.server.url, "POST", "/v1/passports", {
      token: t.root.token,
      body: { type: "agent", name: "named-key-holder", public_key: ed25519Jwk() },
    });
    const issued = await call(t.server.url, "POST", "/v1/delegation-tokens", {
      token: t.root.token,
      body: {
        delegate_did: passport.body.did,
        capabilities: ["svc_api:passports:read"],
        duration_seconds: 600,
        name: "reporting bot",
      },
    });
    expect(issued.status, JSON.stringify(issued.body)).toBe(201);
    const got = await call(t.server.url, "GET", `/v1/delegations/${issued.body.delegation_id}`, {
      token: t.root.token,
    });
    expect(got.body.name).toBe("reporting bot");
  });

  it("a revoked token is told to use another, not to send an Authorization header it sent", async () => {
    const passport = await call(t.server.url, "POST", "/v1/passports", {
      token: t.root.token,
      body: { type: "agent", name: "soon-revoked", public_key: ed25519Jwk() },
    });
    const issued = await call(t.server.url, "POST", "/v1/delegation-tokens", {
      token: t.root.token,
      body: { delegate_did: passport.body.did, capabilities: ["svc_api:passports:read"], duration_seconds: 600 },
    });
    await call(t.server.url, "POST", `/v1/delegations/${issued.body.delegation_id}/revoke`, {
      token: t.root.token,
      body: { reason: "test" },
    });
    const refused = await call(t.server.url, "GET", "/v1/passports", { token: issued.body.token });
    expect(refused.status).toBe(401);
    expect(remediation(refused.body)).not.toMatch(/Include an Authorization header/);
    expect(remediation(refused.body)).toMatch(/another API key|create a new one/);
    // Without a header, the header is what to send.
    const bare = await call(t.server.url, "GET", "/v1/passports", {});
    expect(remediation(bare.body)).toMatch(/Include an Authorization header/);
  });

  it("a 403 sends the caller to an administrator only for a missing capability", async () => {
    const passport = await call(t.server.url, "POST", "/v1/passports", {
      token: t.root.token,
      body: { type: "agent", name: "narrow", public_key: ed25519Jwk() },
    });
    const narrow = await call(t.server.url, "POST", "/v1/delegation-tokens", {
      token: t.root.token,
      body: { delegate_did: passport.body.did, capabilities: ["svc_api:passports:read"], duration_seconds: 600 },
    });
    const missing = await call(t.server.url, "POST", "/v1/events/emit", {
      token: narrow.body.token,
      body: { type: "x.y" },
    });
    expect(missing.status).toBe(403);
    expect(remediation(missing.body)).toMatch(/administrator.*svc_api:events:write/);
    // The requester deciding its own approval: no delegation would change that.
    const asked = await call(t.server.url, "POST", "/v1/approvals", {
      token: t.root.token,
      body: { task_id: "t-own", agent_id: "agt_own", action_description: "pay", risk_level: "low" },
    });
    expect(asked.status, JSON.stringify(asked.body)).toBe(201);
    const own = await call(t.server.url, "POST", `/v1/approvals/${asked.body.id}/respond`, {
      token: t.root.token,
      body: { decision: "approve" },
    });
    expect(own.status).toBe(403);
    expect(remediation(own.body)).not.toMatch(/Ask an administrator/);
  });
});
