import type { Subscription } from "../db/generated/sqlite/client";
import type { Db } from "../db/client";
import { type WebhookHealthValue } from "./views";

/** Health from the delivery log: last success and failure, failures since the last success. */
export async function webhookHealth(db: Db, s: Subscription): Promise<WebhookHealthValue> {
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
