import SwaggerParser from "@apidevtools/swagger-parser";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { compileErrors, validate } from "@readme/openapi-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isErrorCode } from "@/server/errorCatalogue";
import { areaOperations as operations } from "@/server/areas";
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
    expect(doc.components.schemas.SessionExchangeRequest.properties.duration_seconds).toMatchObject({
      minimum: 1,
      maximum: 2592000,
    });
    expect(doc.components.schemas.Passport.required).toEqual(expect.arrayContaining(["did", "type", "org_did"]));
  });

  it("one routing table serves exactly the operations the document describes, with no per-path route file", async () => {
    const files = (readdirSync(join(process.cwd(), "app/v1"), { recursive: true }) as string[]).filter((f) =>
      f.endsWith("route.ts"),
    );
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
    const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, methods]) =>
      Object.keys(methods)
        .filter((m) => m !== "parameters")
        .map((m) => `${m.toUpperCase()} ${path}`),
    );
    const served = operations.map((o) => `${o.method} ${o.path}`);
    for (const entry of documented)
      if (!["GET /v1/health", "GET /v1/openapi.json"].includes(entry)) expect(served, entry).toContain(entry);
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
    expect(res.body).toEqual({
      status: "ok",
      version: "1.0.0",
      database: process.env.SVC_TEST_ENGINE === "postgres" ? "postgresql" : "sqlite",
    });
  });
});

describe("OpenAPI document for every tool", () => {
  const doc = async () => (await call(server.url, "GET", "/v1/openapi.json")).body;
  const resolve = (d: any, schema: any) =>
    schema?.$ref ? d.components.schemas[schema.$ref.replace("#/components/schemas/", "")] : schema;

  it("is accepted by a second, independent validator (swagger-parser), with only OpenAPI 3.0 schema keywords", async () => {
    const d = await doc();
    await expect(SwaggerParser.validate(structuredClone(d))).resolves.toBeDefined();
    // Keywords only: a property may be named like one (the simulation's `examples`), and an example's values are data.
    const keywords = new Set<string>();
    const walk = (v: unknown, names = false): void => {
      if (Array.isArray(v)) return v.forEach((x) => walk(x));
      if (!v || typeof v !== "object") return;
      for (const [k, x] of Object.entries(v)) {
        if (!names) keywords.add(k);
        if (names || k !== "example") walk(x, !names && k === "properties");
      }
    };
    walk(d);
    for (const keyword of ["$id", "$schema", "examples", "const", "propertyNames", "$defs"])
      expect(keywords.has(keyword), keyword).toBe(false);
  });

  it("gives every request body and success response a realistic example that its own zod schema accepts", async () => {
    const d = await doc();
    for (const op of operations) {
      const entry = d.paths[op.path][op.method.toLowerCase()];
      const label = `${op.method} ${op.path}`;
      if (op.body) {
        const example = resolve(d, entry.requestBody.content["application/json"].schema).example;
        expect(example, `${label} request`).toBeDefined();
        expect(op.body.safeParse(example).error, `${label} request example`).toBeUndefined();
      }
      const success = entry.responses[String(op.successStatus)];
      // A redirect (the OAuth callback's 303) has a Location header and no body to exemplify.
      if (op.successStatus >= 300 && op.successStatus < 400) {
        expect(success.content, label).toBeUndefined();
        expect(success.headers.Location, label).toBeDefined();
        continue;
      }
      const media = Object.values(success.content)[0] as { schema: unknown };
      const example = resolve(d, media.schema).example;
      expect(example, `${label} response`).toBeDefined();
      expect(op.response.safeParse(example).error, `${label} response example`).toBeUndefined();
    }
    for (const path of ["/v1/health", "/v1/openapi.json"])
      expect(d.paths[path].get.responses["200"].content["application/json"].schema.example, path).toBeDefined();
    const passport = d.components.schemas.Passport.example;
    expect(passport.did).toMatch(/^did:key:z6Mk[1-9A-HJ-NP-Za-km-z]{44}$/);
    expect(passport.public_key_jwk).toMatchObject({
      kty: "OKP",
      crv: "Ed25519",
      x: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    expect(d.components.schemas.Delegation.example.id).toMatch(/^dlg_[0-9a-hjkmnp-tv-z]{26}$/);
    expect(d.components.schemas.Delegation.example.capabilities.length).toBeGreaterThan(0);
  });

  it("documents each operation's problems from the error catalogue, a GET's 409 included", async () => {
    const d = await doc();
    for (const op of operations) {
      const entry = d.paths[op.path][op.method.toLowerCase()];
      for (const [status, response] of Object.entries<any>(entry.responses)) {
        if (Number(status) < 400) continue;
        expect(response.content["application/problem+json"].schema, `${op.id} ${status}`).toEqual({
          $ref: "#/components/schemas/ProblemDetails",
        });
        const code = /#([a-z_]+)$/.exec(response.content["application/problem+json"].example.type)![1]!;
        expect(isErrorCode(code), `${op.id} ${status}: ${code}`).toBe(true);
      }
    }
    const checkpoint = d.paths["/v1/provenance/checkpoint"].get.responses["409"];
    expect(checkpoint.description).toContain("no_checkpoint_yet");
    const proof = d.paths["/v1/provenance/{id}/proof"].get.responses["409"];
    expect(proof.description).toContain("no_checkpoint_yet");
    expect(proof.description).toContain("not_yet_checkpointed");
    expect(d.paths["/v1/sessions/exchange"].post.responses["403"].description).toContain("tier_too_low");
  });
});
