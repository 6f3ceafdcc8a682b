// next-auth's framework-free handler, which its Next.js route runs; the package does not export it by name.
import { AuthHandler } from "../../node_modules/next-auth/core/index.js";
import { decode } from "next-auth/jwt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { database } from "@/server/db/client";
import { authenticateSession } from "@/server/identity/authenticate";
import { newId } from "@/server/ids";
import { authOptions, companyProvider } from "@/server/members/nextAuth";
import { mapRole, oidcSettings, type OidcSettings } from "@/server/members/oidcSignIn";
import { roleCapabilities, type Role } from "@/server/members/roles";
import { revokeMember } from "@/server/members/sessions";
import { rootOrgDid } from "@/server/setup/bootstrap";
import { createCaller } from "@/server/appRouter";
import { startOAuthProvider, type OAuthProviderPeer } from "./peers/oauthProvider";

/**
 * Company sign-in end to end, in-process: next-auth's own request handler (next-auth/core, what
 * the console's /api/auth route runs) with svc's OIDC provider, against `oidc-provider` on
 * loopback playing the company's identity provider. The browser's part (cookies, redirects, the
 * provider's login form) is played by the test.
 */
const ORIGIN = "http://localhost:3000";
const SECRET = "oidc-test-nextauth-secret-0123456789";
const groups = new Map<string, string[]>();
let peer: OAuthProviderPeer;
let settings: OidcSettings;

beforeAll(async () => {
  peer = await startOAuthProvider({
    redirectUris: [`${ORIGIN}/api/auth/callback/oidc`],
    tokenEndpointAuthMethod: "client_secret_basic",
    claims: (login) => ({ name: `Person ${login}`, email: `${login}@example.com`, groups: groups.get(login) ?? [] }),
  });
  settings = oidcSettings({
    SVC_OIDC_ISSUER: peer.issuer,
    SVC_OIDC_CLIENT_ID: peer.clientId,
    SVC_OIDC_CLIENT_SECRET: peer.clientSecret,
    SVC_OIDC_NAME: "Example Corp",
    SVC_OIDC_SCOPE: "openid profile email groups",
    SVC_OIDC_ROLE_MAP: "svc-admins:admin,svc-approvers:approver,staff:viewer",
  })!;
});
afterAll(() => peer.close());

type Jar = Map<string, string>;
async function handle(jar: Jar, req: Parameters<typeof AuthHandler>[0]["req"]) {
  const res = await AuthHandler({
    req: { origin: ORIGIN, cookies: Object.fromEntries(jar), headers: {}, query: {}, ...req },
    options: { ...authOptions, secret: SECRET, providers: [companyProvider(settings)] },
  });
  for (const c of res.cookies ?? []) {
    if (c.options?.maxAge === 0 || c.value === "") jar.delete(c.name);
    else jar.set(c.name, c.value);
  }
  return res;
}

/** Signs `login` in through the provider as a browser would; the session's claims, or where next-auth sent it. */
async function signIn(
  login: string,
): Promise<
  | { ok: true; user: { sub: string; role: Role; delegationId: string; orgDid: string; name: string } }
  | { ok: false; redirect: string }
> {
  const jar: Jar = new Map();
  const csrf = await handle(jar, { action: "csrf", method: "GET" });
  const started = await handle(jar, {
    action: "signin",
    providerId: "oidc",
    method: "POST",
    body: { csrfToken: (csrf.body as { csrfToken: string }).csrfToken, callbackUrl: `${ORIGIN}/overview` },
  });
  expect(started.redirect).toMatch(new RegExp(`^${peer.issuer}/auth\\?`));
  const authorize = new URL(started.redirect!);
  expect(authorize.searchParams.get("code_challenge_method")).toBe("S256");
  expect(authorize.searchParams.get("scope")).toBe("openid profile email groups");
  const back = await peer.authorize(started.redirect!, { login });
  if (!("redirectedTo" in back)) throw new Error(`the provider answered ${back.status}`);
  const landing = new URL(back.redirectedTo);
  const done = await handle(jar, {
    action: "callback",
    providerId: "oidc",
    method: "GET",
    query: Object.fromEntries(landing.searchParams),
  });
  const session = jar.get("next-auth.session-token");
  if (!session) return { ok: false, redirect: done.redirect ?? "" };
  expect(done.redirect).toBe(`${ORIGIN}/overview`);
  const token = (await decode({ token: session, secret: SECRET }))!;
  return { ok: true, user: token as never };
}

async function memberOf(did: string) {
  return (await database()).read.member.findUnique({ where: { passportDid: did } });
}

async function delegation(id: string) {
  return (await database()).read.delegation.findUnique({ where: { id } });
}

const consoleCaller = (delegationId: string) =>
  createCaller({
    authorization: null,
    clientAddress: "127.0.0.1",
    requestId: newId("req"),
    authenticate: async () => authenticateSession(await database(), delegationId),
  });

describe("company sign-in (OpenID Connect)", () => {
  it("a first sign-in makes a member with the mapped role and a console session of that role", async () => {
    groups.set("ada", ["engineering", "svc-approvers"]);
    const first = await signIn("ada");
    if (!first.ok) throw new Error(`refused: ${first.redirect}`);
    const { user } = first;
    expect(user).toMatchObject({ role: "approver", name: "Person ada", orgDid: await rootOrgDid(await database()) });
    const member = await memberOf(user.sub);
    expect(member).toMatchObject({ role: "approver", status: "active", displayName: "Person ada" });
    const passport = await (await database()).read.passport.findUnique({ where: { did: user.sub } });
    expect(passport).toMatchObject({ type: "human" });
    const session = await delegation(user.delegationId);
    expect(session).toMatchObject({ kind: "session", delegateDid: user.sub, revokedAt: null });
    expect(session!.capabilities).toEqual(roleCapabilities("approver"));
    // The console session works like a passkey one.
    expect((await consoleCaller(user.delegationId).members.me()).role).toBe("approver");
    const records = await (
      await database()
    ).read.provenanceRecord.count({
      where: { operation: "CONSOLE oidc.member-created", actorDid: user.sub },
    });
    expect(records).toBe(1);
    // The same person signs in again as the same member.
    const again = await signIn("ada");
    expect(again.ok && again.user.sub).toBe(user.sub);
  });

  it("a person signed in this way still needs a passkey for a high-risk decision of the approval inbox", async () => {
    groups.set("dora", ["svc-admins"]);
    groups.set("finn", ["svc-approvers"]);
    const [admin, approver] = [await signIn("dora"), await signIn("finn")];
    if (!admin.ok || !approver.ok) throw new Error("refused");
    const request = await consoleCaller(admin.user.delegationId).approvals.create({
      task_id: "task-oidc",
      agent_id: "agt_external",
      action_description: "Wire 9,000 EUR",
      risk_level: "critical",
      request_data: { amount: 9000 },
    });
    const refused = await consoleCaller(approver.user.delegationId)
      .approvals.respond({ id: request.id, decision: "approve" })
      .catch((e: Error) => e);
    expect(refused).toBeInstanceOf(Error);
    expect(JSON.stringify(refused)).toContain('"step_up":"passkey"');
    expect((refused as Error).message).toMatch(/passkey confirmation/);
    const still = await consoleCaller(admin.user.delegationId).approvals.get({ id: request.id });
    expect(still.status).toBe("pending");
  });

  it("applies the claim's role at each sign-in: a change revokes what the old role held, a removed claim the membership", async () => {
    groups.set("bob", ["svc-admins", "svc-approvers"]);
    const asAdmin = await signIn("bob");
    if (!asAdmin.ok) throw new Error("refused");
    expect(asAdmin.user.role).toBe("admin");

    groups.set("bob", ["staff"]);
    const asViewer = await signIn("bob");
    if (!asViewer.ok) throw new Error("refused");
    expect(asViewer.user).toMatchObject({ sub: asAdmin.user.sub, role: "viewer" });
    expect((await memberOf(asAdmin.user.sub))!.role).toBe("viewer");
    expect((await delegation(asAdmin.user.delegationId))!.revokedAt).not.toBeNull();
    expect((await delegation(asViewer.user.delegationId))!.capabilities).toEqual(roleCapabilities("viewer"));

    groups.set("bob", ["engineering"]);
    const refused = await signIn("bob");
    expect(refused).toEqual({ ok: false, redirect: "/sign-in?error=no_role" });
    expect((await memberOf(asAdmin.user.sub))!.status).toBe("revoked");
    expect((await delegation(asViewer.user.delegationId))!.revokedAt).not.toBeNull();
    await expect(consoleCaller(asViewer.user.delegationId).members.me()).rejects.toThrow();

    groups.set("bob", ["svc-approvers"]);
    const back = await signIn("bob");
    expect(back.ok && back.user).toMatchObject({ sub: asAdmin.user.sub, role: "approver" });
    expect((await memberOf(asAdmin.user.sub))!.status).toBe("active");
  });

  it("refuses a first sign-in without a role, and a person an administrator revoked in the console", async () => {
    groups.set("eve", ["contractors"]);
    expect(await signIn("eve")).toEqual({ ok: false, redirect: "/sign-in?error=no_role" });
    expect(await (await database()).read.oidcIdentity.count({ where: { subject: "eve" } })).toBe(0);

    groups.set("carol", ["staff"]);
    const carol = await signIn("carol");
    if (!carol.ok) throw new Error("refused");
    const db = await database();
    const root = (await rootOrgDid(db))!;
    await db.writeTx((tx) =>
      revokeMember(tx, { orgDid: root, actorDid: root } as Parameters<typeof revokeMember>[1], carol.user.sub),
    );
    groups.set("carol", ["svc-admins"]);
    expect(await signIn("carol")).toEqual({ ok: false, redirect: "/sign-in?error=member_revoked" });
    expect((await memberOf(carol.user.sub))!.status).toBe("revoked");
  });
});

describe("company sign-in settings", () => {
  const base = { SVC_OIDC_ISSUER: "https://idp.example.com/", SVC_OIDC_CLIENT_ID: "svc", SVC_OIDC_CLIENT_SECRET: "s" };

  it("are off without an issuer, and complete or refused with one", () => {
    expect(oidcSettings({})).toBeNull();
    expect(() => oidcSettings({ SVC_OIDC_ISSUER: "https://idp.example.com" })).toThrow(/SVC_OIDC_CLIENT_ID/);
    expect(() => oidcSettings(base)).toThrow(/SVC_OIDC_ROLE_MAP/);
    expect(() => oidcSettings({ ...base, SVC_OIDC_ROLE_MAP: "admins:root" })).toThrow(/admins:root/);
    expect(() => oidcSettings({ ...base, SVC_OIDC_ROLE_MAP: ":admin" })).toThrow(/SVC_OIDC_ROLE_MAP/);
    const s = oidcSettings({ ...base, SVC_OIDC_ROLE_MAP: "urn:acme:svc-admins:admin, *:viewer" })!;
    expect(s).toMatchObject({
      issuer: "https://idp.example.com",
      name: "idp.example.com",
      roleClaim: "groups",
      scope: "openid profile email",
      roleMap: [
        ["urn:acme:svc-admins", "admin"],
        ["*", "viewer"],
      ],
    });
  });

  it("map the highest matching value, else the * entry, else no role", () => {
    const s = oidcSettings({
      ...base,
      SVC_OIDC_ROLE_CLAIM: "roles",
      SVC_OIDC_ROLE_MAP: "viewers:viewer,admins:admin,approvers:approver",
    })!;
    expect(mapRole({ roles: ["viewers", "admins", "approvers"] }, s)).toBe("admin");
    expect(mapRole({ roles: "approvers" }, s)).toBe("approver");
    expect(mapRole({ roles: ["others"] }, s)).toBeNull();
    expect(mapRole({ groups: ["admins"] }, s)).toBeNull();
    expect(mapRole({}, { ...s, roleMap: [...s.roleMap, ["*", "viewer"]] })).toBe("viewer");
  });
});
