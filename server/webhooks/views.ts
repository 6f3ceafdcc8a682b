import type { Subscription, WebhookDelivery } from "../db/generated/sqlite/client";

export interface WebhookHealthValue {
  last_success_at: string | null;
  last_failure_at: string | null;
  consecutive_failures: number;
  failing_since: string | null;
  disabled_reason: string | null;
}

const patterns = (s: Subscription) => (Array.isArray(s.eventTypes) ? (s.eventTypes as string[]) : []);

/** A webhook as its owner sees it (never its secret). */
export function webhookView(s: Subscription, health?: WebhookHealthValue) {
  return {
    id: s.id,
    kind: "webhook" as const,
    target_url: s.targetUrl,
    event_types: patterns(s),
    description: s.description || null,
    status: s.status as "active" | "disabled",
    ...(health ? { health } : {}),
    delegation_id: s.createdByDelegationId,
    rebound_from_delegation_id: s.reboundFromDelegationId,
    created_at: s.createdAt.toISOString(),
  };
}

/** A list item of `GET /v1/webhooks`: either kind; health only for webhooks. */
export function subscriptionView(s: Subscription, health?: WebhookHealthValue) {
  return {
    id: s.id,
    kind: s.kind as "webhook" | "agent_trigger",
    target_url: s.kind === "webhook" ? s.targetUrl : "",
    event_types: patterns(s),
    agent_id: s.agentId,
    description: s.description || null,
    status: s.status,
    ...(health ? { health } : {}),
    created_at: s.createdAt.toISOString(),
  };
}

export function deliveryView(d: WebhookDelivery) {
  return {
    id: d.id,
    event_id: d.eventId,
    attempt: d.attempt,
    status_code: d.statusCode,
    success: d.success,
    duration_ms: d.durationMs,
    response_excerpt: d.responseExcerpt,
    error: d.error,
    created_at: d.createdAt.toISOString(),
    next_attempt_at: d.nextAttemptAt?.toISOString() ?? null,
    event_type: d.eventType,
    request:
      d.requestHeaders === null
        ? null
        : { headers: headersOf(d.requestHeaders), body: d.requestBody ?? "", body_truncated: d.requestBodyTruncated },
    response_headers: d.responseHeaders === null ? null : headersOf(d.responseHeaders),
  };
}

function headersOf(json: string): Record<string, string> {
  try {
    return JSON.parse(json) as Record<string, string>;
  } catch {
    return {};
  }
}
