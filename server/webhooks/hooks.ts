import { database } from "../db/client";
import { onDelegationsRevoked } from "../identity/revocationHooks";
import { registerSubscriptionDispatcher } from "../events/dispatch";
import { scheduleDelivery } from "./deliveryJob";
import { disableWebhook } from "./disableWebhook";

// What the webhooks area does when other areas act: loaded by its operations (the web process)
// and its tasks (the worker).

// Revoking the delegation that created a webhook disables it, in the revoking transaction.
onDelegationsRevoked("webhooks", async (tx, ids) => {
  const rows = await tx.subscription.findMany({ where: { kind: "webhook", status: "active", createdByDelegationId: { in: [...ids] } } });
  if (rows.length === 0) return;
  const { engine } = await database();
  for (const row of rows) await disableWebhook(tx, engine, row, "delegation_revoked");
});

// A webhook matching an event gets its delivery scheduled in the transaction that put the event on the bus.
registerSubscriptionDispatcher("webhook", async (tx, { event, subscription }) => {
  await scheduleDelivery(tx, event, subscription);
});
