import { generateKeyPairSync } from "node:crypto";
import type { Database } from "../db/client";
import type { Member } from "../db/generated/sqlite/client";
import { didKeyFromJwk } from "../identity/didKey";
import type { PublicKeyJwk } from "../identity/didKey";
import { appendInTransaction } from "../provenance/appendProvenance";
import { rootOrgDidOf } from "../setup/rootOrg";
import { ROLES, type Role } from "./roles";
import { consoleEntry } from "../governance/consoleEntry";
import { recordConsoleEvent, revokeGrantsOf } from "./sessions";

/**
 * Company sign-in: the console signs people in through the company's OpenID Connect provider
 * (next-auth's OAuth provider, server/members/nextAuth.ts) besides passkeys. The provider's claim
 * `SVC_OIDC_ROLE_CLAIM` (default `groups`) maps to a console role through `SVC_OIDC_ROLE_MAP`
 * (`value:role,…`, `*` for anyone the provider signs in); the provider stays the source of truth:
 * every sign-in applies the role it maps to now. A person signed in this way has no passkey, so
 * the approval inbox's step-up (a passkey assertion) stays out of their reach until they have one.
 */
export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** What the sign-in page's button says: "Sign in with <name>". */
  name: string;
  roleClaim: string;
  /** The scopes asked for (SVC_OIDC_SCOPE, default `openid profile email`): add the one that carries the role claim if the provider needs it. */
  scope: string;
  /** Claim value → role, in the order given; `*` matches anyone. */
  roleMap: [string, Role][];
}

const RANK: Record<Role, number> = { viewer: 1, approver: 2, admin: 3 };

/** The settings from the environment, or null when SVC_OIDC_ISSUER is unset; throws on a bad value. */
export function oidcSettings(env: Record<string, string | undefined> = process.env): OidcSettings | null {
  const issuer = env.SVC_OIDC_ISSUER?.trim().replace(/\/+$/, "");
  if (!issuer) return null;
  if (!/^https?:\/\//.test(issuer))
    throw new Error(`SVC_OIDC_ISSUER must be an http(s) URL, got ${JSON.stringify(issuer)}`);
  const clientId = env.SVC_OIDC_CLIENT_ID?.trim();
  const clientSecret = env.SVC_OIDC_CLIENT_SECRET;
  if (!clientId || !clientSecret)
    throw new Error("SVC_OIDC_ISSUER needs SVC_OIDC_CLIENT_ID and SVC_OIDC_CLIENT_SECRET");
  const rawMap = env.SVC_OIDC_ROLE_MAP?.trim();
  if (!rawMap)
    throw new Error(
      "SVC_OIDC_ISSUER needs SVC_OIDC_ROLE_MAP, the claim values that give a console role (e.g. svc-admins:admin,svc-approvers:approver,*:viewer)",
    );
  const roleMap = rawMap.split(",").map((entry): [string, Role] => {
    const at = entry.lastIndexOf(":");
    const value = entry.slice(0, at).trim();
    const role = entry.slice(at + 1).trim() as Role;
    if (at <= 0 || !value || !ROLES.includes(role))
      throw new Error(
        `SVC_OIDC_ROLE_MAP: ${JSON.stringify(entry)} is not <claim value>:<${ROLES.join("|")}> (use * for anyone)`,
      );
    return [value, role];
  });
  return {
    issuer,
    clientId,
    clientSecret,
    name: env.SVC_OIDC_NAME?.trim() || new URL(issuer).hostname,
    roleClaim: env.SVC_OIDC_ROLE_CLAIM?.trim() || "groups",
    scope: env.SVC_OIDC_SCOPE?.trim() || "openid profile email",
    roleMap,
  };
}

/** The role the claims map to: the highest of the matching values, else the `*` entry's, else none. */
export function mapRole(claims: Record<string, unknown>, settings: OidcSettings): Role | null {
  const raw = claims[settings.roleClaim];
  const values = new Set(
    (Array.isArray(raw) ? raw : raw === undefined || raw === null ? [] : [raw]).filter(
      (v): v is string => typeof v === "string",
    ),
  );
  let best: Role | null = null;
  for (const [value, role] of settings.roleMap)
    if (value !== "*" && values.has(value) && (!best || RANK[role] > RANK[best])) best = role;
  return best ?? settings.roleMap.find(([value]) => value === "*")?.[1] ?? null;
}

/** A sign-in the provider vouched for but svc refuses (no role, or revoked in the console). */
export class OidcSignInRefused extends Error {
  constructor(
    message: string,
    readonly code: "no_role" | "member_revoked",
  ) {
    super(message);
    this.name = "OidcSignInRefused";
  }
}

/** A passport key for a person who signs in through the provider: the private half is discarded. */
function humanPassportKey(): { did: string; jwk: PublicKeyJwk } {
  const jwk = generateKeyPairSync("ed25519").publicKey.export({ format: "jwk" }) as PublicKeyJwk;
  return { did: didKeyFromJwk(jwk), jwk };
}

/**
 * Applies a sign-in the provider vouched for (`claims` from its verified ID token or userinfo):
 * the first makes a human passport and a member of the root organization with the mapped role;
 * later ones apply the role mapped now (a changed role revokes what the person held under the
 * old one; no role revokes the membership until a claim gives one again). Returns the active
 * member, or throws OidcSignInRefused. A member revoked in the console stays revoked.
 */
export async function signInWithOidc(
  db: Database,
  settings: OidcSettings,
  claims: Record<string, unknown>,
): Promise<Member> {
  const subject = claims.sub;
  if (typeof subject !== "string" || subject === "")
    throw new OidcSignInRefused("The provider gave no subject.", "no_role");
  const orgDid = (await rootOrgDidOf(db))!;
  const role = mapRole(claims, settings);
  const name =
    (typeof claims.name === "string" && claims.name) ||
    (typeof claims.email === "string" && claims.email) ||
    (typeof claims.preferred_username === "string" && claims.preferred_username) ||
    subject;
  const email = typeof claims.email === "string" ? claims.email : null;
  const now = new Date();
  const outcome = await db.writeTx(async (tx) => {
    const where = { issuer_subject: { issuer: settings.issuer, subject } };
    const link = await tx.oidcIdentity.findUnique({ where });
    const record = (operation: string, actor: string | null, status: number, decision: "allowed" | "denied") =>
      appendInTransaction(
        tx,
        db.engine,
        consoleEntry(operation, orgDid, actor, null, status, decision, "member", actor),
      );
    if (!link) {
      if (!role) return { refused: "no_role" as const };
      const { did, jwk } = humanPassportKey();
      await tx.passport.create({ data: { did, type: "human", name, orgDid, publicKeyJwk: jwk as object } });
      const member = await tx.member.create({
        data: { passportDid: did, orgDid, role, displayName: name, invitedBy: null },
      });
      await tx.oidcIdentity.create({
        data: { issuer: settings.issuer, subject, passportDid: did, email, lastSignInAt: now },
      });
      await record("CONSOLE oidc.member-created", did, 201, "allowed");
      return { member };
    }
    const member = (await tx.member.findUnique({ where: { passportDid: link.passportDid } }))!;
    if (member.status !== "active" && !link.roleRemovedAt) return { refused: "member_revoked" as const };
    if (!role) {
      if (member.status === "active") {
        await tx.member.update({ where: { passportDid: member.passportDid }, data: { status: "revoked" } });
        await revokeGrantsOf(tx, orgDid, member.passportDid, orgDid, "role claim removed at the identity provider");
        await tx.oidcIdentity.update({ where, data: { roleRemovedAt: now, lastSignInAt: now } });
        await record("CONSOLE oidc.role-removed", member.passportDid, 200, "allowed");
      }
      return { refused: "no_role" as const };
    }
    if (member.role !== role || member.status !== "active") {
      // What they held under the old role (standing grant, sessions, API keys) goes with it.
      if (member.status === "active")
        await revokeGrantsOf(tx, orgDid, member.passportDid, orgDid, "role changed at the identity provider");
      await record("CONSOLE oidc.role-changed", member.passportDid, 200, "allowed");
    }
    const updated = await tx.member.update({
      where: { passportDid: member.passportDid },
      data: { role, status: "active", displayName: name },
    });
    await tx.oidcIdentity.update({ where, data: { roleRemovedAt: null, lastSignInAt: now, email } });
    return { member: updated };
  });
  if (outcome.member) return outcome.member;
  await recordConsoleEvent(db, "CONSOLE oidc.sign-in", orgDid, null, null, 403, "denied");
  throw outcome.refused === "no_role"
    ? new OidcSignInRefused(
        `Your account at ${settings.name} carries no ${settings.roleClaim} value that gives a console role.`,
        "no_role",
      )
    : new OidcSignInRefused("This person's access has been revoked.", "member_revoked");
}
