import { database } from "../db/client";
import type { SubscriptionDispatcher } from "../events/dispatch";
import type { RevocationHook } from "../identity/revocationHooks";
import { scheduleDelivery } from "./deliveryJob";
import { disableWebhook } from "./disableWebhook";

// What the webhooks area does when other areas act: registered by the composition root (server/areas.ts).

/** Revoking the delegation that created a webhook disables it, in the revoking transaction. */
export const disableWebhooksOfRevokedDelegations: RevocationHook = async (tx, ids) => {
  const rows = await tx.subscription.findMany({
    where: { kind: "webhook", status: "active", createdByDelegationId: { in: [...ids] } },
  });
  if (rows.length === 0) return;
  const { engine } = await database();
  for (const row of rows) await disableWebhook(tx, engine, row, "delegation_revoked");
};

/** A webhook matching an event gets its delivery scheduled in the transaction that put the event on the bus. */
export const dispatchToWebhook: SubscriptionDispatcher = async (tx, { event, subscription }) => {
  await scheduleDelivery(tx, event, subscription);
};
