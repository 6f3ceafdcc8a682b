import type { Database, Db } from "../db/client";
import type { Subscription } from "../db/generated/sqlite/client";
import { subscriptionsChanged } from "../events/matcher";
import { putPlatformEvent } from "../events/platformEvents";
import { ledgerTarget } from "../signing/signedPost";
import { webhookChanged } from "./webhookChanged";

export type DisabledReason = "gone" | "failing" | "delegation_revoked";

/**
 * Stops deliveries to a webhook (queued attempts find it disabled and send nothing) and puts a
 * platform event `webhook.disabled` on the organization's bus (delivered to the webhooks that
 * subscribe to it), with a provenance record, in the same transaction.
 */
export async function disableWebhook(
  tx: Db,
  engine: Database["engine"],
  s: Subscription,
  reason: DisabledReason,
): Promise<void> {
  const { count } = await tx.subscription.updateMany({
    where: { id: s.id, status: "active" },
    data: { status: "disabled", disabledReason: reason },
  });
  if (count === 0) return;
  webhookChanged(tx, s);
  await subscriptionsChanged(tx);
  const payload = {
    webhook_id: s.id,
    target_url: ledgerTarget(s.targetUrl),
    reason,
    failing_since: s.failingSince?.toISOString() ?? null,
  };
  await putPlatformEvent(tx, engine, s.orgDid, { type: "webhook.disabled", payload, source: "svc" });
}
