import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resetConfig } from "@/server/config";
import { database } from "@/server/db/client";
import { flushClosedWindows } from "@/server/governance/anonymousRefusals";
import { bindRouteWithSession } from "@/server/marketplace/browserBinding";
import { reloadCatalogue } from "@/server/marketplace/catalogue";
import { call, useTestServer } from "./harness";
import { consoleMember } from "./consoleMembers";
import { peerConnectorDefinition, startOAuthProvider, type OAuthProviderPeer } from "./peers/oauthProvider";

/**
 * RFC 9700 §4.7: an authorization started in the console completes only in the browser that
 * started it (a cookie set by the console's bind call, checked at the callback); one started
 * through /v1 keeps its binding to the installer alone.
 */
const ctx = useTestServer();
let peer: OAuthProviderPeer;
const CALLBACK = "http://localhost:3000/v1/marketplace/oauth/callback";

beforeAll(async () => {
  peer = await startOAuthProvider({ redirectUris: [CALLBACK] });
  const dir = mkdtempSync(join(tmpdir(), "svc-connectors-"));
  writeFileSync(join(dir, "loopback-oauth.json"), JSON.stringify(peerConnectorDefinition(peer)));
  process.env.SVC_CONNECTORS_DIR = dir;
  process.env.SVC_OUTBOUND_ALLOW = peer.hostPort;
  resetConfig();
  reloadCatalogue();
});
afterAll(async () => {
  await peer.close();
});

/** The provider's redirect back to svc, after login and consent, as a path on the test server. */
async function consent(authorizationUrl: string): Promise<string> {
  const landed = await peer.authorize(authorizationUrl);
  if (!("redirectedTo" in landed)) throw new Error(`provider error page: ${landed.errorPage.slice(0, 300)}`);
  const u = new URL(landed.redirectedTo);
  return `${ctx.server.url}${u.pathname}${u.search}`;
}
const callback = (url: string, cookie?: string) =>
  fetch(url, { redirect: "manual", headers: cookie ? { cookie } : {} });
const bind = (delegationId: string, state: string, headers: Record<string, string> = {}) =>
  bindRouteWithSession(async () => ({ delegationId }))(
    new Request("http://127.0.0.1/api/marketplace/oauth/bind", {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify({ state }),
    }),
  );

describe("the OAuth callback is bound to the browser that started a console install", () => {
  it("refuses the callback without the binding cookie, or with another browser's, and completes with it", async () => {
    const admin = await consoleMember("admin");
    const pending = (await admin.caller.marketplace.install({
      id: "loopback-oauth",
      deployment_mode: "cloud",
      config: { workspace: "acme" },
    } as never)) as { status: string; oauth_state: string; oauth_authorization_url: string; installation_id: string };
    expect(pending.status).toBe("pending_oauth");
    const db = await database();

    // Not bound yet: the console binds before sending the browser away, so a callback now is refused.
    const url = await consent(pending.oauth_authorization_url);
    const unbound = await callback(url);
    expect(unbound.status).toBe(400);
    const problem = (await unbound.json()) as { type: string; detail: string };
    expect(problem.type).toContain("oauth_state_invalid");
    expect(problem.detail).toMatch(/started in the console/);

    // Someone else cannot bind it to their browser; a cross-site bind is refused.
    const other = await consoleMember("admin");
    expect((await bind(other.delegationId, pending.oauth_state)).status).toBe(400);
    expect((await bind(admin.delegationId, pending.oauth_state, { "sec-fetch-site": "cross-site" })).status).toBe(403);

    // The installer's browser gets the cookie (HttpOnly, Lax, the callback's path only); a second bind loses.
    const bound = await bind(admin.delegationId, pending.oauth_state);
    expect(bound.status).toBe(204);
    const setCookie = bound.headers.get("set-cookie")!;
    expect(setCookie).toMatch(
      /^svc_oauth_\w+=[\w-]{43}; Path=\/v1\/marketplace\/oauth\/callback; Max-Age=\d+; HttpOnly; SameSite=Lax/,
    );
    const cookie = setCookie.split(";")[0]!;
    expect((await bind(admin.delegationId, pending.oauth_state)).status).toBe(400);
    const stored = await db.read.connectorOAuthState.findFirstOrThrow({
      where: { installationId: pending.installation_id },
    });
    expect(stored.browserBinding).not.toContain(cookie.split("=")[1]!);

    // Another browser (no cookie, or a cookie of its own) is refused, and the state is not spent.
    expect((await callback(url)).status).toBe(400);
    const [name] = cookie.split("=");
    expect((await callback(url, `${name}=${"A".repeat(43)}`)).status).toBe(400);
    expect(
      (await db.read.connectorOAuthState.findFirstOrThrow({ where: { installationId: pending.installation_id } }))
        .usedAt,
    ).toBeNull();

    // The browser that started it completes it.
    const done = await callback(url, `other=1; ${cookie}`);
    expect(done.status).toBe(303);
    expect(done.headers.get("location")).toContain("oauth=connected");
    const row = await db.read.connectorInstallation.findUniqueOrThrow({ where: { id: pending.installation_id } });
    expect(row.status).toBe("active");
    // Each refused callback is in the ledger, like any refusal: no caller was identified, so the
    // first of a minute has its own record and the others are counted in the minute's
    // refusal_window record (server/governance/anonymousRefusals.ts), written once it has closed.
    await flushClosedWindows(Date.now() + 60_000);
    const denied = await db.read.provenanceRecord.findMany({
      where: { operation: "GET /v1/marketplace/oauth/callback", decision: "denied" },
    });
    const windows = denied.filter((r) => r.resourceType === "refusal_window");
    const counted = windows.reduce((sum, r) => sum + Number(r.resourceId!.split("/").at(-1)), 0);
    expect(denied.length - 2 * windows.length + counted).toBeGreaterThanOrEqual(3);
  });

  it("an install through /v1 keeps its binding to the installer alone: no cookie is needed", async () => {
    const pending = await call(ctx.server.url, "POST", "/v1/marketplace/connectors/loopback-oauth/install", {
      token: ctx.root.token,
      body: { deployment_mode: "cloud", config: { workspace: "acme" } },
    });
    expect(pending.status).toBe(201);
    // And it cannot be bound to a browser by the console.
    const admin = await consoleMember("admin");
    expect((await bind(admin.delegationId, pending.body.oauth_state)).status).toBe(400);
    const done = await callback(await consent(pending.body.oauth_authorization_url));
    expect(done.status).toBe(303);
    expect(done.headers.get("location")).toContain("oauth=connected");
  });
});
