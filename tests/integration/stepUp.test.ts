// next-auth's framework-free handler and its Response conversion, which its Next.js route runs; the
// package does not export them by name.
import { AuthHandler } from "../../node_modules/next-auth/core/index.js";
import { toResponse } from "../../node_modules/next-auth/next/utils.js";
import { decode } from "next-auth/jwt";
import { describe, expect, it } from "vitest";
import { database } from "@/server/db/client";
import { authenticateSession } from "@/server/identity/authenticate";
import { newId } from "@/server/ids";
import { authOptions } from "@/server/members/nextAuth";
import { authenticationOptions, completeRegistration, registrationOptions } from "@/server/members/passkeys";
import type { Role } from "@/server/members/roles";
import { withSessionReplacement } from "@/server/members/sessionReplacement";
import { createInvite } from "@/server/members/sessions";
import { rootOrgDid } from "@/server/setup/bootstrap";
import { createCaller } from "@/server/appRouter";
import { call, ed25519Jwk, useTestServer } from "./harness";
import { softAuthenticator } from "./softAuthenticator";

/**
 * Issue 26 items 8 and 9: a console step-up is the passkey assertion made in the deciding session
 * (never the same person's sign-in in another browser); a sign-in replaces the session its browser
 * held; and a console session mints a key (or token) that can decide approvals only with such a
 * fresh assertion of its own. Sign-ins go through next-auth's own handler behind the console's
 * /api/auth route wrapper, with a software authenticator; browsers are cookie jars.
 */
const ctx = useTestServer();
const ORIGIN = "http://localhost:3000";
process.env.NEXTAUTH_SECRET ||= "step-up-test-nextauth-secret-0123456789";
const COOKIE = "next-auth.session-token";

/** The console's /api/auth route: next-auth's core as its Next.js route handler calls it, in the console's wrapper. */
const authRoute = withSessionReplacement(async (request: Request, _context: unknown) => {
  const url = new URL(request.url);
  const [action, providerId] = url.pathname.replace("/api/auth/", "").split("/");
  const cookies = Object.fromEntries(
    (request.headers.get("cookie") ?? "")
      .split("; ")
      .filter(Boolean)
      .map((c) => [c.slice(0, c.indexOf("=")), decodeURIComponent(c.slice(c.indexOf("=") + 1))]),
  );
  authOptions.secret ??= process.env.NEXTAUTH_SECRET;
  const internal = await AuthHandler({
    req: {
      origin: ORIGIN,
      body: request.method === "POST" ? Object.fromEntries(new URLSearchParams(await request.text())) : undefined,
      query: Object.fromEntries(url.searchParams),
      cookies,
      headers: Object.fromEntries(request.headers),
      method: request.method,
      action: action as never,
      providerId,
    },
    options: authOptions,
  });
  return toResponse(internal as never);
});

/** A browser: a cookie jar in front of the auth route. */
function browser() {
  const jar = new Map<string, string>();
  const fetch = async (path: string, init: { method?: string; form?: Record<string, string> } = {}) => {
    const headers = new Headers({ cookie: [...jar].map(([n, v]) => `${n}=${v}`).join("; ") });
    if (init.form) headers.set("content-type", "application/x-www-form-urlencoded");
    const res = await authRoute(
      new Request(`${ORIGIN}${path}`, {
        method: init.method ?? "GET",
        headers,
        body: init.form ? new URLSearchParams(init.form).toString() : undefined,
      }),
      undefined,
    );
    for (const c of res.headers.getSetCookie()) {
      const [pair, ...attrs] = c.split(";");
      const [name, value] = [pair!.slice(0, pair!.indexOf("=")), pair!.slice(pair!.indexOf("=") + 1)];
      if (value === "" || attrs.some((a) => /^\s*max-age=0$/i.test(a))) jar.delete(name);
      else jar.set(name, value);
    }
    return res;
  };
  return {
    /** Signs in with the device's passkey, as the sign-in page and the inbox's "Confirm with passkey" do; the session's delegation id. */
    async signIn(device: ReturnType<typeof softAuthenticator>): Promise<string> {
      const csrf = (await (await fetch("/api/auth/csrf")).json()) as { csrfToken: string };
      const { challengeId, options } = await authenticationOptions(await database());
      const res = await fetch("/api/auth/callback/passkey", {
        method: "POST",
        form: {
          csrfToken: csrf.csrfToken,
          challengeId,
          response: JSON.stringify(device.assert(options.challenge)),
          callbackUrl: `${ORIGIN}/approvals`,
        },
      });
      expect(res.status, await res.text()).toBe(302);
      const token = await decode({ token: jar.get(COOKIE)!, secret: process.env.NEXTAUTH_SECRET! });
      return token!.delegationId as string;
    },
  };
}

/** A new member with a passkey on `device`. */
async function person(role: Role) {
  const db = await database();
  const link = await db.writeTx(async (tx) => createInvite(tx, (await rootOrgDid(db))!, role, null, "invite", 1));
  const device = softAuthenticator();
  const { challengeId, options } = await registrationOptions(db, new URL(link.link).searchParams.get("token")!, role);
  const { did } = await completeRegistration(db, challengeId, device.register(options.challenge) as never);
  return { did, device };
}

/** Ten minutes pass for a session's passkey assertion and its passkey's last use (the 5-minute window is behind them). */
async function age(delegationId: string) {
  const db = await database();
  const tenMinutesAgo = new Date(Date.now() - 10 * 60_000);
  await db.writeTx(async (tx) => {
    const session = await tx.delegation.update({
      where: { id: delegationId },
      data: { passkeyAssertedAt: tenMinutesAgo },
    });
    await tx.webAuthnCredential.updateMany({
      where: { passportDid: session.delegateDid },
      data: { lastUsedAt: tenMinutesAgo },
    });
  });
}

const consoleCaller = (delegationId: string) =>
  createCaller({
    authorization: null,
    clientAddress: "127.0.0.1",
    requestId: newId("req"),
    authenticate: async () => authenticateSession(await database(), delegationId),
  });

/** The problem a refused tRPC call carries. */
const problemOf = (e: unknown) => (e as { cause?: { code?: string; extra?: Record<string, unknown> } }).cause;

/** A requester of its own (not the organization, whose API keys decide here). */
let requesterToken: Promise<string> | undefined;
async function requester(): Promise<string> {
  const passport = await call(ctx.server.url, "POST", "/v1/passports", {
    token: ctx.root.token,
    body: { type: "organization", name: "requester", public_key: ed25519Jwk() },
  });
  const token = await call(ctx.server.url, "POST", "/v1/delegation-tokens", {
    token: ctx.root.token,
    body: { delegate_did: passport.body.did, capabilities: ["svc_api:approvals:write"], duration_seconds: 1800 },
  });
  expect(token.status, JSON.stringify(token.body)).toBe(201);
  return token.body.token as string;
}

async function criticalRequest(): Promise<string> {
  const res = await call(ctx.server.url, "POST", "/v1/approvals", {
    token: await (requesterToken ??= requester()),
    body: {
      task_id: newId("task"),
      agent_id: "agt_external",
      action_description: "Wire 20,000 EUR to a new supplier",
      risk_level: "critical",
      request_data: { amount: 20000 },
    },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id as string;
}

describe("the passkey step-up belongs to the session (issue 26 item 8)", () => {
  it("a stale session stays refused after its person signs in with their passkey in another browser; that browser's session decides", async () => {
    const approver = await person("approver");
    const stale = await browser().signIn(approver.device);
    await age(stale);
    const id = await criticalRequest();
    const first = await consoleCaller(stale)
      .approvals.respond({ id, decision: "approve" })
      .catch((e: unknown) => e);
    expect(problemOf(first)).toMatchObject({ code: "approval_step_up_required", extra: { step_up: "passkey" } });

    const elsewhere = await browser().signIn(approver.device);
    const again = await consoleCaller(stale)
      .approvals.respond({ id, decision: "approve" })
      .catch((e: unknown) => e);
    expect(problemOf(again)).toMatchObject({ code: "approval_step_up_required", extra: { step_up: "passkey" } });
    expect((await consoleCaller(stale).approvals.get({ id })).status).toBe("pending");

    const decided = await consoleCaller(elsewhere).approvals.respond({ id, decision: "approve" });
    expect(decided).toMatchObject({ status: "approved", step_up: "passkey", responded_by: approver.did });
  });

  it("signing in again in the same browser ends the session it replaces, at once; another browser's session stays", async () => {
    const approver = await person("approver");
    const mine = browser();
    const before = await mine.signIn(approver.device);
    const other = await browser().signIn(approver.device);
    const after = await mine.signIn(approver.device);
    expect(after).not.toBe(before);
    const db = await database();
    await expect(authenticateSession(db, before)).rejects.toMatchObject({ status: 401 });
    expect(await db.read.revocation.findUnique({ where: { delegationId: before } })).toMatchObject({
      reason: "replaced by a new sign-in",
      revokedBy: approver.did,
    });
    expect(
      await db.read.provenanceRecord.count({ where: { operation: "CONSOLE session.end", resourceId: before } }),
    ).toBe(1);
    expect((await authenticateSession(db, after)).actorDid).toBe(approver.did);
    expect((await authenticateSession(db, other)).actorDid).toBe(approver.did);
    // The new session carries its own assertion: it decides a critical request.
    const id = await criticalRequest();
    expect(await consoleCaller(after).approvals.respond({ id, decision: "reject" })).toMatchObject({
      status: "rejected",
      step_up: "passkey",
    });
  });
});

describe("minting a key that can decide approvals needs a fresh passkey in the session (issue 26 item 9)", () => {
  it("a session with a stale passkey mints no key, delegation token or session token that can decide; other keys it mints", async () => {
    const admin = await person("admin");
    const session = await browser().signIn(admin.device);
    await age(session);
    const trpc = consoleCaller(session);
    const orgDid = (await rootOrgDid(await database()))!;
    const before = await (await database()).read.delegation.count({ where: { parentId: { not: null } } });
    for (const capabilities of [
      ["svc_api:approvals:respond"],
      ["svc_api:approvals:*", "svc_api:passports:read"],
      ["svc_api:*"],
      ["svc_api:learning:decide"],
    ]) {
      const refused = await trpc.identity.apiKeys
        .create({ name: "decider", capabilities, days: 1 })
        .catch((e: unknown) => e);
      expect(problemOf(refused), capabilities.join()).toMatchObject({
        code: "passkey_step_up_required",
        extra: { step_up: "passkey", capabilities: capabilities.filter((c) => c !== "svc_api:passports:read") },
      });
    }
    const token = await trpc.identity.delegations
      .issue({ delegate_did: orgDid, capabilities: ["svc_api:approvals:respond"], duration_seconds: 600 })
      .catch((e: unknown) => e);
    expect(problemOf(token)).toMatchObject({ code: "passkey_step_up_required" });
    const exchanged = await trpc.identity.sessions
      .exchange({ capabilities: ["svc_api:approvals:respond", "svc_api:delegations:write"] })
      .catch((e: unknown) => e);
    expect(problemOf(exchanged)).toMatchObject({ code: "passkey_step_up_required" });
    expect(await (await database()).read.delegation.count({ where: { parentId: { not: null } } })).toBe(before);

    const reader = await trpc.identity.apiKeys.create({
      name: "reader",
      capabilities: ["svc_api:passports:read"],
      days: 1,
    });
    expect(reader.token).toBeTruthy();
  });

  it("with a fresh passkey in the session the key is minted, names its minter, and decides a critical request through /v1", async () => {
    const admin = await person("admin");
    const session = await browser().signIn(admin.device);
    const key = await consoleCaller(session).identity.apiKeys.create({
      name: "decider",
      capabilities: ["svc_api:approvals:respond", "svc_api:approvals:read"],
      days: 1,
    });
    const row = await (await database()).read.delegation.findUnique({ where: { id: key.delegation_id } });
    expect(row).toMatchObject({ kind: "api_key", mintedByDid: admin.did, grantorDid: admin.did });
    const id = await criticalRequest();
    const decided = await call(ctx.server.url, "POST", `/v1/approvals/${id}/respond`, {
      token: key.token,
      body: { decision: "approve" },
    });
    expect(decided.status, JSON.stringify(decided.body)).toBe(200);
    expect(decided.body.step_up).toBe("non_agent_delegation");
  });
});
