import { decode } from "next-auth/jwt";
import { database } from "../db/client";
import { authOptions } from "./nextAuth";
import { endConsoleSession } from "./sessions";

/**
 * A sign-in in a browser that already holds a console session replaces that session: the browser
 * drops the old cookie, and the old session's delegation is revoked so that no copy of that cookie
 * keeps a live session for its remaining hours. The inbox's "Confirm with passkey" is such a
 * sign-in; so is any sign-in (passkey or company) over a session still open.
 */
const sessionCookie = () => `${authOptions.useSecureCookies ? "__Secure-" : ""}next-auth.session-token`;

/** The console session delegation a session cookie's value names, or null (absent, not ours, unreadable). */
async function sessionOf(value: string | null): Promise<string | null> {
  // next-auth's route fills `secret` from NEXTAUTH_SECRET (set at start) on its first call.
  const secret = authOptions.secret ?? process.env.NEXTAUTH_SECRET;
  if (!value || !secret) return null;
  try {
    const token = await decode({ token: value, secret });
    return typeof token?.delegationId === "string" ? token.delegationId : null;
  } catch {
    return null;
  }
}

/** next-auth splits a large cookie into `name.0`, `name.1`…: the value, chunks joined in order. */
function joined(pairs: [string, string][], name: string): string | null {
  const parts = pairs
    .filter(([n, v]) => v !== "" && (n === name || new RegExp(`^${name.replace(/[.]/g, "\\.")}\\.\\d+$`).test(n)))
    .sort(([a], [b]) => Number(a.split(".").pop()) - Number(b.split(".").pop()));
  return parts.length === 0 ? null : parts.map(([, v]) => v).join("");
}

/** One `name=value` of a Cookie or Set-Cookie header, the value decoded as Next.js's cookie parser does. */
const pair = (text: string): [string, string] => {
  const at = text.indexOf("=");
  if (at < 0) return [text.trim(), ""];
  const value = text.slice(at + 1).trim();
  try {
    return [text.slice(0, at).trim(), decodeURIComponent(value)];
  } catch {
    return [text.slice(0, at).trim(), value];
  }
};

/** The session a request's cookie names, and the one its response's Set-Cookie starts (if any). */
export async function sessionsOf(request: Request, response: Response) {
  const sent = (request.headers.get("cookie") ?? "").split(";").filter(Boolean).map(pair);
  const set = response.headers.getSetCookie().map((c) => pair(c.split(";")[0]!));
  return {
    before: await sessionOf(joined(sent, sessionCookie())),
    after: await sessionOf(joined(set, sessionCookie())),
  };
}

/** Ends the session `request` carried when `response` (a sign-in's) starts another one. */
export async function endReplacedSession(request: Request, response: Response): Promise<void> {
  const { before, after } = await sessionsOf(request, response);
  if (before && after && before !== after)
    await endConsoleSession(await database(), before, "replaced by a new sign-in");
}

/** next-auth's route handler, ending the session a sign-in replaces (its callbacks are where sign-ins complete). */
export function withSessionReplacement<R extends Request, C>(handler: (request: R, context: C) => Promise<Response>) {
  return async (request: R, context: C): Promise<Response> => {
    const response = await handler(request, context);
    if (new URL(request.url).pathname.includes("/api/auth/callback/")) await endReplacedSession(request, response);
    return response;
  };
}
