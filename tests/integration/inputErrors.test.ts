import { describe, expect, it } from "vitest";
import { call, ed25519Jwk, useTestServer } from "./harness";

const t = useTestServer();
const api = (method: string, path: string, body?: unknown) => call(t.server.url, method, path, { token: t.root.token, body });

describe("errors show what was sent", () => {
  it("an enum error names the value received, not its type", async () => {
    const res = await api("POST", "/v1/passports", { type: "robot", name: "r", public_key: ed25519Jwk() });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ field: "type", code: "INVALID_ENUM", expected: "agent | organization", received: '"robot"' })]);
  });

  it("a format error names the value received, cut to 100 characters", async () => {
    const res = await api("POST", "/v1/delegation-tokens", { delegate_did: `not-a-did-${"x".repeat(500)}`, capabilities: ["svc_api:passports:read"], duration_seconds: 60 });
    expect(res.status).toBe(400);
    const [error] = res.body.errors;
    expect(error).toMatchObject({ field: "delegate_did", code: "INVALID_FORMAT", received: expect.stringMatching(/^"not-a-did-x+…$/) });
    expect(Array.from(error.received as string)).toHaveLength(100);
  });
});

describe("capability match spellings", () => {
  const required = ["svc_api:passports:read"];

  it("accepts required_capabilities, the answer's spelling, as well as requiredCapabilities", async () => {
    const spec = await api("POST", "/v1/capabilities/match", { requiredCapabilities: required });
    const alias = await api("POST", "/v1/capabilities/match", { required_capabilities: required });
    expect(spec.status).toBe(200);
    expect(alias.status).toBe(200);
    expect(alias.body).toEqual(spec.body);
    expect(alias.body.data.required_capabilities).toEqual(required);
  });

  it("refuses both spellings at once, and neither", async () => {
    const both = await api("POST", "/v1/capabilities/match", { requiredCapabilities: required, required_capabilities: required });
    expect(both.status).toBe(400);
    expect(both.body.errors).toEqual([expect.objectContaining({ field: "required_capabilities", code: "CONFLICTING_FIELDS" })]);
    const neither = await api("POST", "/v1/capabilities/match", { agent_ids: [] });
    expect(neither.status).toBe(400);
    expect(neither.body.errors).toEqual([expect.objectContaining({ field: "requiredCapabilities", code: "REQUIRED_FIELD_MISSING" })]);
  });

  it("documents both spellings on input, and only one on output", async () => {
    const doc = (await call(t.server.url, "GET", "/v1/openapi.json")).body;
    expect(Object.keys(doc.components.schemas.CapabilityMatchRequest.properties)).toEqual(expect.arrayContaining(["requiredCapabilities", "required_capabilities"]));
    expect(Object.keys(doc.components.schemas.CapabilityMatchResponse.properties.data.properties)).not.toContain("requiredCapabilities");
  });
});
