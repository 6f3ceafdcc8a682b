import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resetConfig } from "@/server/config";
import { database } from "@/server/db/client";
import { reloadCatalogue } from "@/server/marketplace/catalogue";
import { unseal } from "@/server/marketplace/tokenSealing";
import { accessContext, refreshContext } from "@/server/marketplace/tokens";
import { createLogger, replaceLogger } from "@/server/telemetry/log";
import { call, useTestServer } from "./harness";
import { peerConnectorDefinition, startOAuthProvider, type OAuthProviderPeer } from "./peers/oauthProvider";

/**
 * The whole journey against a real authorization server (oidc-provider on loopback) and its
 * API, which checks the bearer token: install → consent → callback → active → invoke → usage
 * and rating. Every answer svc gave and every line it logged is kept, and searched at the end
 * for the access and refresh tokens: they must appear only in the request to the provider.
 */
process.env.SVC_CONNECTOR_MAX_RESPONSE_BYTES = String(1024 * 1024);

const ctx = useTestServer();
let peer: OAuthProviderPeer;
const CALLBACK = "http://localhost:3000/v1/marketplace/oauth/callback";
const answers: string[] = [];
const logged: string[] = [];
let restoreLogger: ReturnType<typeof replaceLogger>;

beforeAll(async () => {
  peer = await startOAuthProvider({ redirectUris: [CALLBACK] });
  const dir = mkdtempSync(join(tmpdir(), "svc-connectors-"));
  writeFileSync(join(dir, "loopback-oauth.json"), JSON.stringify(peerConnectorDefinition(peer)));
  process.env.SVC_CONNECTORS_DIR = dir;
  process.env.SVC_OUTBOUND_ALLOW = peer.hostPort;
  resetConfig();
  reloadCatalogue();
  // The server's log is this process's logger: keep every line, at debug (and still print it).
  const capture = createLogger(
    { level: "debug", format: "json", fd: 1 },
    {
      write: (line: string) => void (logged.push(line), process.stdout.write(line)),
    },
  );
  restoreLogger = replaceLogger(capture);
});
afterAll(async () => {
  replaceLogger(restoreLogger);
  await peer.close();
});

async function api(method: string, path: string, body?: unknown) {
  const res = await call(ctx.server.url, method, path, { token: ctx.root.token, body });
  answers.push(JSON.stringify(res.body ?? null), JSON.stringify([...res.headers]));
  return res;
}

describe("a connector with OAuth, end to end", () => {
  it("install → consent → callback → invoke → usage and rating; the tokens appear in no answer, record or log line", async () => {
    const pending = await api("POST", "/v1/marketplace/connectors/loopback-oauth/install", {
      deployment_mode: "cloud",
      config: { workspace: "acme" },
    });
    expect(pending.status, JSON.stringify(pending.body)).toBe(201);
    expect(pending.body.status).toBe("pending_oauth");
    const landed = await peer.authorize(pending.body.oauth_authorization_url);
    if (!("redirectedTo" in landed)) throw new Error(`provider error page: ${landed.errorPage.slice(0, 300)}`);
    const u = new URL(landed.redirectedTo);
    const back = await fetch(`${ctx.server.url}${u.pathname}${u.search}`, { redirect: "manual" });
    answers.push(await back.text(), JSON.stringify([...back.headers]));
    expect(back.status).toBe(303);
    const id = pending.body.installation_id as string;

    const db = await database();
    const row = await db.read.connectorInstallation.findUniqueOrThrow({ where: { id } });
    expect(row.status).toBe("active");
    const accessToken = await unseal(row.accessTokenSealed!, accessContext(id));
    const refreshToken = row.refreshTokenSealed ? await unseal(row.refreshTokenSealed, refreshContext(id)) : null;
    expect(accessToken.length).toBeGreaterThan(10);

    const me = await api("POST", `/v1/marketplace/installations/${id}/invoke`, { action: "me", input: {} });
    expect(me.status, JSON.stringify(me.body)).toBe(200);
    expect(me.body).toMatchObject({ status_code: 200, successful: true, result: { sub: expect.any(String) } });
    // The provider's API saw the token, as a bearer token, on the invocation.
    expect(peer.apiRequests.at(-1)).toMatchObject({ path: "/api/me", authorization: `Bearer ${accessToken}` });

    const echo = await api("POST", `/v1/marketplace/installations/${id}/invoke`, {
      action: "echo",
      input: { message: "hello" },
    });
    expect(echo.body).toMatchObject({ status_code: 200, successful: true });

    const big = await api("POST", `/v1/marketplace/installations/${id}/invoke`, { action: "big", input: { mb: 50 } });
    expect(big.status).toBe(200);
    expect(big.body).toMatchObject({ successful: false, result: null, error: { code: "connector_answer_too_large" } });

    const usage = await api("GET", `/v1/marketplace/installations/${id}/usage`);
    expect(usage.body.statistics).toMatchObject({
      total_invocations: 3,
      successful_invocations: 2,
      failed_invocations: 1,
    });
    const rated = await api("POST", "/v1/marketplace/connectors/loopback-oauth/ratings", {
      rating: 5,
      review_text: "Works with the real thing",
    });
    expect(rated.status).toBe(201);
    await api("GET", `/v1/marketplace/installations/${id}`);
    await api("GET", "/v1/marketplace/installations");
    await api("GET", "/v1/marketplace/connectors/loopback-oauth");
    await api("GET", "/v1/marketplace/connectors/loopback-oauth/ratings");
    await api("GET", "/v1/provenance/records?limit=100");
    await api("GET", "/v1/events?limit=100");

    const records = await db.read.provenanceRecord.findMany({ where: { orgDid: ctx.root.orgDid } });
    const invocations = await db.read.connectorInvocation.findMany({ where: { installationId: id } });
    const events = await db.read.event.findMany({ where: { orgDid: ctx.root.orgDid } });
    const stored = JSON.stringify([records, invocations, events], (_k, v) => (typeof v === "bigint" ? String(v) : v));
    for (const token of [accessToken, refreshToken].filter((t): t is string => !!t)) {
      expect(answers.filter((a) => a.includes(token))).toEqual([]);
      expect(logged.filter((l) => l.includes(token))).toEqual([]);
      expect(stored.includes(token)).toBe(false);
    }
    expect(answers.length).toBeGreaterThan(20);
    // The search above saw the log: a line for each governed call at least.
    expect(
      logged.filter((l) => l.includes('"operation":"POST /v1/marketplace/installations/{id}/invoke"')).length,
    ).toBeGreaterThan(0);
  });
});
