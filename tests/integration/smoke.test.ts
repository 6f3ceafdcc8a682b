import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiKey, call, ed25519Jwk, startTestServer, type TestServer } from "./harness";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

describe("smoke", () => {
  it("registers and reads a passport", async () => {
    const { token } = await apiKey();
    const created = await call(server.url, "POST", "/v1/passports", {
      token,
      body: { type: "agent", name: "a", public_key: ed25519Jwk() },
    });
    expect(created.status).toBe(201);
    const got = await call(server.url, "GET", `/v1/passports/${created.body.did}`, { token });
    expect(got.status).toBe(200);
    expect(got.body.did).toBe(created.body.did);
  });
});
