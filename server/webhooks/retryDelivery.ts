import type { Db } from "../db/client";
import { Conflict, NotFound } from "../errors";
import type { Principal } from "../governance/principal";
import { enqueue } from "../jobs";
import { DELIVER_JOB, deliverJobOptions } from "./deliveryJob";
import { findWebhook } from "./findWebhook";

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
