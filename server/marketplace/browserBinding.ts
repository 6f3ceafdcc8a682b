import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { config } from "../config";
import type { Db } from "../db/client";
import { database } from "../db/client";
import { domainError, Forbidden, ValidationFailed } from "../errors";
import type { Principal } from "../governance/principal";
import { problemResponse, toProblem } from "../http/problem";
import { crossSiteRefusal } from "../http/sameOrigin";
import { authenticateSession } from "../identity/authenticate";
import { newId } from "../ids";

/** An OAuth `state` as stored: its SHA-256 (the state itself is a bearer secret). */
export const stateHashOf = (state: string) => createHash("sha256").update(state).digest("base64url");

/**
 * Binding a console-started authorization to the browser that started it (RFC 9700 §4.7, CSRF):
 * the `state` alone says who installs, not which user agent comes back with the code, so a link
 * carried to another browser (or an attacker's authorization response injected into the
 * installer's browser) would complete the installation there. An install made from the console
 * is therefore filed `unbound`; before sending the browser to the provider the console asks
 * `POST /api/marketplace/oauth/bind {state}`, which sets an HttpOnly, SameSite=Lax cookie holding
 * a fresh nonce (path: the callback only) and keeps the nonce's hash on the state. The callback
 * then completes only with that cookie. An install made through /v1 keeps its binding to the
 * installer's delegation alone (an API client has no browser session to bind).
 */
export const UNBOUND = "unbound";

/** The binding a new authorization gets: console-started (a signed-in person's session) or not. */
export const initialBrowserBinding = (principal: Principal): string | null =>
  principal.kind === "session" && principal.role !== undefined ? UNBOUND : null;

/** One cookie per pending authorization, so two installs started in one browser do not collide. */
export const bindingCookieName = (stateHash: string) =>
  `svc_oauth_${stateHash.replace(/[^A-Za-z0-9]/g, "").slice(0, 16)}`;

const nonceHash = (nonce: string) => createHash("sha256").update(nonce).digest("base64url");
const invalidState = (detail: string) => domainError("oauth_state_invalid", detail);

/**
 * Binds a console-started authorization to the caller's browser: only its installer, only while
 * it is unused, unexpired and not bound yet (one conditional update: a second bind loses).
 * Returns the cookie that carries the nonce.
 */
export async function bindOAuthBrowser(
  db: Db,
  principal: Principal,
  state: string,
): Promise<{ name: string; value: string; maxAgeSeconds: number }> {
  const stateHash = stateHashOf(state);
  const row = await db.connectorOAuthState.findUnique({ where: { stateHash } });
  if (!row || row.orgDid !== principal.orgDid || row.installerDid !== principal.actorDid)
    throw invalidState("This state was not issued to you.");
  if (row.usedAt || row.expiresAt.getTime() <= Date.now())
    throw invalidState("This authorization link was used or has expired; start the installation again.");
  const nonce = randomBytes(32).toString("base64url");
  const { count } = await db.connectorOAuthState.updateMany({
    where: { stateHash, browserBinding: UNBOUND, usedAt: null },
    data: { browserBinding: nonceHash(nonce) },
  });
  if (count === 0)
    throw invalidState(
      "This authorization is not waiting for a browser binding (already bound, or started through the API).",
    );
  return {
    name: bindingCookieName(stateHash),
    value: nonce,
    maxAgeSeconds: Math.max(1, Math.ceil((row.expiresAt.getTime() - Date.now()) / 1000)),
  };
}

/** The value of cookie `name` in a Cookie header, or null. */
function cookieValue(header: string | null, name: string): string | null {
  for (const part of (header ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

/**
 * At the callback, before anything is spent: an authorization started in the console completes
 * only in the browser that holds its binding cookie. Refused: 400 `oauth_state_invalid` (the
 * state stays usable in the right browser).
 */
export function checkBrowserBinding(
  row: { stateHash: string; browserBinding: string | null },
  cookieHeader: string | null,
): void {
  if (row.browserBinding === null) return;
  if (row.browserBinding === UNBOUND)
    throw invalidState(
      "This installation was started in the console and is completed only in the browser that started it; start it again there.",
    );
  const nonce = cookieValue(cookieHeader, bindingCookieName(row.stateHash));
  const expected = Buffer.from(row.browserBinding);
  const got = Buffer.from(nonce ? nonceHash(nonce) : "");
  if (got.length !== expected.length || !timingSafeEqual(got, expected))
    throw invalidState(
      "This authorization was started in another browser: it completes only in the browser that started the installation.",
    );
}

/**
 * `POST /api/marketplace/oauth/bind {state}`: the console's binding call, for a signed-in person
 * only, same-origin only. 204 with the cookie; problems as problem+json.
 */
export function bindRouteWithSession(session: () => Promise<{ delegationId: string } | null>) {
  return async (request: Request): Promise<Response> => {
    const instance = new URL(request.url).pathname;
    const requestId = newId("req");
    try {
      const crossSite = crossSiteRefusal(request);
      if (crossSite !== undefined) throw Forbidden(crossSite);
      const user = await session();
      if (!user) throw domainError("unauthenticated", "Sign in to the console first.");
      const db = await database();
      const principal = await authenticateSession(db, user.delegationId);
      const text = await request.text();
      let state: unknown;
      try {
        state = (JSON.parse(text) as { state?: unknown }).state;
      } catch {
        state = undefined;
      }
      if (typeof state !== "string" || state.length === 0 || state.length > 500)
        throw ValidationFailed([
          { field: "state", code: "INVALID_TYPE", message: "the oauth_state the install answered" },
        ]);
      const cookie = await db.writeTx((tx) => bindOAuthBrowser(tx, principal, state));
      const secure = config().publicUrl.startsWith("https:") ? "; Secure" : "";
      return new Response(null, {
        status: 204,
        headers: {
          "Set-Cookie": `${cookie.name}=${cookie.value}; Path=/v1/marketplace/oauth/callback; Max-Age=${cookie.maxAgeSeconds}; HttpOnly; SameSite=Lax${secure}`,
          "Cache-Control": "no-store",
        },
      });
    } catch (e) {
      const { problem, headers } = toProblem(e, instance, requestId);
      return problemResponse(problem, { ...headers, "X-Request-Id": requestId });
    }
  };
}
