import { z } from "zod";
import { ListQuery, PaginationInfo } from "../http/listSchemas";
import { EXAMPLE } from "../openapi/examples";
import { EventPattern } from "../events/schemas";

// Pure zod: the console's webhook pages import these.

const Timestamp = z.string().describe("ISO 8601 date-time");

export const WebhookStatus = z.enum(["active", "disabled"]);

const WEBHOOK_EXAMPLE = {
  id: "sub_01m806mp6t2k9d8c7b6a5z4y3x",
  target_url: "https://hooks.example.com/svc",
  event_types: ["invoice.*", "execution.failed"],
  description: "Billing system",
  delegation_id: EXAMPLE.delegationId,
  rebound_from_delegation_id: null,
  created_at: EXAMPLE.createdAt,
};

const DelegationId = z
  .string()
  .nullable()
  .describe(
    "The delegation deliveries act under (their provenance records name it): its creator's, or whoever re-enabled it after that one was revoked",
  );
const ReboundFrom = z
  .string()
  .nullable()
  .describe(
    "Set when a webhook disabled by its delegation's revocation was re-enabled: the revoked delegation it was moved from",
  );

export const WebhookCreateRequest = z
  .object({
    target_url: z
      .string()
      .min(1)
      .max(2000)
      .describe(
        "Where deliveries are POSTed: https (plain http only for hosts in SVC_OUTBOUND_ALLOW); never a private or metadata address",
      ),
    event_types: z.array(EventPattern).min(1).max(50).describe("The event types (or `.*` prefixes) delivered to it"),
    description: z.string().max(500).optional().describe("A note for people"),
  })
  .strict()
  .meta({
    id: "WebhookCreateRequest",
    example: {
      target_url: WEBHOOK_EXAMPLE.target_url,
      event_types: WEBHOOK_EXAMPLE.event_types,
      description: WEBHOOK_EXAMPLE.description,
    },
  });

export const WebhookUpdateRequest = z
  .object({
    target_url: z.string().min(1).max(2000).optional().describe("A new target (checked like at creation)"),
    event_types: z.array(EventPattern).min(1).max(50).optional(),
    description: z.string().max(500).nullable().optional(),
    status: WebhookStatus.optional().describe(
      "`active` re-enables a disabled webhook (its failure period starts over); `disabled` pauses it",
    ),
  })
  .strict()
  .meta({ id: "WebhookUpdateRequest", example: { status: "active" } });

export const WebhookHealth = z
  .object({
    last_success_at: Timestamp.nullable(),
    last_failure_at: Timestamp.nullable(),
    consecutive_failures: z.number().int().describe("Failed attempts since the last success"),
    failing_since: Timestamp.nullable().describe(
      "The first failure since the last success; once it is older than SVC_WEBHOOK_DISABLE_AFTER_SECONDS the webhook is disabled",
    ),
    disabled_reason: z
      .string()
      .nullable()
      .describe("gone (the receiver answered 410), failing, delegation_revoked, or manual"),
  })
  .meta({
    id: "WebhookHealth",
    example: {
      last_success_at: "2026-11-21T09:31:00.000Z",
      last_failure_at: null,
      consecutive_failures: 0,
      failing_since: null,
      disabled_reason: null,
    },
  });

export const Webhook = z
  .object({
    id: z.string(),
    kind: z.literal("webhook"),
    target_url: z.string(),
    event_types: z.array(z.string()),
    description: z.string().nullable(),
    status: WebhookStatus,
    health: WebhookHealth.optional(),
    delegation_id: DelegationId,
    rebound_from_delegation_id: ReboundFrom,
    created_at: Timestamp,
  })
  .meta({ id: "Webhook", example: { ...WEBHOOK_EXAMPLE, kind: "webhook", status: "active" } });

export const WebhookWithSecret = z
  .object({
    id: z.string(),
    kind: z.literal("webhook"),
    target_url: z.string(),
    event_types: z.array(z.string()),
    description: z.string().nullable(),
    status: WebhookStatus,
    secret: z
      .string()
      .describe("whsec_…: verify deliveries with it (Standard Webhooks). Shown only here and by rotate-secret"),
    delegation_id: DelegationId,
    rebound_from_delegation_id: ReboundFrom,
    created_at: Timestamp,
  })
  .meta({
    id: "WebhookWithSecret",
    example: {
      ...WEBHOOK_EXAMPLE,
      kind: "webhook",
      status: "active",
      secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwJ8cH3Jq4Vh0=",
    },
  });

export const Subscription = z
  .object({
    id: z.string(),
    kind: z.enum(["webhook", "agent_trigger"]),
    target_url: z.string().describe('"" for agent triggers'),
    event_types: z.array(z.string()),
    agent_id: z.string().nullable().describe("The agent a trigger starts (null for webhooks)"),
    description: z.string().nullable(),
    status: z.string().describe("active or disabled"),
    health: WebhookHealth.optional().describe("Webhooks only"),
    created_at: Timestamp,
  })
  .meta({
    id: "Subscription",
    example: {
      ...WEBHOOK_EXAMPLE,
      kind: "webhook",
      agent_id: null,
      status: "active",
      health: {
        last_success_at: "2026-11-21T09:31:00.000Z",
        last_failure_at: null,
        consecutive_failures: 0,
        failing_since: null,
        disabled_reason: null,
      },
    },
  });

export const SubscriptionListQuery = ListQuery.extend({
  kind: z.enum(["webhook", "agent_trigger"]).optional().describe("Only subscriptions of this kind"),
  status: WebhookStatus.optional().describe("Only subscriptions in this status"),
});

export const SubscriptionList = z.object({ data: z.array(Subscription), pagination: PaginationInfo }).meta({
  id: "SubscriptionList",
  example: {
    data: [
      {
        ...WEBHOOK_EXAMPLE,
        kind: "webhook",
        agent_id: null,
        status: "active",
        health: {
          last_success_at: "2026-11-21T09:31:00.000Z",
          last_failure_at: null,
          consecutive_failures: 0,
          failing_since: null,
          disabled_reason: null,
        },
      },
      {
        id: "sub_01m806mp6t7h6g5f4e3d2c1b0a",
        kind: "agent_trigger",
        target_url: "",
        event_types: ["invoice.paid"],
        agent_id: "agt_01m806mp6t9z8y7x6w5v4u3t2s",
        description: "Route paid invoices",
        status: "active",
        created_at: EXAMPLE.createdAt,
      },
    ],
    pagination: { has_more: false, next_cursor: null },
  },
});

export const WebhookIdParams = z.object({ id: z.string().min(1).max(100) });
export const DeliveryIdParams = z.object({ id: z.string().min(1).max(100), delivery_id: z.string().min(1).max(100) });

const DELIVERY_EXAMPLE = {
  id: "whd_01m806mp6w1x4c7v0b3n6m9q2s",
  event_id: "evt_01m806mp6v3c2b1a0z9y8x7w6v",
  attempt: 1,
  status_code: 500,
  success: false,
  duration_ms: 42,
  response_excerpt: "upstream unavailable",
  error: null,
  created_at: "2026-11-21T09:32:00.230Z",
  next_attempt_at: "2026-11-21T09:32:05.230Z",
  event_type: "invoice.paid",
  request: {
    headers: {
      "content-type": "application/json",
      "user-agent": "svc-webhooks",
      "webhook-id": "msg_evt_01m806mp6v3c2b1a0z9y8x7w6v_sub_01m806mp6t2k9d8c7b6a5z4y3x",
      "webhook-timestamp": "1763717520",
      "webhook-signature": "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=",
    },
    body: '{"type":"invoice.paid","timestamp":"2026-11-21T09:30:00.000Z","data":{"event_id":"evt_01m806mp6v3c2b1a0z9y8x7w6v","payload":{"invoice_id":"inv_2041"}}}',
    body_truncated: false,
  },
  response_headers: { "content-type": "text/plain" },
};

export const WebhookDelivery = z
  .object({
    id: z.string(),
    event_id: z.string(),
    attempt: z.number().int().describe("1 for the first attempt at this event; retries and manual replays count on"),
    status_code: z.number().int().nullable().describe("null when no answer came (timeout, refused, unreachable)"),
    success: z.boolean().describe("A 2xx answer; a 3xx is a failure (redirects are not followed)"),
    duration_ms: z.number().int(),
    response_excerpt: z.string().nullable().describe("The first 1 KB of the answer"),
    error: z
      .string()
      .nullable()
      .describe("Why no answer came: outbound_timeout, outbound_refused, outbound_failed and a message"),
    created_at: Timestamp,
    next_attempt_at: Timestamp.nullable().describe("When this event is tried again; null when it is not"),
    event_type: z
      .string()
      .nullable()
      .describe("The delivered event's type (null for attempts logged before svc kept it)"),
    request: z
      .object({
        headers: z
          .record(z.string(), z.string())
          .describe(
            "The headers sent: content-type, user-agent, webhook-id, webhook-timestamp and webhook-signature (signatures only, never the secret)",
          ),
        body: z.string().describe("The body sent, byte for byte (cut at 64 KiB)"),
        body_truncated: z.boolean().describe("Whether `body` was cut"),
      })
      .nullable()
      .describe("What was sent (null for attempts logged before svc kept it)"),
    response_headers: z
      .record(z.string(), z.string())
      .nullable()
      .describe("The answer's headers; null when no answer came"),
  })
  .meta({ id: "WebhookDelivery", example: DELIVERY_EXAMPLE });

export const WebhookDeliveryListQuery = ListQuery.extend({
  event_id: z.string().min(1).max(100).optional().describe("Only the attempts at this event"),
  success: z.enum(["true", "false"]).optional().describe("Only successful (true) or failed (false) attempts"),
});

export const WebhookDeliveryList = z.object({ data: z.array(WebhookDelivery), pagination: PaginationInfo }).meta({
  id: "WebhookDeliveryList",
  example: { data: [DELIVERY_EXAMPLE], pagination: { has_more: false, next_cursor: null } },
});

export const WebhookRetryQueued = z
  .object({
    webhook_id: z.string(),
    event_id: z.string(),
    status: z.literal("queued").describe("One more attempt is queued; it appears in the deliveries list when made"),
  })
  .meta({
    id: "WebhookRetryQueued",
    example: { webhook_id: WEBHOOK_EXAMPLE.id, event_id: DELIVERY_EXAMPLE.event_id, status: "queued" },
  });

export const RotatedWebhookSecret = z
  .object({
    secret: z.string().describe("The new secret; deliveries are signed with it from now on"),
    previous_expires_at: Timestamp.describe("Until then deliveries also carry a signature with the previous secret"),
  })
  .meta({
    id: "RotatedWebhookSecret",
    example: { secret: "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oDkq0mXh2XJ0w=", previous_expires_at: EXAMPLE.expiresAt },
  });

export const WebhookDeleted = z
  .object({ id: z.string(), deleted: z.literal(true) })
  .meta({ id: "WebhookDeleted", example: { id: WEBHOOK_EXAMPLE.id, deleted: true } });
