import { createHmac, generateKeyPairSync } from "node:crypto";
import { SignJWT } from "jose";
import { afterEach, beforeEach, describe, expect, it, onTestFinished, vi } from "vitest";
import { resetConfig } from "@/server/config";
import { keyRing } from "@/server/keys/signingKeys";
import { apiKey, call, ed25519Jwk, inFreshMinute, lastProvenance, provenanceCount, useTestServer } from "./harness";

const t = useTestServer();

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
const now = () => Math.floor(Date.now() / 1000);

function claims(over: Record<string, unknown> = {}) {
  return {
    iss: "svc",
    aud: "svc-api",
    sub: t.root.orgDid,
    org: t.root.orgDid,
    jti: t.root.delegationId,
    iat: now(),
    exp: now() + 600,
    ...over,
  };
}

async function signWithServiceKey(payload: Record<string, unknown>, header: Record<string, unknown> = {}) {
  const { current } = await keyRing();
  return new SignJWT(payload)
    .setProtectedHeader({ alg: "EdDSA", typ: "dlg+jwt", kid: current.kid, ...header })
    .sign(current.privateKey);
}

function expectProblem(res: { status: number; headers: Headers; body: any }, status: number) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toContain("application/problem+json");
  expect(res.headers.get("x-request-id")).toBeTruthy();
  expect(res.body).toMatchObject({
    status,
    title: expect.any(String),
    detail: expect.any(String),
    type: expect.any(String),
    instance: expect.any(String),
    request_id: res.headers.get("x-request-id"),
  });
}

describe("authentication", () => {
  // Each refusal here is the first of its minute, so it has a record of its own (anonymousRefusals.ts).
  beforeEach(() => inFreshMinute());
  afterEach(() => vi.useRealTimers());

  it("refuses a call without credentials with a remediation step, and records the denial", async () => {
    const before = await provenanceCount();
    const res = await call(t.server.url, "GET", "/v1/passports");
    expectProblem(res, 401);
    expect(res.body.remediation[0].description).toMatch(/Authorization header with a valid API token/);
    expect(res.headers.get("x-ratelimit-limit")).toBeTruthy();
    expect(await provenanceCount()).toBe(before + 1);
    expect(await lastProvenance()).toMatchObject({
      decision: "denied",
      status: 401,
      operation: "GET /v1/passports",
      actorDid: null,
    });
  });

  const forged: [string, () => Promise<string>][] = [
    ["alg none", async () => `${b64({ alg: "none", typ: "dlg+jwt" })}.${b64(claims())}.`],
    [
      "HS256 signed with the service's public key",
      async () => {
        const { current } = await keyRing();
        const input = `${b64({ alg: "HS256", typ: "dlg+jwt", kid: current.kid })}.${b64(claims())}`;
        for (const secret of [
          Buffer.from(current.publicJwk.x as string, "base64url"),
          Buffer.from(JSON.stringify(current.publicJwk)),
        ]) {
          void secret;
        }
        const sig = createHmac("sha256", Buffer.from(current.publicJwk.x as string, "base64url"))
          .update(input)
          .digest("base64url");
        return `${input}.${sig}`;
      },
    ],
    ["a wrong audience", () => signWithServiceKey(claims({ aud: "someone-else" }))],
    ["a wrong issuer", () => signWithServiceKey(claims({ iss: "evil" }))],
    ["a wrong typ", () => signWithServiceKey(claims(), { typ: "JWT" })],
    ["an expired token", () => signWithServiceKey(claims({ iat: now() - 7200, exp: now() - 3600 }))],
    [
      "a tampered payload",
      async () => {
        const [h, , s] = t.root.token.split(".");
        return `${h}.${b64(claims({ cap: ["svc_api:*"], sub: "did:key:zattacker" }))}.${s}`;
      },
    ],
    [
      "an unknown kid",
      async () => {
        const { privateKey } = generateKeyPairSync("ed25519");
        return new SignJWT(claims())
          .setProtectedHeader({ alg: "EdDSA", typ: "dlg+jwt", kid: "not-ours" })
          .sign(privateKey);
      },
    ],
    [
      "a valid signature from a key that is not the service's (kid of the service)",
      async () => {
        const { privateKey } = generateKeyPairSync("ed25519");
        const { current } = await keyRing();
        return new SignJWT(claims())
          .setProtectedHeader({ alg: "EdDSA", typ: "dlg+jwt", kid: current.kid })
          .sign(privateKey);
      },
    ],
    ["a delegation that does not exist", () => signWithServiceKey(claims({ jti: "dlg_doesnotexist" }))],
    ["garbage", async () => "not.a.jwt"],
  ];
  for (const [name, make] of forged) {
    it(`refuses ${name} with 401 and records the denial`, async () => {
      const before = await provenanceCount();
      const res = await call(t.server.url, "GET", "/v1/passports", { token: await make() });
      expectProblem(res, 401);
      expect(await provenanceCount()).toBe(before + 1);
      expect(await lastProvenance()).toMatchObject({ decision: "denied", status: 401 });
    });
  }

  it("refuses a revoked token at once", async () => {
    const key = await apiKey();
    expect((await call(t.server.url, "GET", "/v1/passports", { token: key.token })).status).toBe(200);
    const revoked = await call(t.server.url, "POST", `/v1/delegations/${key.delegationId}/revoke`, {
      token: t.root.token,
      body: { reason: "test" },
    });
    expect(revoked.status).toBe(201);
    const res = await call(t.server.url, "GET", "/v1/passports", { token: key.token });
    expectProblem(res, 401);
    expect(res.body.detail).toMatch(/revoked/);
  });

  it("refuses a non-Bearer Authorization header", async () => {
    expectProblem(
      await call(t.server.url, "GET", "/v1/passports", {
        headers: { Authorization: `Basic ${Buffer.from("a:b").toString("base64")}` },
      }),
      401,
    );
  });
});

describe("authorization", () => {
  it("403 names the missing capability, and the denial is recorded", async () => {
    const reader = await apiKey(["svc_api:passports:read"]);
    const res = await call(t.server.url, "POST", "/v1/passports", {
      token: reader.token,
      body: { type: "agent", name: "x", public_key: ed25519Jwk() },
    });
    expectProblem(res, 403);
    expect(res.body.detail).toContain("svc_api:passports:write");
    expect(res.body.missing_capability).toBe("svc_api:passports:write");
    expect(res.body.remediation).toHaveLength(1);
    expect(await lastProvenance()).toMatchObject({
      decision: "denied",
      status: 403,
      capability: "svc_api:passports:write",
      delegationId: reader.delegationId,
    });
  });

  it("family capabilities cover their members", async () => {
    const family = await apiKey(["svc_api:passports:*"]);
    expect(
      (
        await call(t.server.url, "POST", "/v1/passports", {
          token: family.token,
          body: { type: "agent", name: "x", public_key: ed25519Jwk() },
        })
      ).status,
    ).toBe(201);
    expect((await call(t.server.url, "GET", "/v1/delegations", { token: family.token })).status).toBe(403);
  });
});

describe("bad input", () => {
  const post = (body: unknown, headers?: Record<string, string>) =>
    call(t.server.url, "POST", "/v1/passports", { token: t.root.token, body, headers });

  it("malformed JSON is a 400, not a 500", async () => {
    const res = await call(t.server.url, "POST", "/v1/passports", {
      token: t.root.token,
      rawBody: '{"type": "agent",',
      headers: { "Content-Type": "application/json" },
    });
    expectProblem(res, 400);
    expect(res.body.errors[0]).toMatchObject({ field: "body", code: "MALFORMED_JSON" });
  });

  it.each([
    [
      { name: "x", public_key: "did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp" },
      "type",
      "REQUIRED_FIELD_MISSING",
    ],
    [{ type: "robot", name: "x", public_key: ed25519Jwk() }, "type", "INVALID_ENUM"],
    [{ type: "agent", name: 42, public_key: ed25519Jwk() }, "name", "INVALID_TYPE"],
    [{ type: "agent", name: "", public_key: ed25519Jwk() }, "name", "OUT_OF_RANGE"],
    [{ type: "agent", name: "x", public_key: ed25519Jwk(), colour: "red" }, "colour", "UNKNOWN_FIELD"],
  ])("field errors: %j → %s %s", async (body, field, code) => {
    const res = await post(body);
    expectProblem(res, 400);
    expect(res.body.title).toBe("Validation failed");
    expect(res.body.errors).toContainEqual(expect.objectContaining({ field, code, message: expect.any(String) }));
  });

  it("a body that is JSON but not an object is a 400", async () => {
    for (const body of [[], "text", 12, null]) expectProblem(await post(body), 400);
  });

  it("out-of-range numbers are 400 OUT_OF_RANGE", async () => {
    const res = await call(t.server.url, "POST", "/v1/sessions/exchange", {
      token: t.root.token,
      body: { duration_seconds: 2_592_001 },
    });
    expectProblem(res, 400);
    expect(res.body.errors[0]).toMatchObject({ field: "duration_seconds", code: "OUT_OF_RANGE" });
    expectProblem(await call(t.server.url, "GET", "/v1/passports?limit=101", { token: t.root.token }), 400);
    expectProblem(await call(t.server.url, "GET", "/v1/passports?limit=0", { token: t.root.token }), 400);
    expectProblem(await call(t.server.url, "GET", "/v1/passports?limit=abc", { token: t.root.token }), 400);
  });

  it("a bad cursor is 400 INVALID_CURSOR: garbage, tampered, or another list's", async () => {
    for (let i = 0; i < 3; i++) await post({ type: "agent", name: `p${i}`, public_key: ed25519Jwk() });
    const first = await call(t.server.url, "GET", "/v1/passports?limit=1", { token: t.root.token });
    const cursor: string = first.body.pagination.next_cursor;
    expect(cursor).toBeTruthy();
    const [payload, mac] = cursor.split(".");
    const tampered = `${Buffer.from(JSON.stringify(["2000-01-01T00:00:00.000Z", "did:key:z"])).toString("base64url")}.${mac}`;
    for (const bad of ["garbage", tampered, `${payload}.AAAA`, `${payload}`]) {
      const res = await call(t.server.url, "GET", `/v1/passports?cursor=${encodeURIComponent(bad)}`, {
        token: t.root.token,
      });
      expectProblem(res, 400);
      expect(res.body.errors[0]).toMatchObject({ field: "cursor", code: "INVALID_CURSOR" });
    }
    const other = await call(t.server.url, "GET", `/v1/delegations?cursor=${encodeURIComponent(cursor)}`, {
      token: t.root.token,
    });
    expect(other.body.errors[0]).toMatchObject({ field: "cursor", code: "INVALID_CURSOR" });
    expect(await lastProvenance()).toMatchObject({ decision: "denied", status: 400 });
  });

  it("an oversize body is 413, declared or streamed", async () => {
    const big = JSON.stringify({
      type: "agent",
      name: "x",
      public_key: ed25519Jwk(),
      description: "y".repeat(1_100_000),
    });
    expectProblem(
      await call(t.server.url, "POST", "/v1/passports", {
        token: t.root.token,
        rawBody: big,
        headers: { "Content-Type": "application/json" },
      }),
      413,
    );
    // Chunked: no Content-Length to trust, the gate counts while reading.
    const stream = new ReadableStream({
      start(c) {
        for (let i = 0; i < 20; i++) c.enqueue(new TextEncoder().encode("x".repeat(100_000)));
        c.close();
      },
    });
    const res = await fetch(`${t.server.url}/v1/passports`, {
      method: "POST",
      headers: { Authorization: `Bearer ${t.root.token}`, "Content-Type": "application/json" },
      body: stream,
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(await lastProvenance()).toMatchObject({ decision: "denied", status: 413 });
  });

  it("a body that is not JSON is 415", async () => {
    const res = await call(t.server.url, "POST", "/v1/passports", {
      token: t.root.token,
      rawBody: "type=agent",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
    });
    expectProblem(res, 415);
  });

  it("a missing body where one is required is 400", async () => {
    const res = await call(t.server.url, "POST", "/v1/passports", { token: t.root.token });
    expectProblem(res, 400);
    expect(res.body.errors[0]).toMatchObject({ field: "body", code: "REQUIRED_FIELD_MISSING" });
  });

  it("nothing a caller sends produces a 500", async () => {
    const bodies = [
      {},
      { type: null },
      { type: "agent", name: "x", public_key: {} },
      { type: "agent", name: "x", public_key: { kty: "OKP", crv: "Ed25519", x: "!!" } },
      { type: "agent", name: "x", public_key: "did:key:zzzz" },
      { a: { b: { c: [1, 2, { d: "e" }] } } },
      "💥",
      { type: "agent", name: "\u0000", public_key: "z" },
    ];
    const posts = [
      "/v1/passports",
      "/v1/sessions/exchange",
      "/v1/delegation-tokens",
      "/v1/capabilities/match",
      "/v1/cp/orgs",
      "/v1/delegations/dlg_x/revoke",
    ];
    for (const path of posts)
      for (const body of bodies)
        expect(
          (await call(t.server.url, "POST", path, { token: t.root.token, body })).status,
          `${path} ${JSON.stringify(body)}`,
        ).toBeLessThan(500);
    for (const path of [
      "/v1/passports/did:key:nope",
      "/v1/passports/%E2%82%AC",
      "/v1/delegations/%00",
      "/v1/cp/orgs/x",
      "/v1/delegations?status=weird",
      "/v1/passports?type=robot",
    ]) {
      expect((await call(t.server.url, "GET", path, { token: t.root.token })).status, path).toBeLessThan(500);
    }
  });
});

describe("rate limiting", () => {
  it("answers 429 with Retry-After and X-RateLimit headers past the limit, and records it", async () => {
    process.env.SVC_RATE_LIMIT_PER_MINUTE = "3";
    resetConfig();
    try {
      const key = await apiKey();
      const results = [];
      for (let i = 0; i < 4; i++)
        results.push(await call(t.server.url, "GET", "/v1/revocations", { token: key.token }));
      expect(results.slice(0, 3).map((r) => r.status)).toEqual([200, 200, 200]);
      expect(results.map((r) => r.headers.get("x-ratelimit-remaining"))).toEqual(["2", "1", "0", "0"]);
      expectProblem(results[3]!, 429);
      expect(Number(results[3]!.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(results[3]!.body.remediation).toHaveLength(1);
      expect(await lastProvenance()).toMatchObject({ decision: "denied", status: 429 });
    } finally {
      delete process.env.SVC_RATE_LIMIT_PER_MINUTE;
      resetConfig();
    }
  });
});

describe("idempotency", () => {
  it("a repeated POST with the same key and body returns the first response; another body is 422", async () => {
    const body = { type: "agent", name: "idem", public_key: ed25519Jwk() };
    const headers = { "Idempotency-Key": `k-${Date.now()}` };
    const first = await call(t.server.url, "POST", "/v1/passports", { token: t.root.token, body, headers });
    const again = await call(t.server.url, "POST", "/v1/passports", { token: t.root.token, body, headers });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    const other = await call(t.server.url, "POST", "/v1/passports", {
      token: t.root.token,
      body: { ...body, name: "other" },
      headers,
    });
    expectProblem(other, 422);
  });
});

describe("provenance", () => {
  it("exactly one record per call, allowed and denied, with a dense sequence", async () => {
    // The token-less call is the first refusal of its minute: it has a record of its own.
    inFreshMinute();
    onTestFinished(() => void vi.useRealTimers());
    const before = await provenanceCount();
    await call(t.server.url, "GET", "/v1/passports", { token: t.root.token });
    await call(t.server.url, "POST", "/v1/passports", {
      token: t.root.token,
      body: { type: "agent", name: "p", public_key: ed25519Jwk() },
    });
    await call(t.server.url, "GET", "/v1/passports");
    await call(t.server.url, "GET", "/v1/passports/did:key:nothing", { token: t.root.token });
    await Promise.all(
      Array.from({ length: 20 }, () => call(t.server.url, "GET", "/v1/revocations", { token: t.root.token })),
    );
    expect(await provenanceCount()).toBe(before + 24);
    const last = await lastProvenance();
    expect(Number(last!.seq)).toBe(before + 23);
  });

  it("a failed write leaves nothing but its record", async () => {
    const jwk = ed25519Jwk();
    expect(
      (
        await call(t.server.url, "POST", "/v1/passports", {
          token: t.root.token,
          body: { type: "agent", name: "one", public_key: jwk },
        })
      ).status,
    ).toBe(201);
    const dup = await call(t.server.url, "POST", "/v1/passports", {
      token: t.root.token,
      body: { type: "agent", name: "two", public_key: jwk },
    });
    expectProblem(dup, 409);
    expect(await lastProvenance()).toMatchObject({ decision: "allowed", status: 409, operation: "POST /v1/passports" });
  });

  it("records who acted, who allowed it and what was touched", async () => {
    const res = await call(t.server.url, "POST", "/v1/passports", {
      token: t.root.token,
      body: { type: "agent", name: "who", public_key: ed25519Jwk() },
    });
    expect(await lastProvenance()).toMatchObject({
      orgDid: t.root.orgDid,
      actorDid: t.root.orgDid,
      grantorDid: t.root.orgDid,
      delegationId: t.root.delegationId,
      capability: "svc_api:passports:write",
      resourceType: "passport",
      resourceId: res.body.did,
      decision: "allowed",
      status: 201,
    });
  });
});
