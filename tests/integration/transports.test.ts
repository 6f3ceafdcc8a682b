import { describe, expect, it } from "vitest";
import * as jwksRoute from "@/app/.well-known/jwks.json/route";
import * as v1Route from "@/app/v1/[[...path]]/route";
import { CLIENT_ADDRESS_HEADER } from "@/server/http/gate";
import { areaOperations as operations } from "@/server/areas";
import { call, ed25519Jwk, useTestServer } from "./harness";

/**
 * One routing table, two transports (issue 8.2): svc's node:http fast path (what the test server
 * mounts) and Next.js's catch-all route, called the way Next.js calls it. Every operation, and
 * the answers around them (404, 405, documents, 401), must look the same through both.
 */
const t = useTestServer();

type Handler = (request: Request) => Promise<Response>;

interface Sample {
  method: string;
  path: string;
  token?: string;
  body?: string;
}

interface Shape {
  status: number;
  contentType: string | null;
  rateLimitLimit: string | null;
  rateLimitRemaining: boolean;
  rateLimitReset: boolean;
  requestId: boolean;
  allow: string | null;
  keys: string[] | null;
}

function shapeOf(status: number, headers: Headers, text: string): Shape {
  const contentType = headers.get("content-type");
  let keys: string[] | null = null;
  if (contentType && /json/.test(contentType) && !/ndjson/.test(contentType) && text) {
    const parsed = JSON.parse(text);
    keys = parsed && typeof parsed === "object" && !Array.isArray(parsed) ? Object.keys(parsed).sort() : null;
  }
  return {
    status,
    contentType,
    rateLimitLimit: headers.get("x-ratelimit-limit"),
    rateLimitRemaining: headers.has("x-ratelimit-remaining"),
    rateLimitReset: headers.has("x-ratelimit-reset"),
    requestId: headers.has("x-request-id"),
    allow: headers.get("allow"),
    keys,
  };
}

function headersOf(s: Sample): Record<string, string> {
  return {
    ...(s.token ? { Authorization: `Bearer ${s.token}` } : {}),
    ...(s.body !== undefined ? { "Content-Type": "application/json" } : {}),
  };
}

async function viaFastPath(s: Sample): Promise<Shape> {
  const res = await fetch(t.server.url + s.path, { method: s.method, headers: headersOf(s), body: s.body });
  return shapeOf(res.status, res.headers, await res.text());
}

async function viaNext(s: Sample): Promise<Shape> {
  const module = (s.path.startsWith("/.well-known/") ? jwksRoute : v1Route) as unknown as Record<string, Handler>;
  const handler = module[s.method];
  expect(handler, `Next route exports ${s.method}`).toBeTypeOf("function");
  // server/main.ts sets the client's address from the socket before Next.js sees the request.
  const request = new Request(`http://localhost:3000${s.path}`, {
    method: s.method,
    headers: { ...headersOf(s), [CLIENT_ADDRESS_HEADER]: "127.0.0.1" },
    body: s.body,
  });
  const res = await handler!(request);
  return shapeOf(res.status, res.headers, await res.text());
}

async function expectSameAnswer(s: Sample): Promise<Shape> {
  const fast = await viaFastPath(s);
  const next = await viaNext(s);
  expect(next, `${s.method} ${s.path}`).toEqual(fast);
  expect(fast.status, `${s.method} ${s.path}`).toBeLessThan(500);
  expect(fast.requestId, `${s.method} ${s.path}: X-Request-Id`).toBe(true);
  expect(fast.rateLimitLimit, `${s.method} ${s.path}: X-RateLimit-Limit`).toMatch(/^\d+$/);
  return fast;
}

describe("the fast path and Next.js's catch-all answer alike", () => {
  it("one request of every declared operation", async () => {
    const records = await call(t.server.url, "GET", "/v1/provenance?limit=1", { token: t.root.token });
    const recordId: string = records.body.data[0].id;
    const agent = await call(t.server.url, "POST", "/v1/passports", {
      token: t.root.token,
      body: { type: "agent", name: "both transports", public_key: ed25519Jwk() },
    });
    const prompt = await call(t.server.url, "POST", "/v1/prompts/both-transports/versions", {
      token: t.root.token,
      body: {
        version: "1.0.0",
        content: "Hello {{name}}",
        meta: { id: "both-transports", namespace: "tests", scope: "organization", description: "" },
      },
    });
    expect(prompt.status, JSON.stringify(prompt.body)).toBe(201);
    const params: Record<string, (path: string, method: string) => string> = {
      did: () => agent.body.did,
      org_did: () => t.root.orgDid,
      delivery_id: () => "whd_doesnotexist",
      key: () => "both-transports",
      version: () => "1.0.0",
      // Revoking the root key would end the test: a revocation goes to an id that does not exist.
      id: (path, method) =>
        path.startsWith("/v1/provenance") ? recordId : method === "POST" ? "dlg_doesnotexist" : t.root.delegationId,
    };
    const statuses: Record<string, number> = {};
    for (const op of operations) {
      const path = op.path.replace(/\{([^}]+)\}/g, (_m, name: string) =>
        encodeURIComponent(params[name]!(op.path, op.method)),
      );
      const shape = await expectSameAnswer({
        method: op.method,
        path,
        token: t.root.token,
        body: op.body ? "{}" : undefined,
      });
      statuses[`${op.method} ${op.path}`] = shape.status;
    }
    // The samples reach the operations themselves, not only the gate's refusals: an answer the gate
    // gives before any handler runs (401, 403, and 400 for bodies left empty here) is not counted.
    const reached = Object.values(statuses).filter((s) => ![400, 401, 403, 413, 415, 429].includes(s));
    expect(reached.length, JSON.stringify(statuses)).toBeGreaterThan(operations.length / 2);
    expect(Object.values(statuses).filter((s) => s < 300).length, JSON.stringify(statuses)).toBeGreaterThan(
      operations.length / 3,
    );
  });

  it("refusals, 404s, 405s and the public documents", async () => {
    const samples: Sample[] = [
      { method: "GET", path: "/v1/passports" },
      { method: "GET", path: "/v1/passports", token: "not.a.jwt" },
      { method: "POST", path: "/v1/passports", token: t.root.token, body: '{"x":"\\ud800"}' },
      { method: "POST", path: "/v1/passports", token: t.root.token, body: '{"type":' },
      { method: "GET", path: "/v1/nope", token: t.root.token },
      { method: "GET", path: "/v1/passports/", token: t.root.token },
      { method: "GET", path: "/v1/passports/%2e%2e", token: t.root.token },
      { method: "DELETE", path: "/v1/passports", token: t.root.token },
      { method: "PUT", path: "/v1/cp/orgs/x", token: t.root.token, body: "{}" },
      { method: "OPTIONS", path: "/v1/passports" },
      { method: "HEAD", path: "/v1/health" },
      { method: "GET", path: "/v1/health" },
      { method: "GET", path: "/v1/openapi.json" },
      { method: "GET", path: "/.well-known/jwks.json" },
      { method: "POST", path: "/.well-known/jwks.json" },
    ];
    for (const s of samples) await expectSameAnswer(s);
    expect((await viaNext({ method: "GET", path: "/v1/passports/%2e%2e" })).status).toBe(404);
    expect((await viaNext({ method: "DELETE", path: "/v1/passports" })).allow).toBe("GET, HEAD, POST");
  });
});

describe("Next.js leaves /v1 paths to the table", () => {
  it("does not redirect a trailing slash (the table answers it with a problem+json 404)", async () => {
    const file = "@/next.config.js";
    const config = ((await import(/* @vite-ignore */ file)) as { default: { skipTrailingSlashRedirect?: boolean } })
      .default;
    expect(config.skipTrailingSlashRedirect).toBe(true);
  });
});
