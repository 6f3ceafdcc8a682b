import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { newId } from "@/server/ids";
import { contextFromHeaders } from "@/server/trpc/init";
import { appRouter, createCaller } from "@/server/appRouter";
import { apiKey, call, ed25519Jwk, inFreshMinute, lastProvenance, provenanceCount, useTestServer } from "./harness";

/** What an outsider sends at the edge of the API: each answer is problem+json, carries the contract's headers, and leaves a record. */
const t = useTestServer();
const raw = (method: string, path: string, body?: string, headers: Record<string, string> = {}) =>
  call(t.server.url, method, path, {
    token: t.root.token,
    rawBody: body,
    headers: { ...(body ? { "Content-Type": "application/json" } : {}), ...headers },
  });

function expectProblem(res: { status: number; headers: Headers; body: any }, status: number) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toContain("application/problem+json");
  expect(res.headers.get("x-request-id")).toBeTruthy();
  expect(res.body).toMatchObject({
    status,
    type: expect.any(String),
    title: expect.any(String),
    detail: expect.any(String),
    instance: expect.any(String),
    request_id: res.headers.get("x-request-id"),
  });
}

function expectRateLimitHeaders(res: { headers: Headers }, what: string) {
  for (const h of ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"])
    expect(res.headers.get(h), `${what}: ${h}`).toMatch(/^\d+$/);
}

describe("lone surrogates and non-finite numbers (issue 7.2)", () => {
  it("are 400 INVALID_FORMAT on every /v1 route with a body, recorded as denied, never a 500", async () => {
    const posts = [
      "/v1/passports",
      "/v1/sessions/exchange",
      "/v1/delegation-tokens",
      "/v1/capabilities/match",
      "/v1/cp/orgs",
      "/v1/delegations/dlg_x/revoke",
    ];
    for (const path of posts) {
      for (const body of ['{"x":"\\ud800"}', '{"name":"a\\udc00"}', '{"\\ud800":"key"}']) {
        const res = await raw("POST", path, body);
        expectProblem(res, 400);
        expect(res.body.errors[0], `${path} ${body}`).toMatchObject({ code: "INVALID_FORMAT" });
        expect(await lastProvenance()).toMatchObject({ status: 400, decision: "denied" });
      }
      const inf = await raw("POST", path, '{"x":1e999}');
      expectProblem(inf, 400);
      expect(inf.body.errors[0]).toMatchObject({ field: "x", code: "OUT_OF_RANGE" });
    }
    const patch = await raw("PATCH", `/v1/passports/${encodeURIComponent("did:key:z6Mk")}`, '{"name":"\\udbff"}');
    expectProblem(patch, 400);
    expect(patch.body.errors[0]).toMatchObject({ field: "name", code: "INVALID_FORMAT" });
  });

  it("a well-formed surrogate pair (an emoji) is accepted", async () => {
    const res = await call(t.server.url, "POST", "/v1/passports", {
      token: t.root.token,
      body: { type: "agent", name: "rocket \ud83d\ude80", public_key: ed25519Jwk() },
    });
    expect(res.status).toBe(201);
    expect(res.body.name).toBe("rocket 🚀");
  });

  it("through tRPC (the HTTP adapter and a caller) are BAD_REQUEST, recorded as denied", async () => {
    const res = await fetchRequestHandler({
      endpoint: "/api/trpc",
      req: new Request("http://localhost/api/trpc/identity.passports.register", {
        method: "POST",
        headers: { "Content-Type": "application/json", Authorization: `Bearer ${t.root.token}` },
        body: '{"type":"agent","name":"\\ud800","public_key":"z"}',
      }),
      router: appRouter,
      createContext: ({ req }) => contextFromHeaders(req.headers, "127.0.0.1"),
    });
    expect(res.status).toBe(400);
    expect((await res.json()).error.data.problem.errors[0]).toMatchObject({ code: "INVALID_FORMAT" });
    expect(await lastProvenance()).toMatchObject({
      operation: "TRPC identity.passports.register",
      status: 400,
      decision: "denied",
    });

    const caller = createCaller({
      authorization: `Bearer ${t.root.token}`,
      clientAddress: "127.0.0.1",
      requestId: newId("req"),
    });
    await expect(caller.identity.delegations.get({ id: "dlg_\udfff" })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    expect(await lastProvenance()).toMatchObject({ status: 400, decision: "denied" });
  });
});

describe("unknown paths and methods (issue 7.6)", () => {
  it("an unknown /v1 path is a problem+json 404 with the contract's headers, recorded as denied for the root organization", async () => {
    for (const path of [
      "/v1/nope",
      "/v1",
      "/v1/passports/",
      "/v1/passports/%2e%2e",
      "/v1/passports/%2E%2E/",
      "/v1/provenance/x/proof/extra",
    ]) {
      // Each the first unknown path of its minute: a record of its own (anonymousRefusals.ts).
      inFreshMinute();
      onTestFinished(() => void vi.useRealTimers());
      const before = await provenanceCount();
      const res = await call(t.server.url, "GET", path, { token: t.root.token });
      expectProblem(res, 404);
      expect(res.headers.get("allow"), path).toBeNull();
      expectRateLimitHeaders(res, path);
      expect(await provenanceCount(), path).toBe(before + 1);
      expect(await lastProvenance()).toMatchObject({
        decision: "denied",
        status: 404,
        orgDid: t.root.orgDid,
        actorDid: null,
        requestId: res.headers.get("x-request-id"),
      });
    }
  });

  it("a method the path does not answer is a problem+json 405 naming the methods it does, recorded as denied", async () => {
    const before = await provenanceCount();
    const res = await call(t.server.url, "DELETE", "/v1/passports", { token: t.root.token });
    expectProblem(res, 405);
    expect(res.headers.get("allow")).toBe("GET, HEAD, POST");
    expect(res.body.type).toMatch(/#method_not_allowed$/);
    expectRateLimitHeaders(res, "405");
    expect(await provenanceCount()).toBe(before + 1);
    expect(await lastProvenance()).toMatchObject({
      decision: "denied",
      status: 405,
      operation: "DELETE /v1/passports",
      orgDid: t.root.orgDid,
    });
    const put = await call(t.server.url, "PUT", "/v1/passports/did:key:z6Mk", { token: t.root.token, body: {} });
    expectProblem(put, 405);
    expect(put.headers.get("allow")).toBe("GET, HEAD, PATCH");
  });

  it("unrouted requests are rate limited per address like any refusal before authentication", async () => {
    const res = await call(t.server.url, "GET", "/v1/nope");
    const remaining = Number(res.headers.get("x-ratelimit-remaining"));
    const next = await call(t.server.url, "GET", "/v1/also-nope");
    expect(Number(next.headers.get("x-ratelimit-remaining"))).toBe(remaining - 1);
  });
});

describe("every /v1 answer carries X-Request-Id and X-RateLimit-* (issue 7.6)", () => {
  it("the public documents: health, OpenAPI, JWKS", async () => {
    for (const path of ["/v1/health", "/v1/openapi.json", "/.well-known/jwks.json"]) {
      const res = await call(t.server.url, "GET", path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get("x-request-id"), path).toBeTruthy();
      expectRateLimitHeaders(res, path);
    }
    expect(
      (await call(t.server.url, "GET", "/v1/health", { headers: { "X-Request-Id": "lb-probe-1" } })).headers.get(
        "x-request-id",
      ),
    ).toBe("lb-probe-1");
    expectProblem(await call(t.server.url, "POST", "/.well-known/jwks.json"), 405);
  });

  it("every refusal of the gate: 401, 403, 400, 413, 415, 422, 404", async () => {
    const reader = await apiKey(["svc_api:passports:read"]);
    const headers = { "Idempotency-Key": `k-${Date.now()}` };
    await call(t.server.url, "POST", "/v1/sessions/exchange", { token: t.root.token, body: {}, headers });
    const refusals: [number, Promise<{ status: number; headers: Headers; body: any }>][] = [
      [401, call(t.server.url, "GET", "/v1/passports")],
      [401, call(t.server.url, "GET", "/v1/passports", { token: "not.a.jwt" })],
      [403, call(t.server.url, "GET", "/v1/delegations", { token: reader.token })],
      [400, call(t.server.url, "GET", "/v1/passports?limit=0", { token: t.root.token })],
      [400, raw("POST", "/v1/passports", '{"x":"\\ud800"}')],
      [413, raw("POST", "/v1/passports", JSON.stringify({ x: "y".repeat(1_100_000) }))],
      [415, raw("POST", "/v1/passports", "a=b", { "Content-Type": "application/x-www-form-urlencoded" })],
      [
        422,
        call(t.server.url, "POST", "/v1/sessions/exchange", {
          token: t.root.token,
          body: { duration_seconds: 60 },
          headers,
        }),
      ],
      [404, call(t.server.url, "GET", "/v1/passports/did:key:nothing", { token: t.root.token })],
    ];
    for (const [status, pending] of refusals) {
      const res = await pending;
      expectProblem(res, status);
      expectRateLimitHeaders(res, String(status));
    }
  });
});
