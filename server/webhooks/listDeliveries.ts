import type { z } from "zod";
import type { WebhookDelivery } from "../db/generated/sqlite/client";
import type { Db } from "../db/client";
import type { Principal } from "../governance/principal";
import { keyset, olderThan } from "../http/cursor";
import type { WebhookDeliveryListQuery } from "./schemas";
import { deliveryView } from "./views";
import { findWebhook } from "./findWebhook";

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
