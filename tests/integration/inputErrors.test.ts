import { describe, expect, it } from "vitest";
import { appRouter } from "@/server/appRouter";
import { handlerWithSession } from "@/server/trpc/handler";
import { call, ed25519Jwk, useTestServer } from "./harness";

const t = useTestServer();
const api = (method: string, path: string, body?: unknown) =>
  call(t.server.url, method, path, { token: t.root.token, body });

describe("errors show what was sent", () => {
  it("an enum error names the value received, not its type", async () => {
    const res = await api("POST", "/v1/passports", { type: "robot", name: "r", public_key: ed25519Jwk() });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([
      expect.objectContaining({
        field: "type",
        code: "INVALID_ENUM",
        expected: "agent | organization",
        received: '"robot"',
      }),
    ]);
  });

  it("a format error names the value received, cut to 100 characters", async () => {
    const res = await api("POST", "/v1/delegation-tokens", {
      delegate_did: `not-a-did-${"x".repeat(500)}`,
      capabilities: ["svc_api:passports:read"],
      duration_seconds: 60,
    });
    expect(res.status).toBe(400);
    const [error] = res.body.errors;
    expect(error).toMatchObject({
      field: "delegate_did",
      code: "INVALID_FORMAT",
      received: expect.stringMatching(/^"not-a-did-x+…$/),
    });
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
    const both = await api("POST", "/v1/capabilities/match", {
      requiredCapabilities: required,
      required_capabilities: required,
    });
    expect(both.status).toBe(400);
    expect(both.body.errors).toEqual([
      expect.objectContaining({ field: "required_capabilities", code: "CONFLICTING_FIELDS" }),
    ]);
    const neither = await api("POST", "/v1/capabilities/match", { agent_ids: [] });
    expect(neither.status).toBe(400);
    expect(neither.body.errors).toEqual([
      expect.objectContaining({ field: "requiredCapabilities", code: "REQUIRED_FIELD_MISSING" }),
    ]);
  });

  it("documents both spellings on input, and only one on output", async () => {
    const doc = (await call(t.server.url, "GET", "/v1/openapi.json")).body;
    expect(Object.keys(doc.components.schemas.CapabilityMatchRequest.properties)).toEqual(
      expect.arrayContaining(["requiredCapabilities", "required_capabilities"]),
    );
    expect(Object.keys(doc.components.schemas.CapabilityMatchResponse.properties.data.properties)).not.toContain(
      "requiredCapabilities",
    );
  });
});

describe("input the gate lets through no more (issue 14, item 19)", () => {
  const raw = (method: string, path: string, body: string | Uint8Array<ArrayBuffer>, contentType?: string) =>
    fetch(t.server.url + path, {
      method,
      headers: { Authorization: `Bearer ${t.root.token}`, ...(contentType ? { "Content-Type": contentType } : {}) },
      body,
    });

  it("invalid UTF-8 in a JSON body is a 400, not stored as U+FFFD", async () => {
    const bytes = Buffer.concat([
      Buffer.from('{"type":"utf8.check","payload":{"s":"a'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('b"}}'),
    ]);
    const res = await raw(
      "POST",
      "/v1/events/ingest",
      new Uint8Array(bytes) as Uint8Array<ArrayBuffer>,
      "application/json",
    );
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body.errors[0]).toMatchObject({
      field: "body",
      code: "MALFORMED_JSON",
      message: expect.stringContaining("UTF-8"),
    });
    // A lone continuation byte and an overlong encoding too.
    for (const bad of [[0x80], [0xc0, 0xaf]]) {
      const b = Buffer.concat([
        Buffer.from('{"type":"utf8.check","payload":{"s":"'),
        Buffer.from(bad),
        Buffer.from('"}}'),
      ]);
      expect(
        (await raw("POST", "/v1/events/ingest", new Uint8Array(b) as Uint8Array<ArrayBuffer>, "application/json"))
          .status,
      ).toBe(400);
    }
  });

  it("a charset other than UTF-8 is 415; utf-8 in any spelling is accepted", async () => {
    const body = JSON.stringify({ type: "charset.check" });
    for (const type of [
      "application/json; charset=iso-8859-1",
      "application/json;charset=utf-16",
      'application/json; charset="latin1"',
    ]) {
      const res = await raw("POST", "/v1/events/ingest", body, type);
      expect(res.status, type).toBe(415);
      expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    }
    for (const type of [
      "application/json; charset=utf-8",
      "application/json;charset=UTF-8",
      'application/json; charset="utf8"',
      "application/json",
    ]) {
      expect((await raw("POST", "/v1/events/ingest", body, type)).status, type).toBe(202);
    }
  });

  it("POST routes that take no body accept {} and refuse anything more, naming the field", async () => {
    const hook = await api("POST", "/v1/webhooks", {
      target_url: "https://hooks.example.com/in",
      event_types: ["invoice.paid"],
    });
    for (const path of [
      `/v1/webhooks/${hook.body.id}/rotate-secret`,
      "/v1/executions/callback-secret/rotate",
      "/v1/agents/agt_missing/deactivate",
    ]) {
      for (const [body, type, field] of [
        ["hello", "text/plain", "body"],
        ["[]", "application/json", "body"],
        ['{"secret":"mine"}', undefined, "secret"],
        ['{"secret":"mine"}', "application/json", "secret"],
      ] as const) {
        const res = await raw("POST", path, body, type);
        expect(res.status, `${path} ${type}`).toBe(400);
        expect((await res.json()).errors[0]).toMatchObject({ field, code: "UNKNOWN_FIELD" });
      }
    }
    // Without a body, or with {} (what many clients send when given none), they work.
    expect((await raw("POST", `/v1/webhooks/${hook.body.id}/rotate-secret`, "")).status).toBe(200);
    expect((await raw("POST", `/v1/webhooks/${hook.body.id}/rotate-secret`, "{}", "application/json")).status).toBe(
      200,
    );
  });

  it("a __proto__ key is refused with a clear 400, never silently dropped", async () => {
    const text = '{"type":"proto.check","payload":{"a":1,"__proto__":{"polluted":true}}}';
    const res = await raw("POST", "/v1/events/ingest", text, "application/json");
    expect(res.status).toBe(400);
    expect((await res.json()).errors[0]).toMatchObject({
      field: "payload.__proto__",
      code: "UNKNOWN_FIELD",
      message: expect.stringContaining("__proto__"),
    });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("the tRPC endpoint's 415 is labelled application/json", async () => {
    const handler = handlerWithSession(appRouter, async () => null);
    const res = await handler(
      new Request("http://127.0.0.1/api/trpc/events.emit", {
        method: "POST",
        headers: { Authorization: `Bearer ${t.root.token}`, "Content-Type": "text/plain" },
        body: "hello",
      }),
    );
    expect(res.status).toBe(415);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect((await res.json()).error).toBeTruthy();
  });
});
