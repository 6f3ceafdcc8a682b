import type { Db } from "../db/client";
import type { Principal } from "../governance/principal";
import { newWebhookSecret } from "../signing/webhookSecrets";
import { SECRET_OVERLAP_MS, sealWebhookSecret } from "./webhookSecrets";
import { findWebhook } from "./findWebhook";

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
