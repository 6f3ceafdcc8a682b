import { spawn, type ChildProcess } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { database } from "@/server/db/client";
import { unseal } from "@/server/marketplace/tokenSealing";
import { accessContext, refreshContext } from "@/server/marketplace/tokens";
import { deployAndWait } from "./agentsHelpers";
import { apiKey, call, ed25519Jwk, waitFor, type ApiResult } from "./harness";
import { peerConnectorDefinition, startOAuthProvider, type OAuthProviderPeer } from "./peers/oauthProvider";
import { killProcessGroups } from "./processes";
import { startReceiver } from "./webhooksHelpers";
import { nodeArgs } from "./processScripts";

/**
 * No secret ever reaches a log. An svc process (tests/integration/loggingProcess.ts: the /v1
 * transport and the worker) runs at SVC_LOG_LEVEL=debug with its stdout and stderr captured; a
 * journey through /v1 creates an API key's delegation token, a webhook (its secret, used to sign
 * a delivery), the execution callback secret (rotated, used to sign a callback) and an OAuth
 * installation (code exchange, tokens used at the provider, revoked at uninstall). Then: every
 * line is JSON with a level, the governed calls' lines carry their request id, operation and
 * organization, and none of the secrets appears anywhere in the output.
 */
const CALLBACK = "http://localhost:3000/v1/marketplace/oauth/callback";
const children: ChildProcess[] = [];
let out = "";
let base = "";
let peer: OAuthProviderPeer;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let root: Awaited<ReturnType<typeof apiKey>>;

beforeAll(async () => {
  root = await apiKey();
  peer = await startOAuthProvider({ redirectUris: [CALLBACK] });
  // The callback's first attempt fails: the retry path logs too.
  receiver = await startReceiver((path, n) => (path.startsWith("/cb") && n === 1 ? 500 : 200));
  const connectors = mkdtempSync(join(tmpdir(), "svc-connectors-"));
  writeFileSync(join(connectors, "loopback-oauth.json"), JSON.stringify(peerConnectorDefinition(peer)));
  const child = spawn(process.execPath, nodeArgs("loggingProcess"), {
    env: {
      ...process.env,
      NODE_ENV: "test",
      SVC_LOG_LEVEL: "debug",
      SVC_LOG_FORMAT: "",
      SVC_SANDBOX_THREADS: "1",
      SVC_CONNECTORS_DIR: connectors,
      SVC_OUTBOUND_ALLOW: `${peer.hostPort},${receiver.hostPort}`,
      SVC_CALLBACK_RETRY_SCHEDULE: "0,0.2",
      SVC_WEBHOOK_RETRY_SCHEDULE: "0,0.2",
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  children.push(child);
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise<never>((_, reject) =>
    child.on("exit", (code) => reject(new Error(`the svc process exited (${code}):\n${out.slice(-4000)}`))),
  );
  base = await Promise.race([
    exited,
    waitFor("the svc process's URL", async () => lines().find((l) => typeof l.url === "string")?.url as string, 45_000),
  ]);
}, 60_000);

afterAll(async () => {
  killProcessGroups(children);
  await receiver?.close();
  await peer?.close();
});

/** The captured output's lines, parsed (a line that is no JSON object fails the test that reads it). */
function lines(): Record<string, unknown>[] {
  return out
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => {
      try {
        return JSON.parse(l) as Record<string, unknown>;
      } catch {
        return { not_json: l };
      }
    });
}

const api = (method: string, path: string, body?: unknown, token = root.token) =>
  call(base, method, path, { token, body });

/** The log line of the call that gave `res`, found by the request id it answered with. */
function callLine(res: ApiResult) {
  const id = res.headers.get("x-request-id");
  return lines().find((l) => l.request_id === id && typeof l.status === "number");
}

describe("the log of a journey that creates every kind of secret", () => {
  it("is JSON lines with level, request id, operation and organization, and holds none of the secrets", async () => {
    const secrets: Record<string, string> = { "root API key": root.token };

    // A delegation token for an agent.
    const agent = await api("POST", "/v1/passports", { type: "agent", name: "logged", public_key: ed25519Jwk() });
    expect(agent.status).toBe(201);
    const delegation = await api("POST", "/v1/delegation-tokens", {
      delegate_did: agent.body.did,
      capabilities: ["svc_api:passports:read"],
      duration_seconds: 600,
    });
    expect(delegation.status).toBe(201);
    secrets["delegation token"] = delegation.body.token;
    expect((await api("GET", "/v1/passports", undefined, delegation.body.token)).status).toBe(200);
    // A refused call logs no credential either.
    expect((await api("GET", "/v1/delegations", undefined, delegation.body.token)).status).toBe(403);
    expect((await api("GET", "/v1/passports", undefined, `${delegation.body.token}x`)).status).toBe(401);

    // A webhook: its secret, and a delivery signed with it.
    const hook = await api("POST", "/v1/webhooks", {
      target_url: `${receiver.url}/hook`,
      event_types: ["billing.*"],
    });
    expect(hook.status).toBe(201);
    secrets["webhook secret"] = hook.body.secret;
    const rotated = await api("POST", `/v1/webhooks/${hook.body.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    secrets["rotated webhook secret"] = rotated.body.secret;
    const ingested = await api("POST", "/v1/events/ingest", { type: "billing.invoice.paid", payload: { amount: 7 } });
    expect(ingested.status).toBe(202);
    await waitFor("the webhook delivery", async () => receiver.at("/hook")[0]);

    // The execution callback secret, rotated, and a callback signed with it.
    const callbackSecret = await api("GET", "/v1/executions/callback-secret");
    secrets["callback secret"] = callbackSecret.body.secret;
    const rotatedCallback = await api("POST", "/v1/executions/callback-secret/rotate");
    expect(rotatedCallback.status).toBe(200);
    secrets["rotated callback secret"] = rotatedCallback.body.secret;
    const agentId = await deployAndWait(
      base,
      root.token,
      "logged-agent",
      `export default async (input) => ({ n: input.n })`,
    );
    // A receiver's own token in the callback URL's query is the caller's secret too.
    secrets["token in a callback URL"] = `cbq_${randomBytes(16).toString("hex")}`;
    const callbackPath = `/cb?token=${secrets["token in a callback URL"]}`;
    const run = await api("POST", `/v1/agents/${agentId}/invoke`, {
      input: { n: 1 },
      callback_url: `${receiver.url}${callbackPath}`,
    });
    expect(run.status).toBe(202);
    await waitFor("the execution's callback, retried", async () => receiver.at(callbackPath)[1]);

    // An OAuth installation: the code exchanged for tokens (with the client secret), the tokens
    // used at the provider, then revoked at uninstall.
    const pending = await api("POST", "/v1/marketplace/connectors/loopback-oauth/install", {
      deployment_mode: "cloud",
      config: { workspace: "acme" },
    });
    expect(pending.status, JSON.stringify(pending.body)).toBe(201);
    const landed = await peer.authorize(pending.body.oauth_authorization_url);
    if (!("redirectedTo" in landed)) throw new Error(`provider error page: ${landed.errorPage.slice(0, 300)}`);
    const back = new URL(landed.redirectedTo);
    secrets["OAuth authorization code"] = back.searchParams.get("code")!;
    secrets["OAuth client secret"] = peer.clientSecret;
    expect((await fetch(`${base}${back.pathname}${back.search}`, { redirect: "manual" })).status).toBe(303);
    const id = pending.body.installation_id as string;
    const row = await (await database()).read.connectorInstallation.findUniqueOrThrow({ where: { id } });
    expect(row.status).toBe("active");
    secrets["OAuth access token"] = await unseal(row.accessTokenSealed!, accessContext(id));
    if (row.refreshTokenSealed)
      secrets["OAuth refresh token"] = await unseal(row.refreshTokenSealed, refreshContext(id));
    const invoked = await api("POST", `/v1/marketplace/installations/${id}/invoke`, { action: "me", input: {} });
    expect(invoked.status, JSON.stringify(invoked.body)).toBe(200);
    expect((await api("DELETE", `/v1/marketplace/installations/${id}`)).status).toBeLessThan(300);
    await waitFor("the revocation at the provider", async () => peer.revocations[0]);

    // Every line is a JSON object with a level and a time.
    const all = lines();
    expect(all.filter((l) => l.not_json !== undefined)).toEqual([]);
    for (const l of all) expect(l).toMatchObject({ level: expect.any(String), time: expect.any(String) });
    // The governed calls' lines say which call, for whom, and how it ended.
    expect(callLine(hook)).toMatchObject({
      level: "info",
      operation: "POST /v1/webhooks",
      org_did: root.orgDid,
      status: 201,
      duration_ms: expect.any(Number),
    });
    expect(callLine(invoked)).toMatchObject({
      operation: "POST /v1/marketplace/installations/{id}/invoke",
      org_did: root.orgDid,
      status: 200,
    });
    expect(callLine(delegation)).toMatchObject({ operation: "POST /v1/delegation-tokens", status: 201 });

    // None of the secrets, anywhere: as written, without its whsec_ prefix, nor as a hash.
    expect(Object.values(secrets).every((s) => typeof s === "string" && s.length >= 16)).toBe(true);
    const forms = (s: string) => [s, s.replace(/^whsec_/, ""), createHash("sha256").update(s).digest("hex")];
    const found = Object.entries(secrets).filter(([, s]) => forms(s).some((f) => out.includes(f)));
    expect(found.map(([what]) => what)).toEqual([]);
    // At debug, the worker's job runs too (the delivery and the run that use the secrets).
    const jobKinds = new Set(all.filter((l) => l.level === "debug").map((l) => l.kind));
    expect(jobKinds).toContain("webhook.deliver");
    expect(jobKinds).toContain("execution.run");
    // The search looked at a real log: a line per governed call of the journey at least.
    expect(all.filter((l) => typeof l.status === "number").length).toBeGreaterThan(15);
  });
});
