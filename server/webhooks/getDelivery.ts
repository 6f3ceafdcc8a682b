import type { Db } from "../db/client";
import { NotFound } from "../errors";
import type { Principal } from "../governance/principal";
import { deliveryView } from "./views";
import { findWebhook } from "./findWebhook";

/** One delivery attempt, with what was sent and what came back. */
export async function getDelivery(db: Db, principal: Principal, id: string, deliveryId: string) {
  const row = await findWebhook(db, principal, id);
  const delivery = await db.webhookDelivery.findFirst({ where: { id: deliveryId, subscriptionId: row.id } });
  if (!delivery) throw NotFound("delivery", deliveryId);
  return deliveryView(delivery);
}
