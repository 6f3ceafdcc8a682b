/**
 * Capability strings are `<namespace>:<segment>[:<segment>…]`, e.g. `svc_api:events:write`. A held
 * capability ending in `:*` covers every capability (and every narrower family) under its prefix:
 * `svc_api:*` covers `svc_api:agents:read` and `svc_api:agents:*`.
 */
export const CAPABILITY_PATTERN = /^[a-z][a-z0-9_]*(:[a-z0-9_.\-]+)*(:\*)?$/;

/** Whether the held capability `held` covers `wanted` (a capability or a family). */
export function covers(held: string, wanted: string): boolean {
  if (held === wanted) return true;
  if (!held.endsWith(":*")) return false;
  const prefix = held.slice(0, -1); // keeps the trailing ':'
  return wanted.startsWith(prefix) && wanted.length > prefix.length;
}

/** Whether any of `held` covers `wanted`. */
export function coveredBy(held: readonly string[], wanted: string): boolean {
  return held.some((h) => covers(h, wanted));
}

/** The capabilities of `wanted` that `held` does not cover. */
export function missingCapabilities(held: readonly string[], wanted: readonly string[]): string[] {
  return wanted.filter((w) => !coveredBy(held, w));
}

/** The session exchange's default set: reasoning plus agents read/invoke (less what the service does not offer yet, exchangeSession.ts). */
export const SESSION_DEFAULT_CAPABILITIES = ["svc_api:reasoning:think", "svc_api:agents:read", "svc_api:agents:invoke"];
