import type { Db } from "../db/client";
import type { Principal } from "../governance/principal";
import { subscriptionsChanged } from "../events/matcher";
import { findWebhook } from "./findWebhook";

/** Removes the webhook and its delivery log; queued attempts find it gone and send nothing. */
export async function deleteWebhook(tx: Db, principal: Principal, id: string) {
  const row = await findWebhook(tx, principal, id);
  await tx.webhookDelivery.deleteMany({ where: { subscriptionId: row.id } });
  await tx.subscription.delete({ where: { id: row.id } });
  await subscriptionsChanged(tx);
  return { id: row.id, deleted: true as const };
}
