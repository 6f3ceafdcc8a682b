import { describe, expect, it } from "vitest";
import { database } from "@/server/db/client";
import { newId } from "@/server/ids";
import { endConsoleSession } from "@/server/members/sessions";
import { rootOrgDid } from "@/server/setup/bootstrap";
import { handlerWithSession } from "@/server/trpc/handler";
import { appRouter, createCaller } from "@/server/appRouter";
import { apiKey, ed25519Jwk, lastProvenance } from "./harness";
import { consoleMember } from "./consoleMembers";

/**
 * What a bearer token can do through tRPC is exactly what it can do through /v1: no console-only
 * procedure takes it, and no procedure mints a credential that outlives or escapes the caller's
 * delegation (issue "Found from outside", item 1).
 */
// The endpoint as Next.js serves it, without a session cookie.
const trpcHandler = handlerWithSession(appRouter, async () => null);
const bearer = (token: string) =>
  createCaller({ authorization: `Bearer ${token}`, clientAddress: "127.0.0.1", requestId: newId("req") });

const person = (role: "admin" | "approver" | "viewer") => consoleMember(role);

/** A 60-second token holding `capabilities`, derived from a root key (as the report's attacker held). */
async function shortLived(capabilities: string[]) {
  const root = await apiKey();
  const passport = await bearer(root.token).identity.passports.register({
    type: "agent",
    name: "short",
    public_key: ed25519Jwk(),
  });
  const issued = await bearer(root.token).identity.delegations.issue({
    delegate_did: passport.did,
    capabilities,
    duration_seconds: 60,
  });
  return { token: issued.token, delegationId: issued.delegation_id, rootDelegationId: root.delegationId };
}

type AnyCaller = Record<string, unknown>;
const procedureOf = (caller: ReturnType<typeof createCaller>, path: string) =>
  path.split(".").reduce<unknown>((c, k) => (c as AnyCaller)[k], caller) as (input?: unknown) => Promise<unknown>;

describe("a short-lived delegation cannot mint a lasting credential (the report's exploit)", () => {
  it("identity.apiKeys.create refuses a bearer token, over HTTP too, and records the refusal", async () => {
    const { token } = await shortLived(["svc_api:delegations:write", "svc_api:passports:read"]);
    await expect(
      bearer(token).identity.apiKeys.create({ name: "persist", capabilities: ["svc_api:passports:read"], days: 3650 }),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
    expect(await lastProvenance()).toMatchObject({
      operation: "TRPC identity.apiKeys.create",
      decision: "denied",
      status: 403,
    });

    const res = await trpcHandler(
      new Request("http://127.0.0.1/api/trpc/identity.apiKeys.create", {
        method: "POST",
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
        body: JSON.stringify({ name: "persist", capabilities: ["svc_api:passports:read"], days: 3650 }),
      }),
    );
    expect(res.status).toBe(403);
    const db = await database();
    expect(await db.read.delegation.count({ where: { name: "persist" } })).toBe(0);
  });

  it("delegation tokens and sessions issued through tRPC cannot outlive the caller, and die with it", async () => {
    const { token, delegationId } = await shortLived(["svc_api:*"]);
    const self = await bearer(token)
      .members.me()
      .catch((e: unknown) => e);
    expect(self).toMatchObject({ code: "FORBIDDEN" });
    const root = await apiKey();
    const target = await bearer(root.token).identity.passports.register({
      type: "agent",
      name: "target",
      public_key: ed25519Jwk(),
    });
    await expect(
      bearer(token).identity.delegations.issue({
        delegate_did: target.did,
        capabilities: ["svc_api:passports:read"],
        duration_seconds: 30 * 86_400,
      }),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(bearer(token).identity.sessions.exchange({ duration_seconds: 86_400 })).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
    const child = await bearer(token).identity.delegations.issue({
      delegate_did: target.did,
      capabilities: ["svc_api:passports:read"],
      duration_seconds: 30,
    });
    const detail = await bearer(root.token).identity.delegations.get({ id: child.delegation_id });
    expect(detail.parent_id).toBe(delegationId);
    await bearer(root.token).identity.delegations.revoke({ id: delegationId });
    await expect(bearer(child.token).identity.passports.list({ limit: 1 })).rejects.toMatchObject({
      code: "UNAUTHORIZED",
    });
  });
});

describe("an API key created in the console", () => {
  it("derives from the administrator's standing grant: bounded by it, outliving the session, revoked with the person", async () => {
    const admin = await person("admin");
    const db = await database();
    const session = (await db.read.delegation.findUnique({ where: { id: admin.delegationId } }))!;
    expect(session.parentId).not.toBeNull();
    const grant = (await db.read.delegation.findUnique({ where: { id: session.parentId! } }))!;
    expect(grant).toMatchObject({ kind: "member", delegateDid: admin.did, parentId: null });

    // Longer than the standing grant: refused, never detached.
    await expect(
      admin.caller.identity.apiKeys.create({ name: "ten years", capabilities: ["svc_api:passports:read"], days: 3650 }),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
    const key = await admin.caller.identity.apiKeys.create({
      name: "ci",
      capabilities: ["svc_api:passports:read"],
      days: 90,
    });
    const row = (await db.read.delegation.findUnique({ where: { id: key.delegation_id } }))!;
    expect(row).toMatchObject({
      kind: "api_key",
      parentId: grant.id,
      ancestry: grant.id,
      delegateDid: (await rootOrgDid(db))!,
      grantorDid: admin.did,
    });
    expect(row.expiresAt.getTime()).toBeLessThanOrEqual(grant.expiresAt.getTime());

    // Signing out ends the session, not the key; revoking the person ends both.
    await endConsoleSession(db, admin.delegationId);
    expect((await bearer(key.token).identity.passports.list({ limit: 1 })).data).toBeDefined();
    const other = await person("admin");
    await other.caller.members.revoke({ did: admin.did });
    await expect(bearer(key.token).identity.passports.list({ limit: 1 })).rejects.toMatchObject({
      code: "UNAUTHORIZED",
    });
    expect((await db.read.delegation.findUnique({ where: { id: key.delegation_id } }))!.revokedAt).not.toBeNull();
  });

  it("a misspelt capability is refused, named in the problem's errors", async () => {
    const admin = await person("admin");
    const err = await admin.caller.identity.apiKeys
      .create({ name: "typo", capabilities: ["svc_api:pasports:read"], days: 1 })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({
      code: "BAD_REQUEST",
      cause: {
        status: 400,
        extra: {
          errors: [
            expect.objectContaining({
              field: "capabilities.0",
              code: "UNKNOWN_CAPABILITY",
              message: expect.stringContaining('"svc_api:pasports:read"'),
            }),
          ],
        },
      },
    });
    expect(await lastProvenance()).toMatchObject({
      operation: "TRPC identity.apiKeys.create",
      decision: "denied",
      status: 400,
    });
  });

  it("viewers and approvers cannot create keys", async () => {
    for (const role of ["viewer", "approver"] as const) {
      const p = await person(role);
      await expect(
        p.caller.identity.apiKeys.create({ name: "x", capabilities: ["svc_api:passports:read"], days: 1 }),
      ).rejects.toMatchObject({ code: "FORBIDDEN" });
    }
  });
});

/**
 * Every procedure, classified: the console's own refuse any bearer token (even one holding
 * `svc_api:*`); those built from a /v1 operation check its capability, so a token without it is
 * refused. A new procedure fails this test until it is classified here.
 */
const CONSOLE_ONLY = [
  "identity.apiKeys.create",
  "members.me",
  "members.list",
  "members.invite",
  "members.revoke",
  "provenance.proof",
  "provenance.status",
  "overview.dashboard",
  "marketplace.installationState",
  "marketplace.connectorClient",
  "marketplace.setConnectorClient",
  "reasoning.providers.list",
  "reasoning.providers.add",
  "reasoning.providers.remove",
  "reasoning.rules.list",
  "reasoning.rules.set",
  "reasoning.rules.remove",
  "reasoning.spend.byDelegation",
  "reasoning.spend.byEntity",
];
/** Inputs of the console-only procedures that take one (the rest take none). */
const CONSOLE_INPUTS: Record<string, unknown> = {
  "marketplace.installationState": { id: "ins_x" },
  "marketplace.connectorClient": { connector_id: "github" },
  "marketplace.setConnectorClient": { connector_id: "github", client_id: "x" },
  "reasoning.providers.add": { name: "x", kind: "openai-compatible", base_url: "https://models.example.com/v1" },
  "reasoning.providers.remove": { id: "prv_x" },
  "reasoning.rules.set": { target: "coding", model: "x" },
  "reasoning.rules.remove": { target: "coding" },
  "reasoning.spend.byDelegation": {},
  "reasoning.spend.byEntity": {},
};
const FROM_OPERATIONS: Record<string, unknown> = {
  "identity.passports.list": { limit: 1 },
  "identity.passports.get": { did: "did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp" },
  "identity.passports.register": {
    type: "agent",
    name: "x",
    public_key: "did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp",
  },
  "identity.passports.update": {
    did: "did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp",
    verification_tier: 3,
  },
  "identity.sessions.exchange": { capabilities: ["svc_api:passports:write"] },
  "identity.delegations.list": { limit: 1 },
  "identity.delegations.get": { id: "dlg_x" },
  "identity.delegations.issue": {
    delegate_did: "did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp",
    capabilities: ["svc_api:*"],
    duration_seconds: 60,
  },
  "identity.delegations.revoke": { id: "dlg_x" },
  "identity.delegations.usage": { id: "dlg_x" },
  "identity.delegations.simulate": { id: "dlg_x", capabilities: [] },
  "identity.revocations.list": { limit: 1 },
  "identity.capabilities.match": { requiredCapabilities: ["svc_api:agents:read"] },
  "controlPlane.orgs.list": { limit: 1 },
  "controlPlane.orgs.get": { org_did: "did:svc:nope" },
  "controlPlane.orgs.create": { org_did: "did:svc:nope", name: "x" },
  "controlPlane.orgs.update": { org_did: "did:svc:nope", name: "x" },
  "provenance.list": { limit: 1 },
  "provenance.get": { id: "prv_x" },
  "provenance.consistency": { from: 1, to: 1 },
  "agents.list": { limit: 1 },
  "agents.status": { id: "agt_x" },
  "agents.usage": { id: "agt_x" },
  "agents.deploy": {
    manifest: { name: "x", version: "1", capabilities: [] },
    bundleBase64: "eA==",
    bundleHash: `sha256:${"0".repeat(64)}`,
  },
  "agents.activate": { id: "agt_x" },
  "agents.deactivate": { id: "agt_x" },
  "agents.invoke": { id: "agt_x", input: {} },
  "executions.list": { limit: 1 },
  "executions.get": { id: "exe_x" },
  "executions.cancel": { id: "exe_x" },
  "executions.callbackAttempts": { id: "exe_x" },
  "executions.logs": { id: "exe_x" },
  "executions.callbackSecret": undefined,
  "executions.rotateCallbackSecret": undefined,
  "events.list": { limit: 1 },
  "events.get": { id: "evt_x" },
  "events.emit": { type: "a.b", payload: {} },
  "webhooks.list": { limit: 1 },
  "webhooks.create": { target_url: "https://hooks.example.com/x", event_types: ["a.b"] },
  "webhooks.get": { id: "whk_x" },
  "webhooks.update": { id: "whk_x", description: "x" },
  "webhooks.delete": { id: "whk_x" },
  "webhooks.deliveries": { id: "whk_x", limit: 1 },
  "webhooks.delivery": { id: "whk_x", delivery_id: "whd_x" },
  "webhooks.retryDelivery": { id: "whk_x", delivery_id: "whd_x" },
  "webhooks.rotateSecret": { id: "whk_x" },
  // Live views (server/trpc/live.ts): opening one checks the capability of the reads it follows.
  "executions.listLive": { limit: 1 },
  "executions.live": { id: "exe_x" },
  "webhooks.live": { id: "whk_x" },
  "approvals.list": { limit: 1 },
  "approvals.get": { id: "apr_x" },
  "approvals.create": { task_id: "t", agent_id: "agt_x", action_description: "x", risk_level: "low" },
  "approvals.respond": { id: "apr_x", decision: "approve" },
  "approvals.cancel": { id: "apr_x" },
  "approvals.inbox": { limit: 1 },
  "approvals.pendingCount": undefined,
  "workflows.list": { limit: 1 },
  "workflows.get": { id: "wfl_x" },
  "workflows.start": { nodes: [{ id: "a", node_type: "fork" }], edges: [] },
  "workflows.cancel": { id: "wfl_x" },
  "workflows.listLive": { limit: 1 },
  "workflows.live": { id: "wfl_x" },
  "marketplace.connectors": { limit: 1 },
  "marketplace.connector": { id: "http-json" },
  "marketplace.install": { id: "http-json", deployment_mode: "cloud", config: {} },
  "marketplace.installations": { limit: 1 },
  "marketplace.installation": { id: "ins_x" },
  "marketplace.updateInstallation": { id: "ins_x", status: "suspended" },
  "marketplace.uninstall": { id: "ins_x" },
  "marketplace.usage": { id: "ins_x" },
  "marketplace.invoke": { id: "ins_x", action: "get_json", input: {} },
  "marketplace.ratings": { id: "http-json" },
  "marketplace.rate": { id: "http-json", rating: 4 },
  "marketplace.ratingSummary": { id: "http-json" },
  "reasoning.models": undefined,
  "reasoning.performance": { id: "gpt-4o-mini" },
  "reasoning.think": { messages: [{ role: "user", content: "x" }] },
  "reasoning.calls.list": { limit: 1 },
  "reasoning.calls.get": { id: "rsn_x" },
  "reasoning.calls.feedback": { id: "rsn_x", score: 1 },
  "reasoning.benchmarks.list": { limit: 1 },
  "reasoning.benchmarks.submit": {
    model_id: "gpt-4o-mini",
    benchmark_type: "math",
    benchmark_suite: "gsm8k",
    score: 1,
  },
  "reasoning.benchmarks.summary": {},
  "prompts.list": { limit: 1 },
  "prompts.get": { key: "x" },
  "prompts.versions": { key: "x", limit: 1 },
  "prompts.version": { key: "x", version: "1.0.0" },
  "prompts.publish": {
    key: "x",
    version: "1.0.0",
    content: "x",
    meta: { id: "x", namespace: "x", scope: "organization", description: "" },
  },
  "prompts.render": { key: "x", inputs: {} },
  "prompts.setActiveVersion": { key: "x", version: "1.0.0" },
  "prompts.deprecate": { key: "x", version: "1.0.0" },
  "prompts.history": { key: "x", limit: 1 },
  "prompts.performance": { key: "x" },
  "prompts.affinity": { limit: 1 },
  "learning.list": { limit: 1 },
  "learning.get": { id: "lrn_x" },
  "learning.propose": { kind: "routing_rule", target: "x", proposed: {} },
  "learning.approve": { id: "lrn_x" },
  "learning.reject": { id: "lrn_x" },
  "learning.applyChange": { id: "lrn_x" },
  "learning.rollback": { id: "lrn_x" },
};

describe("every tRPC procedure, with a bearer token", () => {
  it("is classified", () => {
    expect(Object.keys(appRouter._def.procedures).sort()).toEqual(
      [...CONSOLE_ONLY, ...Object.keys(FROM_OPERATIONS)].sort(),
    );
  });

  for (const path of CONSOLE_ONLY) {
    it(`${path} refuses a bearer token holding svc_api:*`, async () => {
      const { token } = await apiKey(["svc_api:*"]);
      await expect(
        procedureOf(
          bearer(token),
          path,
        )(
          path in CONSOLE_INPUTS
            ? CONSOLE_INPUTS[path]
            : path === "members.invite"
              ? { role: "viewer" }
              : path === "members.revoke"
                ? { did: "did:key:z6Mkx" }
                : path === "provenance.proof"
                  ? { id: "prv_x" }
                  : path === "identity.apiKeys.create"
                    ? { name: "k", capabilities: ["svc_api:*"], days: 1 }
                    : undefined,
        ),
      ).rejects.toMatchObject({ code: "FORBIDDEN" });
      expect(await lastProvenance()).toMatchObject({ operation: `TRPC ${path}`, decision: "denied", status: 403 });
    });
  }

  for (const [path, input] of Object.entries(FROM_OPERATIONS)) {
    it(`${path} needs what its /v1 operation needs`, async () => {
      const { token } = await apiKey(["svc_api:compliance:read"]);
      await expect(procedureOf(bearer(token), path)(input)).rejects.toMatchObject({ code: "FORBIDDEN" });
      expect(await lastProvenance()).toMatchObject({ operation: `TRPC ${path}`, decision: "denied", status: 403 });
    });
  }
});

describe("tRPC answers a unique-key race as /v1 does", () => {
  it("six concurrent registrations of one key: one succeeds, the others are CONFLICT, never INTERNAL_SERVER_ERROR", async () => {
    const { token } = await apiKey();
    const jwk = ed25519Jwk();
    const outcomes = await Promise.allSettled(
      Array.from({ length: 6 }, (_, i) =>
        bearer(token).identity.passports.register({ type: "agent", name: `race ${i}`, public_key: jwk }),
      ),
    );
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
    const codes = outcomes.flatMap((o) => (o.status === "rejected" ? [(o.reason as { code: string }).code] : []));
    expect(codes).toEqual(Array(5).fill("CONFLICT"));
    const db = await database();
    const records = await db.read.provenanceRecord.findMany({
      where: { operation: "TRPC identity.passports.register" },
      orderBy: { seq: "desc" },
      take: 6,
    });
    expect(records.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409]);
  });
});

describe("refusals before any procedure leave a record", () => {
  const post = (path: string, headers: Record<string, string> = {}, body = "{}") =>
    trpcHandler(
      new Request(`http://127.0.0.1/api/trpc/${path}`, {
        method: "POST",
        headers: { "Content-Type": "application/json", ...headers },
        body,
      }),
    );

  it("a cross-site request is a 403 problem, recorded as denied", async () => {
    const res = await post("members.invite", { "Sec-Fetch-Site": "cross-site" });
    expect(res.status).toBe(403);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect(res.headers.get("x-request-id")).toBeTruthy();
    expect(await lastProvenance()).toMatchObject({
      operation: "TRPC (cross-site refused)",
      decision: "denied",
      status: 403,
    });
  });

  it("a batch over the limit is a 400 problem, recorded as denied", async () => {
    const res = await post(`${Array(11).fill("identity.passports.list").join(",")}?batch=1`);
    expect(res.status).toBe(400);
    expect((await res.json()).errors[0]).toMatchObject({ field: "batch", code: "OUT_OF_RANGE" });
    expect(await lastProvenance()).toMatchObject({
      operation: "TRPC (batch refused)",
      decision: "denied",
      status: 400,
    });
  });

  it("a body over the limit is a 413 problem, recorded as denied", async () => {
    const res = await post("identity.passports.register", {}, JSON.stringify({ name: "x".repeat(2_000_000) }));
    expect(res.status).toBe(413);
    expect(await lastProvenance()).toMatchObject({ operation: "TRPC (body refused)", decision: "denied", status: 413 });
  });
});

describe("the console's own calls through the endpoint", () => {
  it("a signed-in administrator's batched reads and a key creation work over HTTP", async () => {
    const admin = await person("admin");
    const asConsole = handlerWithSession(appRouter, async () => ({ delegationId: admin.delegationId }));
    const reads = await asConsole(
      new Request(
        `http://127.0.0.1/api/trpc/members.me,provenance.status,identity.passports.list?batch=1&input=${encodeURIComponent(JSON.stringify({ 2: { limit: 5 } }))}`,
      ),
    );
    expect(reads.status).toBe(200);
    const [me, status, passports] = (await reads.json()) as { result: { data: Record<string, unknown> } }[];
    expect(me!.result.data).toMatchObject({ did: admin.did, role: "admin" });
    expect(status!.result.data).toHaveProperty("passport_count");
    expect(passports!.result.data).toHaveProperty("data");
    const created = await asConsole(
      new Request("http://127.0.0.1/api/trpc/identity.apiKeys.create", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ name: "over http", capabilities: ["svc_api:passports:read"], days: 30 }),
      }),
    );
    expect(created.status).toBe(200);
    expect(((await created.json()) as { result: { data: { name: string } } }).result.data.name).toBe("over http");
  });
});
