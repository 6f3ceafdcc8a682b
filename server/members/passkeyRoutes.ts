import type { RegistrationResponseJSON } from "@simplewebauthn/server";
import { rootOrgDidOf } from "../setup/rootOrg";
import { NextRequest } from "next/server";
import { z } from "zod";
import { config } from "../config";
import { database } from "../db/client";
import { DomainError, RateLimited } from "../errors";
import { clientAddress } from "../http/clientAddress";
import { problemResponse, toProblem } from "../http/problem";
import { takeToken } from "../http/rateLimit";
import { PRE_AUTH_BODY_LIMIT, parseJsonText, readLimited } from "../http/body";
import { parseOrThrow, refuseHostileInput } from "../http/validation";
import { newId } from "../ids";
import {
  authenticationOptions,
  completeRegistration,
  redeemableInvite,
  registrationOptions,
  tokenHash,
} from "./passkeys";
import { consoleEntry } from "../governance/consoleEntry";
import { recordConsoleEvent } from "./sessions";
import { recordAnonymousRefusal } from "../governance/anonymousRefusals";

/**
 * The console's pre-sign-in calls (Web Request/Response handlers): passkey registration through
 * a set-up or invite link, and sign-in challenges. Rate limited per client address; every
 * registration, and every refusal, leaves a provenance record.
 */
const RegisterOptions = z
  .object({ token: z.string().min(10).max(200), displayName: z.string().trim().min(1).max(100) })
  .strict();
const RegisterVerify = z
  .object({ challengeId: z.string().min(1).max(100), response: z.record(z.string(), z.unknown()) })
  .strict();

async function handle(
  request: Request,
  operation: string,
  run: (body: unknown) => Promise<unknown>,
): Promise<Response> {
  const requestId = newId("req");
  const path = new URL(request.url).pathname;
  const db = await database();
  const rootDid = await rootOrgDidOf(db);
  try {
    const rl = await takeToken(`addr:${clientAddress(request)}:${operation}`, config().rateLimitAnonymousPerMinute);
    if (!rl.allowed) throw RateLimited("Too many attempts; wait a minute.", 60);
    // Anyone may call these: the body is bounded before a byte of it is kept.
    const bytes = await readLimited(request, PRE_AUTH_BODY_LIMIT);
    const body = bytes.length > 0 ? parseJsonText(bytes.toString("utf8")) : undefined;
    refuseHostileInput(body, "body");
    return Response.json(await run(body), { headers: { "X-Request-Id": requestId } });
  } catch (e) {
    const { problem, headers } = toProblem(e, path, requestId);
    // Nobody is signed in yet: counted per window (server/governance/anonymousRefusals.ts).
    await recordAnonymousRefusal(
      db,
      consoleEntry(operation, rootDid ?? "unknown", null, null, problem.status, "denied"),
    );
    return problemResponse(problem, { ...headers, "X-Request-Id": requestId });
  }
}

export const registerOptionsRoute = (request: Request) =>
  handle(request, "CONSOLE passkeys.register-options", async (body) => {
    const input = parseOrThrow(RegisterOptions, body);
    return registrationOptions(await database(), input.token, input.displayName);
  });

export const registerVerifyRoute = (request: Request) =>
  handle(request, "CONSOLE passkeys.register", async (body) => {
    const input = parseOrThrow(RegisterVerify, body);
    const db = await database();
    const person = await completeRegistration(
      db,
      input.challengeId,
      input.response as unknown as RegistrationResponseJSON,
    );
    await recordConsoleEvent(
      db,
      "CONSOLE passkeys.register",
      person.orgDid,
      person.did,
      null,
      201,
      "allowed",
      "passport",
      person.did,
    );
    return { did: person.did, role: person.role, display_name: person.displayName };
  });

export const authenticateOptionsRoute = (request: Request) =>
  handle(request, "CONSOLE passkeys.sign-in-options", async () => authenticationOptions(await database()));

/** Whether a link can still be redeemed (the set-up and invite pages ask before showing the form). */
export const inviteStatusRoute = (request: Request) =>
  handle(request, "CONSOLE invites.status", async () => {
    const token = new URL(request.url).searchParams.get("token") ?? "";
    const invite = await redeemableInvite(await database(), token);
    return {
      role: invite.role,
      kind: invite.kind,
      expires_at: invite.expiresAt.toISOString(),
      id: tokenHash(token).slice(0, 8),
    };
  });

/**
 * next-auth's route handler behind the same pre-auth body limit: next-auth 4 reads the whole body
 * itself (`req.json()` / `req.text()`), so it is read here first, bounded, and handed on.
 */
export function withBoundedBody<C>(handler: (request: NextRequest, context: C) => Promise<Response>) {
  return async (request: NextRequest, context: C): Promise<Response> => {
    if (request.method !== "POST") return handler(request, context);
    let bytes: Buffer;
    try {
      bytes = await readLimited(request, PRE_AUTH_BODY_LIMIT);
    } catch (e) {
      const requestId = newId("req");
      const { problem, headers } = toProblem(e, new URL(request.url).pathname, requestId);
      const db = await database();
      await recordAnonymousRefusal(
        db,
        consoleEntry(
          "CONSOLE auth (body refused)",
          (await rootOrgDidOf(db)) ?? "unknown",
          null,
          null,
          problem.status,
          "denied",
        ),
      );
      return problemResponse(problem, { ...headers, "X-Request-Id": requestId });
    }
    return handler(
      new NextRequest(request.url, { method: "POST", headers: request.headers, body: new Uint8Array(bytes) }),
      context,
    );
  };
}
