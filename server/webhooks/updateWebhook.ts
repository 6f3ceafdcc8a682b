import type { z } from "zod";
import type { Db } from "../db/client";
import { Conflict } from "../errors";
import type { Principal } from "../governance/principal";
import { subscriptionsChanged } from "../events/matcher";
import { delegationRevoked } from "../identity/delegationRevoked";
import type { WebhookUpdateRequest } from "./schemas";
import { webhookView } from "./views";
import { findWebhook } from "./findWebhook";
import { webhookHealth } from "./webhookHealth";
import { assertMayRead, webhookTargetUrl } from "./webhookRules";

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
      ...(body.target_url !== undefined ? { targetUrl: webhookTargetUrl(body.target_url) } : {}),
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
  return webhookView(updated, await webhookHealth(tx, updated));
}
