import { describe, expect, it } from "vitest";
import { openApiDocument } from "@/server/openapi/document";
import { call, ed25519Jwk, useTestServer } from "./harness";
import { OpenApiResponseValidator } from "./openapiResponses";

/** The OpenAPI document tells the truth about answers; tests/integration/setup.ts checks every live one with this validator. */
const doc = openApiDocument() as {
  paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
  components: { schemas: Record<string, unknown> };
};
const validator = new OpenApiResponseValidator(doc);
const ctx = useTestServer();

function nullableEnumsWithoutNull(node: unknown, where: string, out: string[]): string[] {
  if (!node || typeof node !== "object") return out;
  const schema = node as Record<string, unknown>;
  if (schema.nullable === true && Array.isArray(schema.enum) && !schema.enum.includes(null)) out.push(where);
  for (const [key, value] of Object.entries(schema)) nullableEnumsWithoutNull(value, `${where}/${key}`, out);
  return out;
}

describe("the OpenAPI document", () => {
  it("declares the 201 a deploy with wait: true answers, with the deploy's body", () => {
    const responses = doc.paths["/v1/agents/deploy"]!.post!.responses;
    expect(Object.keys(responses)).toEqual(expect.arrayContaining(["201", "202"]));
    expect(responses["201"]).toMatchObject({
      content: { "application/json": { schema: { $ref: "#/components/schemas/AgentDeployResponse" } } },
    });
  });

  it("lists null in every nullable enum, so generic validators accept a null", () => {
    expect(nullableEnumsWithoutNull(doc, "#", [])).toEqual([]);
    const org = validator.check({
      method: "GET",
      pathname: "/v1/cp/orgs/did:key:z6Mk",
      status: 200,
      contentType: "application/json",
      body: undefined,
    });
    expect(org[0]?.message).toMatch(
      /GET \/v1\/cp\/orgs\/\{org_did\} \(getCpOrg\) answered 200: body \(root\) must be object/,
    );
  });

  it("the suite's fetch is the validating one", () => {
    expect(globalThis.fetch.name).toBe("validatingFetch");
  });

  it("a live answer passes, and the three kinds of violation name the operation, the status and the place in the body", async () => {
    await call(ctx.server.url, "POST", "/v1/passports", {
      token: ctx.root.token,
      body: { type: "agent", name: "validated", public_key: ed25519Jwk() },
    });
    const live = await call(ctx.server.url, "GET", "/v1/passports?limit=2", { token: ctx.root.token });
    expect(live.status).toBe(200);
    expect(
      validator.check({
        method: "GET",
        pathname: "/v1/passports",
        status: 200,
        contentType: "application/json",
        body: live.body,
      }),
    ).toEqual([]);

    const undeclared = validator.check({
      method: "GET",
      pathname: "/v1/passports",
      status: 418,
      contentType: "application/json",
      body: {},
    });
    expect(undeclared).toEqual([
      expect.objectContaining({
        status: 418,
        message: expect.stringMatching(
          /^GET \/v1\/passports \(listPassports\) answered 418, which the document does not declare \(declared: 200, /,
        ),
      }),
    ]);

    const wrongType = validator.check({
      method: "GET",
      pathname: "/v1/passports",
      status: 200,
      contentType: "text/html",
      body: undefined,
      bodyText: "<p>",
    });
    expect(wrongType[0]!.message).toMatch(/answered 200 as text\/html; the document declares application\/json/);

    const broken = structuredClone(live.body) as { data: Array<Record<string, unknown>> };
    broken.data[0]!.did = 42;
    const bodyViolation = validator.check({
      method: "GET",
      pathname: "/v1/passports",
      status: 200,
      contentType: "application/json",
      body: broken,
    });
    expect(bodyViolation.map((v) => v.message)).toContain(
      "GET /v1/passports (listPassports) answered 200: body /data/0/did must be string; got 42",
    );
  });

  it("knows literal paths from templated ones, and ignores paths the document does not name", () => {
    expect(validator.route("POST", "/v1/agents/deploy")?.template).toBe("/v1/agents/deploy");
    expect(validator.route("GET", "/v1/agents/agt_1/status")?.template).toBe("/v1/agents/{id}/status");
    expect(validator.route("GET", "/v1/nothing-here")).toBeUndefined();
  });
});
