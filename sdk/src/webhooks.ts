import { createHmac, timingSafeEqual } from "node:crypto";
import { SvcVerificationError } from "./errors.js";

/** A fetch `Headers`, a Node.js `IncomingHttpHeaders` or a plain object of header names to values. */
export type HeaderSource = { get(name: string): string | null } | object;

function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === "function")
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const value = record[name] ?? Object.entries(record).find(([k]) => k.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value[0] : value;
}

export interface VerifiedWebhook<T = unknown> {
  /** `webhook-id`: the same on every retry of one message (deduplicate on it). */
  id: string;
  timestamp: Date;
  payload: T;
}

/**
 * Verifies a webhook or callback delivery of svc (Standard Webhooks: `webhook-id`,
 * `webhook-timestamp`, `webhook-signature` = space-separated `v1,<base64 HMAC-SHA256>` of
 * `id.timestamp.body` under the `whsec_` secret) and returns its parsed payload. `body` must be
 * the raw bytes as received, before any JSON parsing. `secrets` may hold the old and the new
 * secret during a rotation. Deliveries older or newer than `toleranceSeconds` (default 300) are
 * refused (replay protection). Throws SvcVerificationError.
 */
export function verifyWebhook<T = unknown>(
  secrets: string | string[],
  headers: HeaderSource,
  body: string | Uint8Array,
  options: { toleranceSeconds?: number; now?: Date } = {},
): VerifiedWebhook<T> {
  const id = header(headers, "webhook-id");
  const timestamp = header(headers, "webhook-timestamp");
  const signature = header(headers, "webhook-signature");
  if (!id || !timestamp || !signature)
    throw new SvcVerificationError("missing webhook-id, webhook-timestamp or webhook-signature");
  if (!/^\d+$/.test(timestamp)) throw new SvcVerificationError("webhook-timestamp is not a number of seconds");
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  const tolerance = options.toleranceSeconds ?? 300;
  if (Math.abs(now - Number(timestamp)) > tolerance)
    throw new SvcVerificationError(`the delivery's timestamp is more than ${tolerance} s away from now`);
  const given = signature
    .split(" ")
    .filter((s) => s.startsWith("v1,"))
    .map((s) => Buffer.from(s.slice(3), "base64"));
  const bytes = typeof body === "string" ? Buffer.from(body, "utf8") : Buffer.from(body);
  for (const secret of Array.isArray(secrets) ? secrets : [secrets]) {
    const key = Buffer.from(secret.startsWith("whsec_") ? secret.slice(6) : secret, "base64");
    const expected = createHmac("sha256", key).update(`${id}.${timestamp}.`).update(bytes).digest();
    if (given.some((g) => g.length === expected.length && timingSafeEqual(g, expected))) {
      return { id, timestamp: new Date(Number(timestamp) * 1000), payload: JSON.parse(bytes.toString("utf8")) as T };
    }
  }
  throw new SvcVerificationError("no webhook-signature matches the secret");
}
