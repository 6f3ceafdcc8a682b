import type { AuthenticationResponseJSON } from "@simplewebauthn/server";
import { rootOrgDidOf } from "../setup/rootOrg";
import type { NextAuthOptions } from "next-auth";
import CredentialsModule from "next-auth/providers/credentials";
import type { OAuthConfig } from "next-auth/providers/oauth";
import { z } from "zod";
import { database } from "../db/client";
import { DomainError } from "../errors";
import { OidcSignInRefused, oidcSettings, signInWithOidc, type OidcSettings } from "./oidcSignIn";
import { verifyAssertion } from "./passkeys";
import { SESSION_SECONDS } from "./roles";
import { endConsoleSession, recordConsoleEvent, startConsoleSession } from "./sessions";

/**
 * next-auth for the console: one provider, a passkey assertion verified by
 * server/members/passkeys.ts. The session (an encrypted JWT cookie) carries only the person's
 * passport DID, role and session delegation id; every tRPC call re-checks that delegation.
 */
// next-auth 4 is CommonJS: under Node's ESM loader the default export arrives wrapped.
const CredentialsProvider =
  (CredentialsModule as unknown as { default?: typeof CredentialsModule }).default ?? CredentialsModule;

/** The shape of a WebAuthn assertion, checked before its challenge is spent. */
const AssertionShape = z
  .object({
    id: z.string().min(1).max(1024),
    rawId: z.string().min(1).max(1024),
    type: z.literal("public-key"),
    response: z
      .object({
        clientDataJSON: z.string().max(8192),
        authenticatorData: z.string().max(8192),
        signature: z.string().max(1024),
        userHandle: z.string().max(1024).optional().nullable(),
      })
      .passthrough(),
    clientExtensionResults: z.record(z.string(), z.unknown()).optional(),
    authenticatorAttachment: z.string().optional().nullable(),
  })
  .passthrough();

export interface ConsoleUser {
  id: string;
  name: string;
  role: string;
  orgDid: string;
  delegationId: string;
}

/**
 * The company's OpenID Connect provider (SVC_OIDC_*), when configured: the authorization code flow
 * with PKCE and state, the ID token verified by next-auth (openid-client) against the issuer's
 * published keys; its claims then make or update the member (server/members/oidcSignIn.ts) and
 * start a console session exactly as a passkey sign-in does.
 */
export function companyProvider(settings: OidcSettings): OAuthConfig<Record<string, unknown>> {
  return {
    id: "oidc",
    name: settings.name,
    type: "oauth",
    wellKnown: `${settings.issuer}/.well-known/openid-configuration`,
    clientId: settings.clientId,
    clientSecret: settings.clientSecret,
    authorization: { params: { scope: settings.scope } },
    idToken: true,
    checks: ["pkce", "state"],
    async profile(claims) {
      const db = await database();
      let member;
      try {
        member = await signInWithOidc(db, settings, claims);
      } catch (e) {
        // Refused: the signIn callback sends the browser back to the sign-in page, saying why.
        if (e instanceof OidcSignInRefused) return { id: String(claims.sub), refused: e.code };
        throw e;
      }
      const session = await startConsoleSession(db, member);
      const user: ConsoleUser = {
        id: member.passportDid,
        name: member.displayName,
        role: member.role,
        orgDid: member.orgDid,
        delegationId: session.delegationId,
      };
      return user;
    },
  };
}

const companySignIn = oidcSettings();

export const authOptions: NextAuthOptions = {
  secret: process.env.NEXTAUTH_SECRET,
  session: { strategy: "jwt", maxAge: SESSION_SECONDS },
  // Served over https, the session cookie is Secure (and __Secure- prefixed) whatever NEXTAUTH_URL says.
  useSecureCookies: (process.env.SVC_PUBLIC_URL || process.env.NEXTAUTH_URL || "").startsWith("https://"),
  pages: { signIn: "/sign-in", error: "/sign-in" },
  providers: [
    CredentialsProvider({
      id: "passkey",
      name: "Passkey",
      credentials: { challengeId: { type: "text" }, response: { type: "text" } },
      async authorize(credentials) {
        const db = await database();
        let response: AuthenticationResponseJSON;
        try {
          response = AssertionShape.parse(
            JSON.parse(credentials?.response ?? ""),
          ) as unknown as AuthenticationResponseJSON;
        } catch {
          await recordConsoleEvent(
            db,
            "CONSOLE passkeys.sign-in",
            (await rootOrgDidOf(db)) ?? "unknown",
            null,
            null,
            400,
            "denied",
          );
          throw new Error("The passkey response is malformed.");
        }
        try {
          const member = await verifyAssertion(db, credentials?.challengeId ?? "", response);
          // The assertion belongs to this session alone: the step-up reads it from here.
          const session = await startConsoleSession(db, member, { passkeyAssertedAt: new Date() });
          const user: ConsoleUser = {
            id: member.passportDid,
            name: member.displayName,
            role: member.role,
            orgDid: member.orgDid,
            delegationId: session.delegationId,
          };
          return user;
        } catch (e) {
          const rootDid = await rootOrgDidOf(db);
          await recordConsoleEvent(
            db,
            "CONSOLE passkeys.sign-in",
            rootDid ?? "unknown",
            null,
            null,
            e instanceof DomainError ? e.status : 500,
            "denied",
          );
          throw new Error(e instanceof DomainError ? e.message : "Sign-in failed.");
        }
      },
    }),
    ...(companySignIn ? [companyProvider(companySignIn)] : []),
  ],
  callbacks: {
    signIn({ user }) {
      const refused = (user as { refused?: string }).refused;
      return refused ? `/sign-in?error=${refused}` : true;
    },
    jwt({ token, user }) {
      if (user)
        Object.assign(token, {
          sub: user.id,
          name: user.name,
          role: (user as ConsoleUser).role,
          orgDid: (user as ConsoleUser).orgDid,
          delegationId: (user as ConsoleUser).delegationId,
        });
      return token;
    },
    session({ session, token }) {
      return {
        ...session,
        user: {
          id: token.sub!,
          name: token.name ?? "",
          role: token.role as string,
          orgDid: token.orgDid as string,
          delegationId: token.delegationId as string,
        },
      };
    },
  },
  events: {
    async signOut({ token }) {
      if (token?.delegationId) await endConsoleSession(await database(), token.delegationId as string);
    },
  },
};
