import { readdirSync } from "node:fs";
import { join } from "node:path";
import { compileErrors, validate } from "@readme/openapi-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { operations } from "@/server/http/operations";
import { resolveV1 } from "@/server/http/router";
import { apiKey, call, startTestServer, type TestServer } from "./harness";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

describe("OpenAPI document", () => {
  it("is a valid OpenAPI 3.0.3 document, version 1.0.0, served without auth", async () => {
    const res = await call(server.url, "GET", "/v1/openapi.json");
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe("3.0.3");
    expect(res.body.info.version).toBe("1.0.0");
    const result = await validate(structuredClone(res.body));
    expect(result.valid, result.valid ? "" : compileErrors(result)).toBe(true);
  });

  it("covers every governed operation with its capability, schemas and problem responses", async () => {
    const doc = (await call(server.url, "GET", "/v1/openapi.json")).body;
    for (const op of operations) {
      const entry = doc.paths[op.path]?.[op.method.toLowerCase()];
      expect(entry, `${op.method} ${op.path}`).toBeDefined();
      expect(entry.operationId).toBe(op.id);
      expect(entry["x-capability"]).toBe(op.capability);
      expect(entry.responses[String(op.successStatus)]).toBeDefined();
      expect(entry.responses["401"].content["application/problem+json"]).toBeDefined();
    }
    expect(doc.components.schemas.SessionExchangeRequest.properties.duration_seconds).toMatchObject({ minimum: 1, maximum: 2592000 });
    expect(doc.components.schemas.Passport.required).toEqual(expect.arrayContaining(["did", "type", "org_did"]));
  });

  it("one routing table serves exactly the operations the document describes, with no per-path route file", async () => {
    const files = (readdirSync(join(process.cwd(), "app/v1"), { recursive: true }) as string[]).filter((f) => f.endsWith("route.ts"));
    expect(files).toEqual([join("[[...path]]", "route.ts")]);
    for (const op of operations) {
      const path = op.path.replace(/\{[^}]+\}/g, "x");
      const found = resolveV1(op.method, path);
      expect(found.kind, `${op.method} ${op.path}`).toBe("route");
      if (found.kind !== "route") continue;
      expect("op" in found.route.target && found.route.target.op, `${op.method} ${op.path}`).toBe(op);
      expect(Object.keys(found.params)).toEqual([...op.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]));
    }
    const doc = (await call(server.url, "GET", "/v1/openapi.json")).body;
    const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, methods]) => Object.keys(methods).filter((m) => m !== "parameters").map((m) => `${m.toUpperCase()} ${path}`));
    const served = operations.map((o) => `${o.method} ${o.path}`);
    for (const entry of documented) if (!["GET /v1/health", "GET /v1/openapi.json"].includes(entry)) expect(served, entry).toContain(entry);
  });

  it("the service's public keys are published as a JWKS", async () => {
    const res = await call(server.url, "GET", "/.well-known/jwks.json");
    expect(res.status).toBe(200);
    expect(res.body.keys[0]).toMatchObject({ kty: "OKP", crv: "Ed25519", alg: "EdDSA", kid: expect.any(String) });
    expect(res.body.keys[0].d).toBeUndefined();
    const { token } = await apiKey();
    const kid = JSON.parse(Buffer.from(token.split(".")[0]!, "base64url").toString()).kid;
    expect(res.body.keys.map((k: any) => k.kid)).toContain(kid);
  });

  it("health reports the engine", async () => {
    const res = await call(server.url, "GET", "/v1/health");
    expect(res.body).toEqual({ status: "ok", version: "1.0.0", database: process.env.SVC_TEST_ENGINE === "postgres" ? "postgresql" : "sqlite" });
  });
});
