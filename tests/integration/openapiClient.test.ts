import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import createClient from "openapi-fetch";
import openapiTS, { astToString } from "openapi-typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resetConfig } from "@/server/config";
import { database } from "@/server/db/client";
import { areaOperations as operations } from "@/server/areas";
import { registerLearningApplier } from "@/server/learning/appliers";
import { catchUp } from "@/server/ledger/buildTree";
import { apiKey, call, ed25519Jwk, useTestServer } from "./harness";
import { forgetDiscoveredModels } from "@/server/reasoning/discoverModels";
import { forgetRoutingCatalogue } from "@/server/reasoning/routingCatalogue";
import { resetReasoningSettings } from "@/server/reasoning/settings";
import { startProvider } from "./marketplaceProvider";
import { startFakeOpenAI, type FakeOpenAI } from "./peers/fakeOpenAI";
import type { paths } from "./openapi.generated";

/**
 * A client generated from /v1/openapi.json the way an integrator would (openapi-typescript types,
 * openapi-fetch calls). The types are committed so that `tsc --noEmit` checks every call below
 * against them; the first test fails when they no longer match the served document.
 * `defaultNonNullable: false`: a field with a default is optional in a request (the generator's
 * default makes it required, which is right only for responses).
 */
const t = useTestServer();
// The marketplace's invoke calls a provider: a loopback one.
let provider: Awaited<ReturnType<typeof startProvider>>;
// A loopback model for the reasoning operations (benchmarks need a known model, think a live one).
let model: FakeOpenAI;
beforeAll(async () => {
  provider = await startProvider({ open: true });
  model = await startFakeOpenAI(["typed-model"]);
  process.env.SVC_OUTBOUND_ALLOW = `${provider.hostPort},${model.hostPort}`;
  process.env.SVC_MODEL_PROVIDERS = JSON.stringify([
    {
      name: "typed",
      kind: "openai-compatible",
      base_url: model.baseUrl,
      models: [{ model_id: "typed-model", input_cost_per_million: 1, output_cost_per_million: 2 }],
    },
  ]);
  resetConfig();
  resetReasoningSettings();
  forgetDiscoveredModels();
  forgetRoutingCatalogue();
});
afterAll(async () => {
  delete process.env.SVC_MODEL_PROVIDERS;
  resetReasoningSettings();
  forgetDiscoveredModels();
  forgetRoutingCatalogue();
  await Promise.all([provider.close(), model.close()]);
});

// Engine-specific tests are not registered at all on the other engine: a skipped test fails CI.
const itNever = (..._args: unknown[]) => undefined;
// The committed types are compared with the OpenAPI document, which is the same on both engines:
// once, on SQLite. The calls below run on both.
const onSqliteOnly = process.env.SVC_TEST_ENGINE === "postgres" ? itNever : it;

const GENERATED = join(process.cwd(), "tests/integration/openapi.generated.ts");
const HEADER =
  "// Generated from GET /v1/openapi.json by openapi-typescript: do not edit. Regenerate with `npm run openapi:types`.\n\n";

describe("a typed client generated from the OpenAPI document", () => {
  onSqliteOnly("is generated from the document the service serves (committed types are up to date)", async () => {
    const doc = (await call(t.server.url, "GET", "/v1/openapi.json")).body;
    const fresh = HEADER + astToString(await openapiTS(structuredClone(doc), { defaultNonNullable: false }));
    if (process.env.UPDATE_OPENAPI_TYPES) writeFileSync(GENERATED, fresh);
    const committed = readFileSync(GENERATED, "utf8");
    expect(committed === fresh, "tests/integration/openapi.generated.ts is stale: run `npm run openapi:types`").toBe(
      true,
    );
  });

  it("calls every operation of the document and gets answers its schemas accept", async () => {
    const called = new Set<string>();
    const client = createClient<paths>({ baseUrl: t.server.url, headers: { Authorization: `Bearer ${t.root.token}` } });
    client.use({
      onRequest({ request, schemaPath }) {
        called.add(`${request.method} ${schemaPath}`);
      },
    });
    const schemaOf = (method: string, path: string) =>
      operations.find((op) => op.method === method && op.path === path)!.response;
    /** The answer was a success and its body is what the operation's response schema describes. */
    function ok<T>(method: string, path: string, result: { data?: T; error?: unknown; response: Response }): T {
      expect(result.response.ok, `${method} ${path}: ${result.response.status} ${JSON.stringify(result.error)}`).toBe(
        true,
      );
      const op = operations.find((o) => o.method === method && o.path === path);
      if (op) expect(schemaOf(method, path).safeParse(result.data).error, `${method} ${path}`).toBeUndefined();
      return result.data as T;
    }

    ok("GET", "/v1/health", await client.GET("/v1/health"));
    expect(ok("GET", "/v1/openapi.json", await client.GET("/v1/openapi.json")).openapi).toBe("3.0.3");

    const agent = ok(
      "POST",
      "/v1/passports",
      await client.POST("/v1/passports", { body: { type: "agent", name: "typed client", public_key: ed25519Jwk() } }),
    );
    ok("GET", "/v1/passports", await client.GET("/v1/passports", { params: { query: { limit: 5, type: "agent" } } }));
    ok("GET", "/v1/passports/{did}", await client.GET("/v1/passports/{did}", { params: { path: { did: agent.did } } }));
    ok(
      "PATCH",
      "/v1/passports/{did}",
      await client.PATCH("/v1/passports/{did}", {
        params: { path: { did: agent.did } },
        body: { verification_tier: 1 },
      }),
    );

    ok(
      "POST",
      "/v1/sessions/exchange",
      await client.POST("/v1/sessions/exchange", {
        body: { capabilities: ["svc_api:passports:read"], duration_seconds: 600 },
      }),
    );
    const token = ok(
      "POST",
      "/v1/delegation-tokens",
      await client.POST("/v1/delegation-tokens", {
        body: { delegate_did: agent.did, capabilities: ["svc_api:passports:read"], duration_seconds: 600 },
      }),
    );
    ok(
      "GET",
      "/v1/delegations",
      await client.GET("/v1/delegations", { params: { query: { status: "active", limit: 5 } } }),
    );
    ok(
      "GET",
      "/v1/delegations/{id}",
      await client.GET("/v1/delegations/{id}", { params: { path: { id: token.delegation_id } } }),
    );
    ok(
      "GET",
      "/v1/delegations/{id}/usage",
      await client.GET("/v1/delegations/{id}/usage", {
        params: { path: { id: token.delegation_id }, query: { since: "2026-01-01T00:00:00Z" } },
      }),
    );
    ok(
      "POST",
      "/v1/delegations/{id}/simulate",
      await client.POST("/v1/delegations/{id}/simulate", {
        params: { path: { id: token.delegation_id } },
        body: { capabilities: [] },
      }),
    );
    ok(
      "POST",
      "/v1/delegations/{id}/revoke",
      await client.POST("/v1/delegations/{id}/revoke", {
        params: { path: { id: token.delegation_id } },
        body: { reason: "typed client test" },
      }),
    );
    ok("GET", "/v1/revocations", await client.GET("/v1/revocations", { params: { query: { limit: 5 } } }));
    ok(
      "POST",
      "/v1/capabilities/match",
      await client.POST("/v1/capabilities/match", { body: { requiredCapabilities: ["svc_api:passports:read"] } }),
    );

    const orgPassport = ok(
      "POST",
      "/v1/passports",
      await client.POST("/v1/passports", {
        body: { type: "organization", name: "Typed Client Org", public_key: ed25519Jwk() },
      }),
    );
    ok(
      "POST",
      "/v1/cp/orgs",
      await client.POST("/v1/cp/orgs", { body: { org_did: orgPassport.did, name: "Typed Client Org" } }),
    );
    ok("GET", "/v1/cp/orgs", await client.GET("/v1/cp/orgs", { params: { query: { limit: 5 } } }));
    ok(
      "GET",
      "/v1/cp/orgs/{org_did}",
      await client.GET("/v1/cp/orgs/{org_did}", { params: { path: { org_did: orgPassport.did } } }),
    );
    ok(
      "PATCH",
      "/v1/cp/orgs/{org_did}",
      await client.PATCH("/v1/cp/orgs/{org_did}", {
        params: { path: { org_did: orgPassport.did } },
        body: { name: "Typed Client Org 2" },
      }),
    );

    await catchUp(await database());
    const records = ok(
      "GET",
      "/v1/provenance",
      await client.GET("/v1/provenance", { params: { query: { limit: 5 } } }),
    );
    const record = records.data[records.data.length - 1]!;
    const note = ok(
      "GET",
      "/v1/provenance/checkpoint",
      await client.GET("/v1/provenance/checkpoint", { parseAs: "text" }),
    );
    const treeSize = Number(String(note).split("\n")[1]);
    ok("GET", "/v1/provenance/verifier-key", await client.GET("/v1/provenance/verifier-key", { parseAs: "text" }));
    expect(String(ok("GET", "/metrics", await client.GET("/metrics", { parseAs: "text" })))).toMatch(/^# HELP svc_/m);
    ok(
      "GET",
      "/v1/provenance/consistency",
      await client.GET("/v1/provenance/consistency", { params: { query: { from: 1, to: treeSize } } }),
    );
    ok(
      "GET",
      "/v1/provenance/export",
      await client.GET("/v1/provenance/export", { params: { query: { from: 0, to: 2 } }, parseAs: "text" }),
    );
    ok("GET", "/v1/provenance/{id}", await client.GET("/v1/provenance/{id}", { params: { path: { id: record.id } } }));
    ok(
      "GET",
      "/v1/provenance/{id}/proof",
      await client.GET("/v1/provenance/{id}/proof", { params: { path: { id: record.id }, query: {} } }),
    );

    ok("GET", "/v1/compliance/deployment", await client.GET("/v1/compliance/deployment"));
    ok("GET", "/v1/compliance/walled-garden", await client.GET("/v1/compliance/walled-garden"));

    const code = "export default async (input) => ({ echo: input });";
    const bundleHash = `sha256:${createHash("sha256").update(code).digest("hex")}`;
    const deploy = {
      manifest: { name: "typed-client", version: "1.0.0", capabilities: [] },
      bundleBase64: Buffer.from(code).toString("base64"),
      bundleHash,
      wait: true,
    };
    const agentId = ok("POST", "/v1/agents/deploy", await client.POST("/v1/agents/deploy", { body: deploy })).data
      .agentId;
    const byId = { params: { path: { id: agentId } } };
    ok("GET", "/v1/agents", await client.GET("/v1/agents", { params: { query: { limit: 5, status: "active" } } }));
    ok("GET", "/v1/agents/{id}/status", await client.GET("/v1/agents/{id}/status", byId));
    ok("GET", "/v1/agents/{id}/usage", await client.GET("/v1/agents/{id}/usage", byId));
    ok("POST", "/v1/agents/{id}/deactivate", await client.POST("/v1/agents/{id}/deactivate", byId));
    ok("POST", "/v1/agents/{id}/activate", await client.POST("/v1/agents/{id}/activate", byId));
    // No worker runs in this file: the execution stays queued, so it can be cancelled.
    const execution = ok(
      "POST",
      "/v1/agents/{id}/invoke",
      await client.POST("/v1/agents/{id}/invoke", { ...byId, body: { input: { n: 1 }, max_attempts: 2 } }),
    );
    const exe = { params: { path: { id: execution.id } } };
    ok(
      "GET",
      "/v1/executions",
      await client.GET("/v1/executions", { params: { query: { limit: 5, agent_id: agentId, status: "queued" } } }),
    );
    ok("GET", "/v1/executions/{id}", await client.GET("/v1/executions/{id}", exe));
    ok("GET", "/v1/executions/{id}/logs", await client.GET("/v1/executions/{id}/logs", exe));
    ok("GET", "/v1/executions/{id}/callback-attempts", await client.GET("/v1/executions/{id}/callback-attempts", exe));
    ok("POST", "/v1/executions/{id}/cancel", await client.POST("/v1/executions/{id}/cancel", exe));
    ok("GET", "/v1/executions/callback-secret", await client.GET("/v1/executions/callback-secret"));
    ok("POST", "/v1/executions/callback-secret/rotate", await client.POST("/v1/executions/callback-secret/rotate"));

    const event = ok(
      "POST",
      "/v1/events/ingest",
      await client.POST("/v1/events/ingest", {
        body: { type: "invoice.paid", payload: { amount: 1 }, id: "openapi-1", source: "tests" },
      }),
    );
    ok(
      "POST",
      "/v1/events/emit",
      await client.POST("/v1/events/emit", { body: { type: "invoice.sent", occurred_at: "2026-11-21T09:30:00.000Z" } }),
    );
    ok("GET", "/v1/events", await client.GET("/v1/events", { params: { query: { limit: 5, type: "invoice.paid" } } }));
    ok("GET", "/v1/events/{id}", await client.GET("/v1/events/{id}", { params: { path: { id: event.event_id } } }));
    const hook = ok(
      "POST",
      "/v1/webhooks",
      await client.POST("/v1/webhooks", {
        body: { target_url: "https://hooks.example.com/svc", event_types: ["invoice.*"], description: "typed client" },
      }),
    );
    const byHook = { params: { path: { id: hook.id } } };
    ok("GET", "/v1/webhooks", await client.GET("/v1/webhooks", { params: { query: { limit: 5, kind: "webhook" } } }));
    ok("GET", "/v1/webhooks/{id}", await client.GET("/v1/webhooks/{id}", byHook));
    ok(
      "PATCH",
      "/v1/webhooks/{id}",
      await client.PATCH("/v1/webhooks/{id}", { ...byHook, body: { description: "typed client, renamed" } }),
    );
    ok("POST", "/v1/webhooks/{id}/rotate-secret", await client.POST("/v1/webhooks/{id}/rotate-secret", byHook));
    // No worker runs in this file: an attempt is logged by hand so that it can be replayed.
    const delivery = await (
      await database()
    ).writeTx((tx) =>
      tx.webhookDelivery.create({
        data: {
          id: "whd_openapi",
          orgDid: t.root.orgDid,
          subscriptionId: hook.id,
          eventId: event.event_id,
          attempt: 1,
          statusCode: 500,
          success: false,
          durationMs: 3,
          createdAt: new Date(),
        },
      }),
    );
    ok(
      "GET",
      "/v1/webhooks/{id}/deliveries",
      await client.GET("/v1/webhooks/{id}/deliveries", {
        params: { path: { id: hook.id }, query: { limit: 5, success: "false" } },
      }),
    );
    ok(
      "GET",
      "/v1/webhooks/{id}/deliveries/{delivery_id}",
      await client.GET("/v1/webhooks/{id}/deliveries/{delivery_id}", {
        params: { path: { id: hook.id, delivery_id: delivery.id } },
      }),
    );
    ok(
      "POST",
      "/v1/webhooks/{id}/deliveries/{delivery_id}/retry",
      await client.POST("/v1/webhooks/{id}/deliveries/{delivery_id}/retry", {
        params: { path: { id: hook.id, delivery_id: delivery.id } },
      }),
    );
    ok("DELETE", "/v1/webhooks/{id}", await client.DELETE("/v1/webhooks/{id}", byHook));

    ok(
      "GET",
      "/v1/marketplace/connectors",
      await client.GET("/v1/marketplace/connectors", { params: { query: { limit: 5 } } }),
    );
    const byConnector = { params: { path: { id: "http-json" } } };
    ok("GET", "/v1/marketplace/connectors/{id}", await client.GET("/v1/marketplace/connectors/{id}", byConnector));
    const installed = ok(
      "POST",
      "/v1/marketplace/connectors/{id}/install",
      await client.POST("/v1/marketplace/connectors/{id}/install", {
        ...byConnector,
        body: { deployment_mode: "cloud", config: {}, base_url: `${provider.url}/api` },
      }),
    );
    const byInstallation = { params: { path: { id: installed.installation_id } } };
    ok(
      "GET",
      "/v1/marketplace/installations",
      await client.GET("/v1/marketplace/installations", { params: { query: { limit: 5 } } }),
    );
    ok(
      "GET",
      "/v1/marketplace/installations/{id}",
      await client.GET("/v1/marketplace/installations/{id}", byInstallation),
    );
    ok(
      "POST",
      "/v1/marketplace/installations/{id}/invoke",
      await client.POST("/v1/marketplace/installations/{id}/invoke", {
        ...byInstallation,
        body: { action: "get_json", input: { resource: "issues" } },
      }),
    );
    ok(
      "GET",
      "/v1/marketplace/installations/{id}/usage",
      await client.GET("/v1/marketplace/installations/{id}/usage", byInstallation),
    );
    ok(
      "POST",
      "/v1/marketplace/connectors/{id}/ratings",
      await client.POST("/v1/marketplace/connectors/{id}/ratings", { ...byConnector, body: { rating: 4 } }),
    );
    ok(
      "GET",
      "/v1/marketplace/connectors/{id}/ratings",
      await client.GET("/v1/marketplace/connectors/{id}/ratings", byConnector),
    );
    ok(
      "GET",
      "/v1/marketplace/connectors/{id}/ratings/summary",
      await client.GET("/v1/marketplace/connectors/{id}/ratings/summary", byConnector),
    );
    ok(
      "PATCH",
      "/v1/marketplace/installations/{id}",
      await client.PATCH("/v1/marketplace/installations/{id}", { ...byInstallation, body: { status: "suspended" } }),
    );
    ok(
      "DELETE",
      "/v1/marketplace/installations/{id}",
      await client.DELETE("/v1/marketplace/installations/{id}", byInstallation),
    );
    // The provider's redirect back: an unknown state is a typed refusal.
    const callback = await client.GET("/v1/marketplace/oauth/callback", { params: { query: { state: "unknown" } } });
    expect(callback.response.status).toBe(400);
    // An approval node waits for a decision, so the workflow is still running when it is cancelled.
    const workflow = ok(
      "POST",
      "/v1/workflows",
      await client.POST("/v1/workflows", {
        body: {
          name: "typed client",
          nodes: [
            { id: "ask", node_type: "approval", approval: { action_description: "typed client", risk_level: "low" } },
          ],
          edges: [],
        },
      }),
    );
    const byWorkflow = { params: { path: { id: workflow.workflow_id } } };
    ok("GET", "/v1/workflows", await client.GET("/v1/workflows", { params: { query: { limit: 5 } } }));
    ok("GET", "/v1/workflows/{id}", await client.GET("/v1/workflows/{id}", byWorkflow));
    ok("POST", "/v1/workflows/{id}/cancel", await client.POST("/v1/workflows/{id}/cancel", byWorkflow));
    // Approvals: asked by the root key, decided by a passport of the organization (never the requester)
    // holding a token from another of the operator's keys: one derived from the requester's key would
    // be the requester's own.
    const issuer = createClient<paths>({
      baseUrl: t.server.url,
      headers: { Authorization: `Bearer ${(await apiKey(["svc_api:*"])).token}` },
    });
    issuer.use({
      onRequest({ request, schemaPath }) {
        called.add(`${request.method} ${schemaPath}`);
      },
    });
    const approverPassport = ok(
      "POST",
      "/v1/passports",
      await client.POST("/v1/passports", {
        body: { type: "organization", name: "typed approver", public_key: ed25519Jwk() },
      }),
    );
    const approverToken = ok(
      "POST",
      "/v1/delegation-tokens",
      await issuer.POST("/v1/delegation-tokens", {
        body: {
          delegate_did: approverPassport.did,
          capabilities: ["svc_api:approvals:respond"],
          duration_seconds: 600,
        },
      }),
    ).token;
    const approverClient = createClient<paths>({
      baseUrl: t.server.url,
      headers: { Authorization: `Bearer ${approverToken}` },
    });
    approverClient.use({
      onRequest({ request, schemaPath }) {
        called.add(`${request.method} ${schemaPath}`);
      },
    });
    const approvalBody = {
      task_id: "typed-1",
      agent_id: agentId,
      action_description: "Refund invoice INV-1",
      risk_level: "medium" as const,
      request_data: { invoice: "INV-1", amount: 10 },
    };
    const approval = ok("POST", "/v1/approvals", await client.POST("/v1/approvals", { body: approvalBody }));
    const byApproval = { params: { path: { id: approval.id } } };
    ok(
      "GET",
      "/v1/approvals",
      await client.GET("/v1/approvals", { params: { query: { limit: 5, status: "pending" } } }),
    );
    ok("GET", "/v1/approvals/{id}", await client.GET("/v1/approvals/{id}", byApproval));
    ok(
      "POST",
      "/v1/approvals/{id}/respond",
      await approverClient.POST("/v1/approvals/{id}/respond", {
        ...byApproval,
        body: { decision: "approve_with_modifications", modified_params: { invoice: "INV-1", amount: 5 } },
      }),
    );
    ok(
      "POST",
      "/v1/approvals/{id}/use",
      await client.POST("/v1/approvals/{id}/use", { ...byApproval, body: { params: { invoice: "INV-1", amount: 5 } } }),
    );
    const withdrawn = ok("POST", "/v1/approvals", await client.POST("/v1/approvals", { body: approvalBody }));
    ok(
      "POST",
      "/v1/approvals/{id}/cancel",
      await client.POST("/v1/approvals/{id}/cancel", { params: { path: { id: withdrawn.id } } }),
    );
    // Learning: proposed by the root key (a routing rule of an in-memory applier), decided by the approver's passport
    // (its token again from the other key).
    registerLearningApplier({
      kind: "routing_rule",
      validate: async () => undefined,
      current: async () => ({ model: "typed-model" }),
      apply: async () => undefined,
    });
    const decider = createClient<paths>({
      baseUrl: t.server.url,
      headers: {
        Authorization: `Bearer ${
          ok(
            "POST",
            "/v1/delegation-tokens",
            await issuer.POST("/v1/delegation-tokens", {
              body: {
                delegate_did: approverPassport.did,
                capabilities: ["svc_api:learning:decide"],
                duration_seconds: 600,
              },
            }),
          ).token
        }`,
      },
    });
    decider.use({
      onRequest({ request, schemaPath }) {
        called.add(`${request.method} ${schemaPath}`);
      },
    });
    const proposalBody = { kind: "routing_rule" as const, target: "summarize", proposed: { model: "typed-model" } };
    const proposal = ok(
      "POST",
      "/v1/svcos/learning/proposals",
      await client.POST("/v1/svcos/learning/proposals", { body: { ...proposalBody, explain: { source: "admin" } } }),
    );
    const byProposal = { params: { path: { id: proposal.id } } };
    ok(
      "GET",
      "/v1/svcos/learning/proposals",
      await client.GET("/v1/svcos/learning/proposals", { params: { query: { limit: 5 } } }),
    );
    ok("GET", "/v1/svcos/learning/proposals/{id}", await client.GET("/v1/svcos/learning/proposals/{id}", byProposal));
    ok(
      "POST",
      "/v1/svcos/learning/proposals/{id}/approve",
      await decider.POST("/v1/svcos/learning/proposals/{id}/approve", { ...byProposal, body: { comment: "ok" } }),
    );
    ok(
      "POST",
      "/v1/svcos/learning/proposals/{id}/apply",
      await decider.POST("/v1/svcos/learning/proposals/{id}/apply", byProposal),
    );
    ok(
      "POST",
      "/v1/svcos/learning/proposals/{id}/rollback",
      await decider.POST("/v1/svcos/learning/proposals/{id}/rollback", byProposal),
    );
    const refused = ok(
      "POST",
      "/v1/svcos/learning/proposals",
      await client.POST("/v1/svcos/learning/proposals", { body: proposalBody }),
    );
    ok(
      "POST",
      "/v1/svcos/learning/proposals/{id}/reject",
      await decider.POST("/v1/svcos/learning/proposals/{id}/reject", { params: { path: { id: refused.id } } }),
    );
    // Reasoning: a routed call to the loopback model, then its record, its model's figures and feedback.
    const thought = ok(
      "POST",
      "/v1/reasoning/think",
      await client.POST("/v1/reasoning/think", {
        body: { messages: [{ role: "user", content: "Say hello." }], pinned_model: "typed-model", max_tokens: 16 },
      }),
    );
    expect(thought.metadata.call_id).toBeTruthy();
    const byCall = { params: { path: { id: thought.metadata.call_id! } } };
    ok("GET", "/v1/reasoning/calls", await client.GET("/v1/reasoning/calls", { params: { query: { limit: 5 } } }));
    ok("GET", "/v1/reasoning/calls/{id}", await client.GET("/v1/reasoning/calls/{id}", byCall));
    ok(
      "POST",
      "/v1/reasoning/calls/{id}/feedback",
      await client.POST("/v1/reasoning/calls/{id}/feedback", { ...byCall, body: { score: 1 } }),
    );
    ok(
      "GET",
      "/v1/reasoning/models/{id}/performance",
      await client.GET("/v1/reasoning/models/{id}/performance", { params: { path: { id: "typed-model" } } }),
    );
    ok("GET", "/v1/reasoning/models", await client.GET("/v1/reasoning/models"));
    const benchmark = ok(
      "POST",
      "/v1/reasoning/benchmarks",
      await client.POST("/v1/reasoning/benchmarks", {
        body: { model_id: "typed-model", benchmark_type: "math", benchmark_suite: "gsm8k", score: 88 },
      }),
    );
    const benchmarks = ok(
      "GET",
      "/v1/reasoning/benchmarks",
      await client.GET("/v1/reasoning/benchmarks", { params: { query: { model_id: "typed-model" } } }),
    );
    expect(benchmarks.data.map((b) => b.id)).toContain(benchmark.id);
    ok(
      "GET",
      "/v1/reasoning/benchmarks/summary",
      await client.GET("/v1/reasoning/benchmarks/summary", { params: { query: { days: 7 } } }),
    );

    const key = { key: "typed.prompt" };
    const published = ok(
      "POST",
      "/v1/prompts/{key}/versions",
      await client.POST("/v1/prompts/{key}/versions", {
        params: { path: key },
        body: {
          version: "1.0.0",
          content: "Hello {{name}}",
          meta: { id: "typed.prompt", namespace: "typed", scope: "organization", description: "typed client" },
          input_schema: { type: "object", properties: { name: { type: "string" } } },
        },
      }),
    );
    expect(published.status).toBe("active");
    ok(
      "POST",
      "/v1/prompts/{key}/versions",
      await client.POST("/v1/prompts/{key}/versions", {
        params: { path: key },
        body: {
          version: "1.1.0",
          content: "Hi {{name}}",
          meta: { id: "typed.prompt", namespace: "typed", scope: "organization", description: "typed client" },
        },
      }),
    );
    ok("GET", "/v1/prompts", await client.GET("/v1/prompts", { params: { query: { namespace: "typed" } } }));
    ok("GET", "/v1/prompts/{key}", await client.GET("/v1/prompts/{key}", { params: { path: key } }));
    ok("GET", "/v1/prompts/{key}/versions", await client.GET("/v1/prompts/{key}/versions", { params: { path: key } }));
    ok(
      "GET",
      "/v1/prompts/{key}/versions/{version}",
      await client.GET("/v1/prompts/{key}/versions/{version}", { params: { path: { ...key, version: "^1.0" } } }),
    );
    const rendered = ok(
      "POST",
      "/v1/prompts/{key}/render",
      await client.POST("/v1/prompts/{key}/render", { params: { path: key }, body: { inputs: { name: "Ann" } } }),
    );
    expect(rendered.text).toBe("Hello Ann");
    ok(
      "POST",
      "/v1/prompts/{key}/active-version",
      await client.POST("/v1/prompts/{key}/active-version", { params: { path: key }, body: { version: "1.1.0" } }),
    );
    ok(
      "POST",
      "/v1/prompts/{key}/versions/{version}/deprecate",
      await client.POST("/v1/prompts/{key}/versions/{version}/deprecate", {
        params: { path: { ...key, version: "1.0.0" } },
      }),
    );
    ok("GET", "/v1/prompts/{key}/history", await client.GET("/v1/prompts/{key}/history", { params: { path: key } }));
    ok(
      "GET",
      "/v1/prompts/{key}/performance",
      await client.GET("/v1/prompts/{key}/performance", { params: { path: key, query: { window_days: 7 } } }),
    );
    ok("GET", "/v1/prompts/affinity", await client.GET("/v1/prompts/affinity", { params: { query: { limit: 5 } } }));

    const doc = (await call(t.server.url, "GET", "/v1/openapi.json")).body;
    const documented = Object.entries<Record<string, unknown>>(doc.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect([...called].sort()).toEqual(documented.sort());
  });

  it("refusals come back typed as problem details", async () => {
    const client = createClient<paths>({ baseUrl: t.server.url, headers: { Authorization: `Bearer ${t.root.token}` } });
    const { error, response } = await client.GET("/v1/passports/{did}", {
      params: { path: { did: "did:key:z6MkNoSuchPassportHere" } },
    });
    expect(response.status).toBe(404);
    expect(error?.type).toMatch(/\/docs\/errors#not_found$/);
  });
});
