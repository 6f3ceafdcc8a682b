"use client";

import { startAuthentication, startRegistration } from "@simplewebauthn/browser";
import { signIn } from "next-auth/react";

/** Browser side of the passkey flows: the credential is made and used on this device only. */
async function post<T>(url: string, body?: unknown): Promise<T> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json().catch(() => ({}))) as { detail?: string };
  if (!res.ok) throw new Error(json.detail ?? `Request failed (${res.status})`);
  return json as T;
}

/** The browser's refusals, in words a person can act on. */
function explain(e: unknown): Error {
  if (e instanceof Error && e.name === "NotAllowedError")
    return new Error(
      "The passkey prompt was cancelled, or this device could not verify you (user verification is required).",
    );
  if (e instanceof Error && e.name === "InvalidStateError")
    return new Error("This device already holds a passkey for this account.");
  return e instanceof Error ? e : new Error(String(e));
}

/** Signs in with a passkey of this device; resolves when the session exists. */
export async function signInWithPasskey(): Promise<void> {
  const { challengeId, options } = await post<{
    challengeId: string;
    options: Parameters<typeof startAuthentication>[0]["optionsJSON"];
  }>("/api/passkeys/authenticate/options");
  const response = await startAuthentication({ optionsJSON: options }).catch((e: unknown) => {
    throw explain(e);
  });
  const result = await signIn("passkey", { challengeId, response: JSON.stringify(response), redirect: false });
  if (!result || result.error) throw new Error(result?.error ?? "Sign-in failed.");
}

/** Announced on `window` when a sign-in replaced the page's session (its old session is ended). */
export const SESSION_REPLACED_EVENT = "svc:session-replaced";

/**
 * A step-up from inside the console: the person signs in again with their passkey, which starts a
 * new session carrying that fresh assertion and ends the one the page was using (the server does
 * so when the new cookie is set). Open live views reconnect under the new session.
 */
export async function confirmWithPasskey(): Promise<void> {
  await signInWithPasskey();
  window.dispatchEvent(new Event(SESSION_REPLACED_EVENT));
}

/** Registers a new passkey through a set-up or invite link, then signs in with it. */
export async function registerPasskey(token: string, displayName: string): Promise<void> {
  const { challengeId, options } = await post<{
    challengeId: string;
    options: Parameters<typeof startRegistration>[0]["optionsJSON"];
  }>("/api/passkeys/register/options", { token, displayName });
  const response = await startRegistration({ optionsJSON: options }).catch((e: unknown) => {
    throw explain(e);
  });
  await post("/api/passkeys/register/verify", { challengeId, response });
  await signInWithPasskey();
}
