import { defineOperation } from "../http/operation";
import * as s from "./schemas";
import { createWebhook } from "./createWebhook";
import { deleteWebhook } from "./deleteWebhook";
import { getDelivery } from "./getDelivery";
import { getWebhook } from "./getWebhook";
import { listDeliveries } from "./listDeliveries";
import { listSubscriptions } from "./listSubscriptions";
import { retryDelivery } from "./retryDelivery";
import { rotateWebhookSecret } from "./rotateWebhookSecret";
import { updateWebhook } from "./updateWebhook";

const tag = "Webhooks";
const read = "svc_api:events:read";
const write = "svc_api:events:write";

export const listWebhooksOp = defineOperation({
  id: "listWebhooks",
  method: "GET",
  path: "/v1/webhooks",
  tag,
  summary: "List webhooks and agent triggers",
  description:
    'Both kinds of subscription, newest first: webhooks with their health, agent triggers with target_url "" and the agent they start.',
  capability: read,
  resourceType: "webhook",
  query: s.SubscriptionListQuery,
  response: s.SubscriptionList,
  successStatus: 200,
  handler: (ctx) => listSubscriptions(ctx.db, ctx.principal, ctx.query, ctx.secret),
});

export const createWebhookOp = defineOperation({
  id: "createWebhook",
  method: "POST",
  path: "/v1/webhooks",
  tag,
  summary: "Create a webhook",
  description:
    "Events matching event_types are POSTed to target_url, signed with Standard Webhooks. The whsec_ secret is in this answer only. Needs svc_api:events:read too (a webhook delivers only what its creator may read), and for platform types the capability reading what they carry (svc_api:executions:read for execution.*, svc_api:agents:read for agent.*, …).",
  capability: write,
  resourceType: "webhook",
  body: s.WebhookCreateRequest,
  response: s.WebhookWithSecret,
  secretFields: ["secret"],
  successStatus: 201,
  async handler(ctx) {
    const created = await createWebhook(ctx.db, ctx.principal, ctx.body);
    ctx.setResource(created.id);
    return created;
  },
});

export const getWebhookOp = defineOperation({
  id: "getWebhook",
  method: "GET",
  path: "/v1/webhooks/{id}",
  tag,
  summary: "Get a webhook and its health",
  capability: read,
  resourceType: "webhook",
  params: s.WebhookIdParams,
  response: s.Webhook,
  successStatus: 200,
  handler: (ctx) => getWebhook(ctx.db, ctx.principal, ctx.params.id),
});

export const updateWebhookOp = defineOperation({
  id: "updateWebhook",
  method: "PATCH",
  path: "/v1/webhooks/{id}",
  tag,
  summary: "Change a webhook",
  description: "Target, event types, description or status (active re-enables a disabled webhook).",
  capability: write,
  resourceType: "webhook",
  params: s.WebhookIdParams,
  body: s.WebhookUpdateRequest,
  response: s.Webhook,
  successStatus: 200,
  async handler(ctx) {
    ctx.setResource(ctx.params.id);
    return updateWebhook(ctx.db, ctx.principal, ctx.params.id, ctx.body);
  },
});

export const deleteWebhookOp = defineOperation({
  id: "deleteWebhook",
  method: "DELETE",
  path: "/v1/webhooks/{id}",
  tag,
  summary: "Delete a webhook",
  description: "Queued deliveries are dropped; its delivery log goes with it.",
  capability: write,
  resourceType: "webhook",
  params: s.WebhookIdParams,
  response: s.WebhookDeleted,
  successStatus: 200,
  async handler(ctx) {
    ctx.setResource(ctx.params.id);
    return deleteWebhook(ctx.db, ctx.principal, ctx.params.id);
  },
});

export const listDeliveriesOp = defineOperation({
  id: "listWebhookDeliveries",
  method: "GET",
  path: "/v1/webhooks/{id}/deliveries",
  tag,
  summary: "A webhook's delivery attempts",
  description:
    "Newest first: the event type, what was sent (headers with the signatures, never the secret; the body), the status, duration, the answer's headers and first 1 KB, and when the next attempt is due.",
  capability: read,
  resourceType: "webhook",
  params: s.WebhookIdParams,
  query: s.WebhookDeliveryListQuery,
  response: s.WebhookDeliveryList,
  successStatus: 200,
  handler: (ctx) => listDeliveries(ctx.db, ctx.principal, ctx.params.id, ctx.query, ctx.secret),
});

export const getDeliveryOp = defineOperation({
  id: "getWebhookDelivery",
  method: "GET",
  path: "/v1/webhooks/{id}/deliveries/{delivery_id}",
  tag,
  summary: "One delivery attempt",
  description:
    "What was sent (event type, headers with the signatures but never the secret, body) and what came back (status, headers, the first 1 KB of the answer).",
  capability: read,
  resourceType: "webhook",
  params: s.DeliveryIdParams,
  response: s.WebhookDelivery,
  successStatus: 200,
  handler: (ctx) => getDelivery(ctx.db, ctx.principal, ctx.params.id, ctx.params.delivery_id),
});

export const retryDeliveryOp = defineOperation({
  id: "retryWebhookDelivery",
  method: "POST",
  path: "/v1/webhooks/{id}/deliveries/{delivery_id}/retry",
  tag,
  summary: "Send a delivery's event again",
  description:
    "Queues one more attempt (same webhook-id, so receivers deduplicate). A disabled webhook is 409: re-enable it first.",
  capability: write,
  resourceType: "webhook",
  params: s.DeliveryIdParams,
  response: s.WebhookRetryQueued,
  successStatus: 202,
  problems: ["conflict"],
  async handler(ctx) {
    ctx.setResource(ctx.params.id);
    return retryDelivery(ctx.db, ctx.principal, ctx.params.id, ctx.params.delivery_id);
  },
});

export const rotateWebhookSecretOp = defineOperation({
  id: "rotateWebhookSecret",
  method: "POST",
  path: "/v1/webhooks/{id}/rotate-secret",
  tag,
  summary: "Replace a webhook's signing secret",
  description:
    "The new secret (shown once) signs from now on; the previous one keeps signing beside it for 24 hours (webhook-signature then carries both).",
  capability: write,
  resourceType: "webhook",
  params: s.WebhookIdParams,
  response: s.RotatedWebhookSecret,
  secretFields: ["secret"],
  successStatus: 200,
  async handler(ctx) {
    ctx.setResource(ctx.params.id);
    return rotateWebhookSecret(ctx.db, ctx.principal, ctx.params.id);
  },
});

export const webhookOperations = [
  listWebhooksOp,
  createWebhookOp,
  getWebhookOp,
  updateWebhookOp,
  deleteWebhookOp,
  listDeliveriesOp,
  getDeliveryOp,
  retryDeliveryOp,
  rotateWebhookSecretOp,
];
