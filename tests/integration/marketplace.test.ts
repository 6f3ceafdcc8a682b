import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { resetConfig } from "@/server/config";
import { database } from "@/server/db/client";
import { reloadCatalogue } from "@/server/marketplace/catalogue";
import { expirePendingInstallations, refreshExpiringTokens } from "@/server/marketplace/tasks";
import { seal, unseal } from "@/server/marketplace/tokenSealing";
import { accessContext, accessTokenFor, refreshContext } from "@/server/marketplace/tokens";
import { apiKey, call, secondOrg, useTestServer } from "./harness";
import { peerConnectorDefinition, startOAuthProvider, type OAuthProviderPeer } from "./peers/oauthProvider";

const ctx = useTestServer();
let peer: OAuthProviderPeer;
const CALLBACK = "http://localhost:3000/v1/marketplace/oauth/callback";

beforeAll(async () => {
  peer = await startOAuthProvider({ redirectUris: [CALLBACK] });
  const dir = mkdtempSync(join(tmpdir(), "svc-connectors-"));
  writeFileSync(join(dir, "loopback-oauth.json"), JSON.stringify(peerConnectorDefinition(peer)));
  // A second definition of a built-in id is left out (the built-in one wins), a broken one too.
  writeFileSync(join(dir, "github.json"), JSON.stringify({ ...peerConnectorDefinition(peer), connector_id: "github" }));
  writeFileSync(join(dir, "broken.json"), "{ not json");
  process.env.SVC_CONNECTORS_DIR = dir;
  process.env.SVC_OUTBOUND_ALLOW = peer.hostPort;
  resetConfig();
  reloadCatalogue();
});
afterAll(async () => {
  await peer.close();
});
afterEach(() => {
  vi.useRealTimers();
});

const api = (method: string, path: string, body?: unknown, token = ctx.root.token) =>
  call(ctx.server.url, method, path, { token, body });
/** The provider's redirect, replayed against the test server (the browser's last hop). */
const callback = (redirectedTo: string) => {
  const u = new URL(redirectedTo);
  return fetch(`${ctx.server.url}${u.pathname}${u.search}`, { redirect: "manual" });
};
const db = async () => (await database()).read;

async function pendingInstall(extra: Record<string, unknown> = {}, token = ctx.root.token) {
  const res = await api(
    "POST",
    "/v1/marketplace/connectors/loopback-oauth/install",
    { deployment_mode: "cloud", config: { workspace: "acme" }, ...extra },
    token,
  );
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as {
    installation_id: string;
    status: string;
    oauth_authorization_url: string;
    oauth_state: string;
    redirect_uri: string;
    expires_at: string;
  };
}

async function activeInstall(token = ctx.root.token) {
  const pending = await pendingInstall({}, token);
  const landed = await peer.authorize(pending.oauth_authorization_url);
  if (!("redirectedTo" in landed)) throw new Error(`provider error page: ${landed.errorPage.slice(0, 300)}`);
  const res = await callback(landed.redirectedTo);
  expect(res.status).toBe(303);
  expect(res.headers.get("location")).toContain("oauth=connected");
  return pending.installation_id;
}

describe("marketplace: the catalogue", () => {
  it("lists the built-in connectors and SVC_CONNECTORS_DIR's, with filters, search and cursors", async () => {
    const all = await api("GET", "/v1/marketplace/connectors?limit=100");
    expect(all.status).toBe(200);
    const ids = all.body.data.map((c: { connector_id: string }) => c.connector_id);
    expect(ids).toEqual(
      expect.arrayContaining(["github", "slack", "linear", "notion", "google-drive", "http-json", "loopback-oauth"]),
    );
    expect(all.body.pagination.total_count).toBe(7);
    const github = all.body.data.find((c: { connector_id: string }) => c.connector_id === "github");
    // The built-in GitHub, not the copy in SVC_CONNECTORS_DIR.
    expect(github).toMatchObject({
      publisher_id: "svc",
      certified: true,
      oauth: { required: true, scopes: ["repo", "read:user"] },
      health_status: "unknown",
      rating_average: null,
    });
    expect(github.icon_url).toMatch(/^http:\/\/localhost:3000\/connectors\/github\.svg$/);

    const only = async (q: string) =>
      (await api("GET", `/v1/marketplace/connectors?${q}`)).body.data.map(
        (c: { connector_id: string }) => c.connector_id,
      );
    expect(await only("pricing_model=freemium")).toEqual(["notion"]);
    expect(await only("certified=false")).toEqual(["loopback-oauth"]);
    expect(await only("deployment_mode=self-hosted")).toEqual(["http-json", "loopback-oauth"]);
    expect(await only("capability=files:read")).toEqual(["google-drive"]);
    expect(await only("q=google%20drive")).toEqual(["google-drive"]);
    expect(await only("q=nothing-matches-this")).toEqual([]);

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { data: { connector_id: string }[]; pagination: { next_cursor: string | null } } } =
        await api("GET", `/v1/marketplace/connectors?limit=3${cursor ? `&cursor=${cursor}` : ""}`);
      seen.push(...page.body.data.map((c) => c.connector_id));
      cursor = page.body.pagination.next_cursor;
    } while (cursor);
    expect(seen).toEqual(ids);

    const bad = await api("GET", "/v1/marketplace/connectors?cursor=forged.cursor");
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatchObject({ field: "cursor", code: "INVALID_CURSOR" });
    const badEnum = await api("GET", "/v1/marketplace/connectors?pricing_model=cheap");
    expect(badEnum.status).toBe(400);
  });

  it("details a connector with live statistics; an unknown one is 404", async () => {
    const res = await api("GET", "/v1/marketplace/connectors/google-drive");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      connector_id: "google-drive",
      publisher: { publisher_id: "svc", verified: true },
      oauth: {
        required: true,
        authorization_url: "https://accounts.google.com/o/oauth2/v2/auth",
        token_url: "https://oauth2.googleapis.com/token",
      },
      statistics: { install_count: 0, rating_average: null, rating_count: 0, invocation_count_30d: 0 },
      health_status: "unknown",
      last_health_check_at: null,
    });
    expect(res.body.long_description).toContain("## Google Drive");
    expect(res.body.actions.map((a: { id: string }) => a.id)).toEqual(["list_files", "get_file"]);
    expect((await api("GET", "/v1/marketplace/connectors/nope")).status).toBe(404);
  });

  it("computes ratings and health from their rows, in the listing and the details", async () => {
    const w = await database();
    const checkedAt = new Date("2026-11-20T10:00:00.000Z");
    await w.writeTx(async (tx) => {
      await tx.connectorRating.createMany({
        data: [4, 5, 5].map((rating, i) => ({
          id: `rat_fig_${i}`,
          connectorId: "notion",
          orgDid: ctx.root.orgDid,
          userId: `u${i}`,
          displayName: `U${i}`,
          rating,
        })),
      });
      await tx.connectorHealth.create({
        data: { connectorId: "notion", status: "degraded", checkedAt, detail: "HTTP 503" },
      });
    });
    const listed = (await api("GET", "/v1/marketplace/connectors?q=notion")).body.data[0];
    expect(listed).toMatchObject({
      connector_id: "notion",
      rating_average: 4.67,
      rating_count: 3,
      health_status: "degraded",
    });
    const details = (await api("GET", "/v1/marketplace/connectors/notion")).body;
    expect(details).toMatchObject({
      statistics: { rating_average: 4.67, rating_count: 3 },
      health_status: "degraded",
      last_health_check_at: checkedAt.toISOString(),
    });
  });
});

describe("marketplace: installing without OAuth", () => {
  it("is active at once, raises connector.installed and counts as an install", async () => {
    const before = (await api("GET", "/v1/marketplace/connectors/http-json")).body.statistics.install_count;
    const res = await api("POST", "/v1/marketplace/connectors/http-json/install", {
      deployment_mode: "self-hosted",
      config: { description: "status page" },
      granted_permissions: ["get_json"],
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ connector_id: "http-json", status: "active" });
    const got = await api("GET", `/v1/marketplace/installations/${res.body.installation_id}`);
    expect(got.body).toMatchObject({
      status: "active",
      deployment_mode: "self-hosted",
      config: { description: "status page" },
      granted_permissions: ["get_json"],
      installed_by: ctx.root.orgDid,
      invocation_count_30d: 0,
      last_invocation_at: null,
      connector: { connector_id: "http-json", name: "HTTP / JSON" },
    });
    const events = await (await db()).event.findMany({ where: { type: "connector.installed" } });
    expect(events.map((e) => (e.payload as { installation_id: string }).installation_id)).toContain(
      res.body.installation_id,
    );
    expect((await api("GET", "/v1/marketplace/connectors/http-json")).body.statistics.install_count).toBe(before + 1);
  });

  it("refuses a config that breaks configuration_schema, naming each field", async () => {
    const res = await api("POST", "/v1/marketplace/connectors/loopback-oauth/install", {
      deployment_mode: "cloud",
      config: { workspace: "Not Valid!", limit: 500, extra: true },
    });
    expect(res.status).toBe(400);
    const byField = Object.fromEntries(res.body.errors.map((e: { field: string; code: string }) => [e.field, e.code]));
    expect(byField).toMatchObject({
      "config.workspace": "INVALID_FORMAT",
      "config.limit": "OUT_OF_RANGE",
      "config.extra": "UNKNOWN_FIELD",
    });
    const missing = await api("POST", "/v1/marketplace/connectors/loopback-oauth/install", {
      deployment_mode: "cloud",
      config: {},
    });
    expect(missing.body.errors).toEqual([
      expect.objectContaining({ field: "config.workspace", code: "REQUIRED_FIELD_MISSING" }),
    ]);
  });

  it("refuses a deployment mode, a permission or a redirect_uri the connector does not have", async () => {
    const mode = await api("POST", "/v1/marketplace/connectors/slack/install", { deployment_mode: "self-hosted" });
    expect(mode.status).toBe(400);
    expect(mode.body.errors[0]).toMatchObject({ field: "deployment_mode", code: "INVALID_ENUM" });
    const perm = await api("POST", "/v1/marketplace/connectors/http-json/install", {
      deployment_mode: "cloud",
      granted_permissions: ["get_json", "drop_database"],
    });
    expect(perm.status).toBe(400);
    expect(perm.body.errors[0]).toMatchObject({ field: "granted_permissions.1", code: "INVALID_VALUE" });
    const redirect = await api("POST", "/v1/marketplace/connectors/loopback-oauth/install", {
      deployment_mode: "cloud",
      config: { workspace: "acme" },
      redirect_uri: "https://attacker.example/steal",
    });
    expect(redirect.status).toBe(400);
    expect(redirect.body.errors[0]).toMatchObject({ field: "redirect_uri", code: "INVALID_VALUE" });
  });

  it("refuses a base URL at a private or metadata address", async () => {
    for (const base_url of ["http://10.0.0.7/api", "http://169.254.169.254/latest", "http://[::1]:8080/"]) {
      const res = await api("POST", "/v1/marketplace/connectors/http-json/install", {
        deployment_mode: "cloud",
        base_url,
      });
      expect(res.status, base_url).toBe(400);
      expect(res.body.errors[0]).toMatchObject({ field: "base_url", code: "INVALID_VALUE" });
    }
  });

  it("says which OAuth client is missing when a connector needs one", async () => {
    const res = await api("POST", "/v1/marketplace/connectors/github/install", { deployment_mode: "cloud" });
    expect(res.status).toBe(409);
    expect(res.body.type).toContain("connector_not_configured");
    expect(res.body.detail).toContain("SVC_CONNECTOR_GITHUB_CLIENT_ID");
  });
});

describe("marketplace: OAuth installs against a real authorization server", () => {
  it("install → consent → callback → active, tokens sealed and never shown", async () => {
    const pending = await pendingInstall();
    expect(pending.status).toBe("pending_oauth");
    expect(pending.redirect_uri).toBe(CALLBACK);
    expect(new Date(pending.expires_at).getTime() - Date.now()).toBeGreaterThan(14 * 60_000);
    const url = new URL(pending.oauth_authorization_url);
    expect(url.origin).toBe(peer.issuer);
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    expect(url.searchParams.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get("state")).toBe(pending.oauth_state);
    expect(url.searchParams.get("scope")).toBe("offline_access read write");
    // Not an installation yet.
    expect((await api("GET", `/v1/marketplace/installations/${pending.installation_id}`)).status).toBe(404);

    const landed = await peer.authorize(pending.oauth_authorization_url);
    expect("redirectedTo" in landed).toBe(true);
    const back = new URL((landed as { redirectedTo: string }).redirectedTo);
    expect(back.searchParams.get("iss")).toBe(peer.issuer);
    const res = await callback(back.toString());
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(
      `http://localhost:3000/marketplace/installations/${pending.installation_id}?oauth=connected`,
    );
    expect(res.headers.get("cache-control")).toBe("no-store");

    const got = await api("GET", `/v1/marketplace/installations/${pending.installation_id}`);
    expect(got.body).toMatchObject({ status: "active", health_status: "healthy", config: { workspace: "acme" } });
    const row = (await (await db()).connectorInstallation.findUnique({ where: { id: pending.installation_id } }))!;
    expect(row.accessTokenSealed).toMatch(/^t1\.derived\./);
    expect(row.refreshTokenSealed).toMatch(/^t1\.derived\./);
    const access = await unseal(row.accessTokenSealed!, accessContext(row.id));
    const refresh = await unseal(row.refreshTokenSealed!, refreshContext(row.id));
    // The token works at the provider's API.
    const me = await fetch(`${peer.apiUrl}/me`, { headers: { authorization: `Bearer ${access}` } });
    expect(await me.json()).toMatchObject({ sub: "ada" });
    // And appears in no answer, no record, no event.
    const answers = JSON.stringify([
      got.body,
      (await api("GET", "/v1/marketplace/installations?limit=100")).body,
      (await api("GET", "/v1/provenance?limit=100")).body,
    ]);
    const events = JSON.stringify(
      await (await db()).event.findMany({ where: { type: "connector.installed" } }),
      (_k, v) => (typeof v === "bigint" ? String(v) : v),
    );
    for (const secret of [access, refresh]) {
      expect(answers).not.toContain(secret);
      expect(events).not.toContain(secret);
    }
    // The callback's record names the installer, with no token in the request.
    const records = await (
      await db()
    ).provenanceRecord.findMany({
      where: { operation: "GET /v1/marketplace/oauth/callback", resourceId: pending.installation_id },
    });
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ actorDid: ctx.root.orgDid, decision: "allowed", status: 303 });
  });

  it("refuses a state used twice; the installation stays active", async () => {
    const pending = await pendingInstall();
    const landed = (await peer.authorize(pending.oauth_authorization_url)) as { redirectedTo: string };
    expect((await callback(landed.redirectedTo)).status).toBe(303);
    const again = await callback(landed.redirectedTo);
    expect(again.status).toBe(400);
    expect(((await again.json()) as { type: string }).type).toContain("oauth_state_invalid");
    expect((await api("GET", `/v1/marketplace/installations/${pending.installation_id}`)).body.status).toBe("active");
  });

  it("refuses an unknown state, and a callback without one", async () => {
    const unknown = await fetch(`${ctx.server.url}/v1/marketplace/oauth/callback?code=abc&state=madeup`, {
      redirect: "manual",
    });
    expect(unknown.status).toBe(400);
    const none = await fetch(`${ctx.server.url}/v1/marketplace/oauth/callback?code=abc`, { redirect: "manual" });
    expect(none.status).toBe(400);
  });

  it("expires a state after 15 minutes (16 on a moved clock): refused, and the install expires", async () => {
    const pending = await pendingInstall();
    const landed = (await peer.authorize(pending.oauth_authorization_url)) as { redirectedTo: string };
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 16 * 60_000 });
    const res = await callback(landed.redirectedTo);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { detail: string }).detail).toContain("15 minutes");
    expect(await expirePendingInstallations(await database())).toBeGreaterThanOrEqual(1);
    const row = await (await db()).connectorInstallation.findUnique({ where: { id: pending.installation_id } });
    expect(row?.status).toBe("expired");
  });

  it("fails the install when the provider's iss is not its issuer (RFC 9207 mix-up)", async () => {
    const pending = await pendingInstall();
    const landed = new URL(
      ((await peer.authorize(pending.oauth_authorization_url)) as { redirectedTo: string }).redirectedTo,
    );
    landed.searchParams.set("iss", "https://evil.example");
    const res = await callback(landed.toString());
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toContain("oauth=failed&reason=issuer_mismatch");
    const row = await (await db()).connectorInstallation.findUnique({ where: { id: pending.installation_id } });
    expect(row).toMatchObject({ status: "expired", accessTokenSealed: null });
  });

  it("fails the install when a provider whose metadata advertises iss leaves it out (RFC 9207, issue 26 item 20)", async () => {
    // oidc-provider's metadata says authorization_response_iss_parameter_supported: true.
    const metadata = await (await fetch(`${peer.issuer}/.well-known/openid-configuration`)).json();
    expect(metadata.authorization_response_iss_parameter_supported).toBe(true);
    const pending = await pendingInstall();
    const landed = new URL(
      ((await peer.authorize(pending.oauth_authorization_url)) as { redirectedTo: string }).redirectedTo,
    );
    expect(landed.searchParams.get("code")).toBeTruthy();
    landed.searchParams.delete("iss");
    const res = await callback(landed.toString());
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toContain("oauth=failed&reason=issuer_missing");
    const row = await (await db()).connectorInstallation.findUnique({ where: { id: pending.installation_id } });
    expect(row).toMatchObject({ status: "expired", accessTokenSealed: null });
  });

  it("fails the install when the PKCE challenge was stripped from the authorization request", async () => {
    const pending = await pendingInstall();
    const url = new URL(pending.oauth_authorization_url);
    url.searchParams.delete("code_challenge");
    url.searchParams.delete("code_challenge_method");
    const landed = (await peer.authorize(url.toString())) as { redirectedTo: string };
    expect(new URL(landed.redirectedTo).searchParams.get("error")).toBe("invalid_request");
    const res = await callback(landed.redirectedTo);
    expect(res.headers.get("location")).toContain("oauth=failed&reason=invalid_request");
  });

  it("fails the install when the code is exchanged with another redirect_uri", async () => {
    const pending = await pendingInstall();
    const landed = (await peer.authorize(pending.oauth_authorization_url)) as { redirectedTo: string };
    const stateHash = (await import("@/server/marketplace/installConnector")).stateHashOf(pending.oauth_state);
    const w = await database();
    await w.writeTx((tx) =>
      tx.connectorOAuthState.update({ where: { stateHash }, data: { redirectUri: "http://localhost:3000/elsewhere" } }),
    );
    const res = await callback(landed.redirectedTo);
    expect(res.headers.get("location")).toContain("oauth=failed&reason=token_exchange_failed");
    const row = await (await db()).connectorInstallation.findUnique({ where: { id: pending.installation_id } });
    expect(row?.healthDetail).toContain("invalid_grant");
  });

  it("fails the install when the person refuses consent", async () => {
    const pending = await pendingInstall();
    const landed = (await peer.authorize(pending.oauth_authorization_url, { deny: true })) as { redirectedTo: string };
    const res = await callback(landed.redirectedTo);
    expect(res.headers.get("location")).toContain("oauth=failed&reason=access_denied");
  });
});

describe("marketplace: tokens stay alive, or say so", () => {
  it("refreshes a token about to expire, rotating the refresh token", async () => {
    const id = await activeInstall();
    const w = await database();
    const before = (await w.read.connectorInstallation.findUnique({ where: { id } }))!;
    const oldAccess = await unseal(before.accessTokenSealed!, accessContext(id));
    const oldRefresh = await unseal(before.refreshTokenSealed!, refreshContext(id));
    await w.writeTx((tx) =>
      tx.connectorInstallation.update({ where: { id }, data: { tokenExpiresAt: new Date(Date.now() + 60_000) } }),
    );
    expect(await refreshExpiringTokens(w)).toBeGreaterThanOrEqual(1);
    const after = (await w.read.connectorInstallation.findUnique({ where: { id } }))!;
    const newAccess = await accessTokenFor(w.read, after);
    expect(newAccess).not.toBe(oldAccess);
    expect(await unseal(after.refreshTokenSealed!, refreshContext(id))).not.toBe(oldRefresh);
    expect(after.tokenExpiresAt!.getTime()).toBeGreaterThan(Date.now() + 30 * 60_000);
    const me = await fetch(`${peer.apiUrl}/me`, { headers: { authorization: `Bearer ${newAccess}` } });
    expect(me.status).toBe(200);
  });

  it("a refresh the provider refuses marks the installation down and raises connector.connection_expired", async () => {
    const id = await activeInstall();
    const w = await database();
    await w.writeTx(async (tx) =>
      tx.connectorInstallation.update({
        where: { id },
        data: {
          refreshTokenSealed: await seal("not-a-refresh-token", refreshContext(id)),
          tokenExpiresAt: new Date(Date.now() - 1000),
        },
      }),
    );
    await refreshExpiringTokens(w);
    const got = await api("GET", `/v1/marketplace/installations/${id}`);
    expect(got.body).toMatchObject({ status: "active", health_status: "down" });
    const events = await w.read.event.findMany({ where: { type: "connector.connection_expired" } });
    expect(events.map((e) => (e.payload as { installation_id: string }).installation_id)).toContain(id);
    const row = (await w.read.connectorInstallation.findUnique({ where: { id } }))!;
    await expect(accessTokenFor(w.read, row)).rejects.toMatchObject({ code: "connector_connection_expired" });
    // A second round does not raise it again.
    await refreshExpiringTokens(w);
    const again = await w.read.event.findMany({ where: { type: "connector.connection_expired" } });
    expect(again.filter((e) => (e.payload as { installation_id: string }).installation_id === id)).toHaveLength(1);
  });
});

describe("marketplace: installations", () => {
  it("PATCH suspends and resumes, checks config again; DELETE is final and revokes at the provider", async () => {
    const id = await activeInstall();
    const suspended = await api("PATCH", `/v1/marketplace/installations/${id}`, { status: "suspended" });
    expect(suspended.status).toBe(200);
    expect(suspended.body.status).toBe("suspended");
    const badConfig = await api("PATCH", `/v1/marketplace/installations/${id}`, { config: { workspace: 7 } });
    expect(badConfig.status).toBe(400);
    expect(badConfig.body.errors[0]).toMatchObject({ field: "config.workspace", code: "INVALID_TYPE" });
    const resumed = await api("PATCH", `/v1/marketplace/installations/${id}`, {
      status: "active",
      config: { workspace: "beta" },
      granted_permissions: ["me"],
    });
    expect(resumed.body).toMatchObject({
      status: "active",
      config: { workspace: "beta" },
      granted_permissions: ["me"],
    });
    const privateBase = await api("PATCH", `/v1/marketplace/installations/${id}`, { base_url: "http://192.168.1.1/" });
    expect(privateBase.status).toBe(400);

    const revokedBefore = peer.revocations.length;
    const sealed = (await (await db()).connectorInstallation.findUnique({ where: { id } }))!;
    const access = await unseal(sealed.accessTokenSealed!, accessContext(id));
    expect((await fetch(`${peer.apiUrl}/me`, { headers: { authorization: `Bearer ${access}` } })).status).toBe(200);
    const removed = await api("DELETE", `/v1/marketplace/installations/${id}`);
    expect(removed.status).toBe(200);
    expect(removed.body.status).toBe("uninstalled");
    expect(peer.revocations.slice(revokedBefore).map((r) => r.token_type_hint)).toEqual([
      "refresh_token",
      "access_token",
    ]);
    // Revoked at the provider: the token no longer opens its API.
    expect((await fetch(`${peer.apiUrl}/me`, { headers: { authorization: `Bearer ${access}` } })).status).toBe(401);
    const row = await (await db()).connectorInstallation.findUnique({ where: { id } });
    expect(row).toMatchObject({ accessTokenSealed: null, refreshTokenSealed: null });
    const patchAfter = await api("PATCH", `/v1/marketplace/installations/${id}`, { status: "active" });
    expect(patchAfter.status).toBe(409);
    expect(patchAfter.body).toMatchObject({ current_state: "uninstalled", requested_state: "active" });
    expect((await api("DELETE", `/v1/marketplace/installations/${id}`)).status).toBe(409);
  });

  it("lists newest first with filters and cursors; another organization sees none of them", async () => {
    const list = await api("GET", "/v1/marketplace/installations?limit=2&connector_id=loopback-oauth");
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(2);
    expect(list.body.pagination.has_more).toBe(true);
    const next = await api(
      "GET",
      `/v1/marketplace/installations?limit=2&connector_id=loopback-oauth&cursor=${list.body.pagination.next_cursor}`,
    );
    const firstIds = list.body.data.map((i: { installation_id: string }) => i.installation_id);
    for (const i of next.body.data) expect(firstIds).not.toContain(i.installation_id);
    const uninstalled = await api("GET", "/v1/marketplace/installations?status=uninstalled");
    expect(uninstalled.body.data.length).toBeGreaterThanOrEqual(1);
    for (const i of uninstalled.body.data) expect(i.status).toBe("uninstalled");

    const other = await secondOrg(ctx.server.url, ctx.root.token, "Marketplace B");
    const otherList = await api("GET", "/v1/marketplace/installations", undefined, other.token);
    expect(otherList.body.data).toEqual([]);
    const mine = firstIds[0];
    expect((await api("GET", `/v1/marketplace/installations/${mine}`, undefined, other.token)).status).toBe(404);
    expect((await api("DELETE", `/v1/marketplace/installations/${mine}`, undefined, other.token)).status).toBe(404);
  });

  it("needs the marketplace capabilities", async () => {
    const reader = await apiKey(["svc_api:marketplace:read"]);
    expect((await api("GET", "/v1/marketplace/connectors", undefined, reader.token)).status).toBe(200);
    const refused = await api(
      "POST",
      "/v1/marketplace/connectors/http-json/install",
      { deployment_mode: "cloud" },
      reader.token,
    );
    expect(refused.status).toBe(403);
    expect(refused.body.missing_capability).toBe("svc_api:marketplace:install");
  });
});

describe("marketplace: sealed tokens", () => {
  it("name their key; old keys still open after a rotation; another context does not open", async () => {
    const derived = await seal("tok-123", "ins_a:access");
    expect(derived.split(".")[1]).toBe("derived");
    const k1 = Buffer.alloc(32, 7).toString("base64");
    const k2 = Buffer.alloc(32, 9).toString("base64");
    try {
      process.env.SVC_ENCRYPTION_KEYS = `k1:${k1}`;
      const underK1 = await seal("tok-456", "ins_a:access");
      expect(underK1.split(".")[1]).toBe("k1");
      expect(await unseal(derived, "ins_a:access")).toBe("tok-123");
      process.env.SVC_ENCRYPTION_KEYS = `k2:${k2},k1:${k1}`;
      expect((await seal("x", "c")).split(".")[1]).toBe("k2");
      expect(await unseal(underK1, "ins_a:access")).toBe("tok-456");
      await expect(unseal(underK1, "ins_b:access")).rejects.toThrow();
      process.env.SVC_ENCRYPTION_KEYS = `k2:${k2}`;
      await expect(unseal(underK1, "ins_a:access")).rejects.toThrow(/k1/);
      process.env.SVC_ENCRYPTION_KEYS = "k3:short";
      await expect(seal("x", "c")).rejects.toThrow(/SVC_ENCRYPTION_KEYS/);
    } finally {
      delete process.env.SVC_ENCRYPTION_KEYS;
    }
  });
});
