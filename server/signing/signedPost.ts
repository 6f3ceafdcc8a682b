import { OutboundError, OutboundRefused } from "../outbound/errors";
import { outboundRequest } from "../outbound/outboundRequest";
import type { ServiceRecord } from "../provenance/appendServiceRecord";
import { requestHash } from "../provenance/record";
import { signatureHeaders } from "./signatureHeaders";

/**
 * The one signed-POST delivery of svc: execution callbacks and webhooks send their Standard
 * Webhooks messages through it, so signing, the outbound guard, the answer's excerpt, what the
 * log keeps of the request and what the immutable ledger says of the target are decided once.
 */
export interface SignedPost {
  url: string;
  /** `webhook-id`: the same on every attempt at one message, so receivers deduplicate. */
  msgId: string;
  body: string;
  /** Every secret that signs now (two during a rotation). Never logged nor recorded. */
  secrets: readonly string[];
  userAgent: string;
  timeoutMs: number;
  /** Webhooks: https only (plain http for hosts in SVC_OUTBOUND_ALLOW), and a 3xx is an answer, not followed. */
  webhook?: boolean;
}

export interface SignedPostOutcome {
  statusCode: number | null;
  success: boolean;
  /** The guard refused the destination: another attempt would be refused too. */
  refused: boolean;
  /** Why no answer came (outbound_timeout, outbound_refused, outbound_failed and a message). */
  error: string | null;
  durationMs: number;
  timestamp: Date;
  /** The headers sent: content type, user agent and the three webhook-* headers (signatures, never a secret). */
  requestHeaders: Record<string, string>;
  /** The body sent, cut at REQUEST_BODY_LOGGED bytes for the log (`requestBodyTruncated`). */
  requestBody: string;
  requestBodyTruncated: boolean;
  responseExcerpt: string | null;
  responseHeaders: Record<string, string> | null;
}

/** How much of an answer is kept (and read: the connection is dropped after it). */
export const RESPONSE_EXCERPT_BYTES = 1024;
/** How much of a sent body the delivery log keeps. */
export const REQUEST_BODY_LOGGED = 64 * 1024;

/** Signs and POSTs one message; never throws for what the destination does. */
export async function sendSignedPost(post: SignedPost): Promise<SignedPostOutcome> {
  const timestamp = new Date();
  const requestHeaders: Record<string, string> = {
    "content-type": "application/json",
    "user-agent": post.userAgent,
    ...signatureHeaders({ msgId: post.msgId, timestamp, body: post.body, secrets: post.secrets }),
  };
  let statusCode: number | null = null;
  let responseExcerpt: string | null = null;
  let responseHeaders: Record<string, string> | null = null;
  let error: string | null = null;
  let refused = false;
  const t0 = Date.now();
  try {
    const res = await outboundRequest(post.url, {
      method: "POST",
      headers: requestHeaders,
      body: post.body,
      timeoutMs: post.timeoutMs,
      maxBytes: RESPONSE_EXCERPT_BYTES,
      ...(post.webhook ? { redirect: "manual" as const, requireHttps: true } : {}),
    });
    statusCode = res.status;
    responseExcerpt = res.body.subarray(0, RESPONSE_EXCERPT_BYTES).toString("utf8");
    responseHeaders = Object.fromEntries(
      Object.entries(res.headers).flatMap(([k, v]) =>
        v === undefined ? [] : [[k, Array.isArray(v) ? v.join(", ") : v]],
      ),
    );
  } catch (err) {
    error = (
      err instanceof OutboundError ? `${err.code}: ${err.message}` : err instanceof Error ? err.message : String(err)
    ).slice(0, 1000);
    refused = err instanceof OutboundRefused;
  }
  const bodyBytes = Buffer.from(post.body);
  const requestBodyTruncated = bodyBytes.length > REQUEST_BODY_LOGGED;
  return {
    statusCode,
    success: statusCode !== null && statusCode >= 200 && statusCode < 300,
    refused,
    error,
    durationMs: Date.now() - t0,
    timestamp,
    requestHeaders,
    requestBody: requestBodyTruncated ? bodyBytes.subarray(0, REQUEST_BODY_LOGGED).toString("utf8") : post.body,
    requestBodyTruncated,
    responseExcerpt,
    responseHeaders,
  };
}

/**
 * A target as the immutable ledger may name it: origin and path. The query string (and
 * fragment) often carries the receiver's token, and records are widely readable and never erased.
 */
export function ledgerTarget(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`.slice(0, 500);
  } catch {
    return "(invalid URL)";
  }
}

/** The provenance record of one attempt: the service acting for whoever stands behind the delivery. */
export function deliveryRecord(
  kind: "WEBHOOK" | "CALLBACK",
  post: Pick<SignedPost, "url" | "msgId" | "body">,
  outcome: Pick<SignedPostOutcome, "statusCode" | "refused">,
  who: Pick<ServiceRecord, "org_did" | "actingFor" | "grantor_did" | "resource_type" | "resource_id">,
): ServiceRecord {
  return {
    ...who,
    capability: null,
    operation: `${kind} ${ledgerTarget(post.url)}`,
    decision: outcome.refused ? "denied" : "allowed",
    status: outcome.statusCode ?? (outcome.refused ? 403 : 502),
    request_hash: requestHash(undefined, Buffer.from(post.body)),
    request_id: post.msgId,
  };
}
