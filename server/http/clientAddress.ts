import type { IncomingMessage } from "node:http";
import { config } from "../config";
import { resolveClientAddress } from "./trustedProxies";

/**
 * Set by svc's HTTP server (server/main.ts for Next.js, `handleV1` for the fast path) from the
 * socket and the forwarding headers of trusted proxies (SVC_TRUSTED_PROXIES); a value the client
 * sends under this name is dropped.
 */
export const CLIENT_ADDRESS_HEADER = "x-svc-client-address";

const one = (value: string | string[] | undefined) => (Array.isArray(value) ? value.join(",") : value);

/** The client's address of a request as it reached svc's server (see server/http/trustedProxies.ts). */
export function clientAddressOf(req: Pick<IncomingMessage, "headers" | "socket">): string {
  return resolveClientAddress(
    req.socket.remoteAddress,
    { xForwardedFor: one(req.headers["x-forwarded-for"]), forwarded: one(req.headers.forwarded) },
    config().trustedProxies,
  );
}

/**
 * The client's address, what every rate limit per address keys on and every record of one names:
 * the one svc's server resolved for the request, "unknown" for a request that did not come
 * through it (a test's hand-made Request, `next dev`).
 */
export function clientAddress(request: Request): string {
  return request.headers.get(CLIENT_ADDRESS_HEADER) ?? "unknown";
}
