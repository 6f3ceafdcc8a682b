import { afterAll, describe, expect, it } from "vitest";
import { createCaller } from "@/server/appRouter";
import { newId } from "@/server/ids";
import { apiKey, ed25519Jwk, lastProvenance, provenanceCount } from "./harness";
import { bundleOf, manifestOf } from "./agentsHelpers";

const caller = (token?: string) =>
  createCaller({
    authorization: token ? `Bearer ${token}` : null,
    clientAddress: "127.0.0.1",
    requestId: newId("req"),
  });

describe("tRPC procedures pass through the same gate", () => {
  it("a query and a mutation each leave one record, with the console's operation name", async () => {
    const { token, delegationId } = await apiKey();
    const before = await provenanceCount();
    const passport = await caller(token).identity.passports.register({
      type: "agent",
      name: "via trpc",
      public_key: ed25519Jwk(),
    });
    expect(await lastProvenance()).toMatchObject({
      operation: "TRPC identity.passports.register",
      decision: "allowed",
      status: 200,
      resourceId: passport.did,
      delegationId,
    });
    const list = await caller(token).identity.passports.list({ limit: 10 });
    expect(list.data.map((p) => p.did)).toContain(passport.did);
    expect(await provenanceCount()).toBe(before + 2);
  });

  it("refuses a caller without a token (UNAUTHORIZED) and records it", async () => {
    await expect(caller().identity.passports.list({ limit: 10 })).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    expect(await lastProvenance()).toMatchObject({
      decision: "denied",
      status: 401,
      operation: "TRPC identity.passports.list",
    });
  });

  it("refuses a procedure the delegation does not cover (FORBIDDEN), naming the capability", async () => {
    const { token } = await apiKey(["svc_api:passports:read"]);
    await expect(caller(token).identity.delegations.list({ limit: 5 })).rejects.toMatchObject({
      code: "FORBIDDEN",
      message: expect.stringContaining("svc_api:delegations:read"),
    });
    expect(await lastProvenance()).toMatchObject({ decision: "denied", status: 403 });
  });

  it("invalid input is BAD_REQUEST with field errors, recorded, and nothing is saved", async () => {
    const { token } = await apiKey();
    const before = await provenanceCount();
    const err = await caller(token)
      .identity.passports.register({ type: "robot" as never, name: "", public_key: "x" })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "BAD_REQUEST" });
    expect(await provenanceCount()).toBe(before + 1);
    expect(await lastProvenance()).toMatchObject({ decision: "denied", status: 400 });
  });

  it("a failing mutation is rolled back and recorded with its status", async () => {
    const { token } = await apiKey();
    const jwk = ed25519Jwk();
    await caller(token).identity.passports.register({ type: "agent", name: "one", public_key: jwk });
    await expect(
      caller(token).identity.passports.register({ type: "agent", name: "two", public_key: jwk }),
    ).rejects.toMatchObject({ code: "CONFLICT" });
    expect(await lastProvenance()).toMatchObject({ decision: "allowed", status: 409 });
  });

  it("revocation through the console refuses the revoked key at once", async () => {
    const admin = await apiKey();
    const victim = await apiKey();
    await caller(admin.token).identity.delegations.revoke({ id: victim.delegationId, reason: "console" });
    await expect(caller(victim.token).identity.passports.list({ limit: 1 })).rejects.toMatchObject({
      code: "UNAUTHORIZED",
    });
  });
});

describe("agents over tRPC", () => {
  afterAll(async () => {
    const { shutdownSandbox } = await import("@/server/sandbox/pool");
    await shutdownSandbox();
  });

  it("deploy with wait answers the final status, as /v1 does (active, or inactive for a bundle without a handler)", async () => {
    const { token } = await apiKey();
    const deploy = (name: string, code: string) =>
      caller(token).agents.deploy({ manifest: manifestOf(name), ...bundleOf(code), wait: true });
    expect((await deploy("trpc-waited", "export default async () => 1;")).data.status).toBe("active");
    expect((await deploy("trpc-no-handler", "export const x = 1;")).data.status).toBe("inactive");
  });

  it("the agents list carries each agent's version and updated_at", async () => {
    const { token } = await apiKey();
    const out = await caller(token).agents.deploy({
      manifest: { ...manifestOf("trpc-listed"), version: "3.1.4" },
      ...bundleOf("export default async () => 1;"),
      wait: true,
    });
    const list = await caller(token).agents.list({ limit: 100 });
    const row = list.data.agents.find((a) => a.id === out.data.agentId);
    expect(row).toMatchObject({ version: "3.1.4", updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
    const status = await caller(token).agents.status({ id: out.data.agentId });
    expect(row!.updated_at).toBe(status.data.updated_at);
  });
});
