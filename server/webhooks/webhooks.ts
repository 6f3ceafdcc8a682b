import type { z } from "zod";
import type { Subscription, WebhookDelivery } from "../db/generated/sqlite/client";
import type { Db } from "../db/client";
import { Conflict, Forbidden, NotFound } from "../errors";
import type { Principal } from "../governance/principal";
import { keyset, olderThan } from "../http/cursor";
import { newId } from "../ids";
import { enqueue } from "../jobs";
import { subscriptionsChanged } from "../events/matcher";
import { platformEntriesMatchedBy } from "../events/platformEventTypes";
import { coveredBy } from "../identity/capabilities";
import { delegationRevoked } from "../identity/delegationRevoked";
import { assertOutboundUrl } from "../outbound/assertOutboundUrl";
import { newWebhookSecret } from "../signing/webhookSecrets";
import { DELIVER_JOB, deliverJobOptions } from "./deliveryJob";
import type {
  SubscriptionListQuery,
  WebhookCreateRequest,
  WebhookDeliveryListQuery,
  WebhookUpdateRequest,
} from "./schemas";
import { deliveryView, subscriptionView, webhookView, type WebhookHealthValue } from "./views";
import { SECRET_OVERLAP_MS, sealWebhookSecret } from "./webhookSecrets";

const targetUrl = (raw: string) => assertOutboundUrl(raw, { requireHttps: true, field: "target_url" }).toString();

/**
 * A webhook delivers only what its creator may read: subscribing to patterns (creating a webhook,
 * or adding patterns to one) needs `svc_api:events:read`, and, for patterns that match platform
 * types, the capability that reads what those events carry (`svc_api:executions:read` for
 * `execution.*`, …; see server/events/platformEventTypes.ts). 403 naming the first one missing.
 */
function assertMayRead(principal: Principal, patterns: readonly string[], already: readonly string[] = []): void {
  const added = patterns.filter((p) => !already.includes(p));
  if (added.length === 0) return;
  const needed = [
    "svc_api:events:read",
    ...added.flatMap((p) => platformEntriesMatchedBy(p).map((e) => e.readCapability)),
  ];
  const missing = needed.find((c) => !coveredBy(principal.capabilities, c));
  if (missing) {
    const pattern = added.find((p) => platformEntriesMatchedBy(p).some((e) => e.readCapability === missing));
    throw Forbidden(
      pattern
        ? `Subscribing to ${pattern} delivers events that carry what ${missing} reads, which your delegation does not hold.`
        : `Subscribing a webhook to events needs ${missing}, which your delegation does not hold: a webhook delivers only what its creator may read.`,
      { missing_capability: missing },
    );
  }
}

/** Registers a webhook; its `whsec_` secret is in this answer only (sealed at rest). */
export async function createWebhook(tx: Db, principal: Principal, body: z.output<typeof WebhookCreateRequest>) {
  const url = targetUrl(body.target_url);
  assertMayRead(principal, body.event_types);
  const id = newId("whk");
  const secret = newWebhookSecret();
  const row = await tx.subscription.create({
    data: {
      id,
      orgDid: principal.orgDid,
      kind: "webhook",
      eventTypes: [...new Set(body.event_types)],
      targetUrl: url,
      description: body.description ?? "",
      status: "active",
      createdByDelegationId: principal.delegationId,
      secretSealed: await sealWebhookSecret(principal.orgDid, id, secret),
      createdAt: new Date(),
    },
  });
  await subscriptionsChanged(tx);
  const { health: _none, ...view } = webhookView(row);
  return { ...view, secret };
}

async function findWebhook(db: Db, principal: Principal, id: string): Promise<Subscription> {
  const row = await db.subscription.findFirst({ where: { id, orgDid: principal.orgDid, kind: "webhook" } });
  if (!row) throw NotFound("webhook", id);
  return row;
}

/** Health from the delivery log: last success and failure, failures since the last success. */
async function health(db: Db, s: Subscription): Promise<WebhookHealthValue> {
  const [lastSuccess, lastFailure] = await Promise.all([
    db.webhookDelivery.findFirst({
      where: { subscriptionId: s.id, success: true },
      orderBy: { createdAt: "desc" },
      select: { createdAt: true },
    }),
    db.webhookDelivery.findFirst({
      where: { subscriptionId: s.id, success: false },
      orderBy: { createdAt: "desc" },
      select: { createdAt: true },
    }),
  ]);
  const consecutive = lastFailure
    ? await db.webhookDelivery.count({
        where: {
          subscriptionId: s.id,
          success: false,
          ...(lastSuccess ? { createdAt: { gt: lastSuccess.createdAt } } : {}),
        },
      })
    : 0;
  return {
    last_success_at: lastSuccess?.createdAt.toISOString() ?? null,
    last_failure_at: lastFailure?.createdAt.toISOString() ?? null,
    consecutive_failures: consecutive,
    failing_since: s.failingSince?.toISOString() ?? null,
    disabled_reason: s.disabledReason,
  };
}

export async function getWebhook(db: Db, principal: Principal, id: string) {
  const row = await findWebhook(db, principal, id);
  return webhookView(row, await health(db, row));
}

/** Both kinds, newest first: webhooks with their health, agent triggers with the agent they start. */
export async function listSubscriptions(
  db: Db,
  principal: Principal,
  query: z.output<typeof SubscriptionListQuery>,
  secret: Buffer,
) {
  const { after, take, page } = keyset<Subscription>(secret, "webhooks", query, (last) => [
    last.createdAt.toISOString(),
    last.id,
  ]);
  const rows = await db.subscription.findMany({
    where: {
      orgDid: principal.orgDid,
      ...(query.kind ? { kind: query.kind } : {}),
      ...(query.status ? { status: query.status } : {}),
      ...olderThan(after, "createdAt", "id"),
    },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take,
  });
  const { items, pagination } = page(rows);
  const data = await Promise.all(
    items.map(async (s) => subscriptionView(s, s.kind === "webhook" ? await health(db, s) : undefined)),
  );
  return { data, pagination };
}

/**
 * Changes the target, patterns, description or status; `active` again starts the failure period
 * over. Re-enabling a webhook whose delegation was revoked binds it to the caller's delegation
 * (deliveries then act under it; `rebound_from_delegation_id` names the revoked one), or is 409
 * when the caller has none of its own to give (the platform's service).
 */
export async function updateWebhook(
  tx: Db,
  principal: Principal,
  id: string,
  body: z.output<typeof WebhookUpdateRequest>,
) {
  const row = await findWebhook(tx, principal, id);
  if (body.event_types !== undefined)
    assertMayRead(principal, body.event_types, Array.isArray(row.eventTypes) ? (row.eventTypes as string[]) : []);
  const reEnabling = body.status === "active" && row.status !== "active";
  let rebind: { createdByDelegationId: string; reboundFromDelegationId: string } | undefined;
  if (reEnabling && row.createdByDelegationId && (await delegationRevoked(tx, row.createdByDelegationId))) {
    if (!principal.delegationId) {
      throw Conflict(
        `The webhook's delegation ${row.createdByDelegationId} was revoked, and this caller has no delegation to bind it to.`,
        { revoked_delegation_id: row.createdByDelegationId, current_state: row.status },
      );
    }
    // The caller must be able to read what the webhook delivers, as if creating it.
    assertMayRead(principal, Array.isArray(row.eventTypes) ? (row.eventTypes as string[]) : []);
    rebind = { createdByDelegationId: principal.delegationId, reboundFromDelegationId: row.createdByDelegationId };
  }
  const updated = await tx.subscription.update({
    where: { id: row.id },
    data: {
      ...(body.target_url !== undefined ? { targetUrl: targetUrl(body.target_url) } : {}),
      ...(body.event_types !== undefined ? { eventTypes: [...new Set(body.event_types)] } : {}),
      ...(body.description !== undefined ? { description: body.description ?? "" } : {}),
      ...(reEnabling ? { status: "active", disabledReason: null, failingSince: null } : {}),
      ...(rebind ?? {}),
      ...(body.status === "disabled" && row.status !== "disabled"
        ? { status: "disabled", disabledReason: "manual" }
        : {}),
    },
  });
  await subscriptionsChanged(tx);
  return webhookView(updated, await health(tx, updated));
}

/** Removes the webhook and its delivery log; queued attempts find it gone and send nothing. */
export async function deleteWebhook(tx: Db, principal: Principal, id: string) {
  const row = await findWebhook(tx, principal, id);
  await tx.webhookDelivery.deleteMany({ where: { subscriptionId: row.id } });
  await tx.subscription.delete({ where: { id: row.id } });
  await subscriptionsChanged(tx);
  return { id: row.id, deleted: true as const };
}

/** A new secret signs from now on; the previous one signs beside it for 24 hours. */
export async function rotateWebhookSecret(tx: Db, principal: Principal, id: string) {
  const row = await findWebhook(tx, principal, id);
  const secret = newWebhookSecret();
  const previousExpiresAt = new Date(Date.now() + SECRET_OVERLAP_MS);
  await tx.subscription.update({
    where: { id: row.id },
    data: {
      secretSealed: await sealWebhookSecret(row.orgDid, row.id, secret),
      previousSecretSealed: row.secretSealed,
      previousExpiresAt,
    },
  });
  return { secret, previous_expires_at: previousExpiresAt.toISOString() };
}

/** The webhook's delivery attempts, newest first. */
export async function listDeliveries(
  db: Db,
  principal: Principal,
  id: string,
  query: z.output<typeof WebhookDeliveryListQuery>,
  secret: Buffer,
) {
  const row = await findWebhook(db, principal, id);
  const { after, take, page } = keyset<WebhookDelivery>(secret, `webhook-deliveries:${row.id}`, query, (last) => [
    last.createdAt.toISOString(),
    last.id,
  ]);
  const rows = await db.webhookDelivery.findMany({
    where: {
      subscriptionId: row.id,
      ...(query.event_id ? { eventId: query.event_id } : {}),
      ...(query.success ? { success: query.success === "true" } : {}),
      ...olderThan(after, "createdAt", "id"),
    },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take,
  });
  const { items, pagination } = page(rows);
  return { data: items.map(deliveryView), pagination };
}

/** One delivery attempt, with what was sent and what came back. */
export async function getDelivery(db: Db, principal: Principal, id: string, deliveryId: string) {
  const row = await findWebhook(db, principal, id);
  const delivery = await db.webhookDelivery.findFirst({ where: { id: deliveryId, subscriptionId: row.id } });
  if (!delivery) throw NotFound("delivery", deliveryId);
  return deliveryView(delivery);
}

/** Queues one more attempt at a delivery's event (a replay), outside the retry schedule. */
export async function retryDelivery(tx: Db, principal: Principal, id: string, deliveryId: string) {
  const row = await findWebhook(tx, principal, id);
  const delivery = await tx.webhookDelivery.findFirst({ where: { id: deliveryId, subscriptionId: row.id } });
  if (!delivery) throw NotFound("delivery", deliveryId);
  if (row.status !== "active")
    throw Conflict(
      `The webhook is ${row.status}${row.disabledReason ? ` (${row.disabledReason})` : ""}; PATCH it to status active first.`,
      { current_state: row.status },
    );
  await enqueue(
    tx,
    DELIVER_JOB,
    { subscriptionId: row.id, eventId: delivery.eventId, manual: true },
    { ...deliverJobOptions(row.orgDid), maxAttempts: 1 },
  );
  return { webhook_id: row.id, event_id: delivery.eventId, status: "queued" as const };
}
