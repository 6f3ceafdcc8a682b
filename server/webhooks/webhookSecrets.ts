import type { Subscription } from "../db/generated/sqlite/client";
import { decryptSecret, encryptSecret } from "../signing/webhookSecrets";

/** How long a rotated-out secret keeps signing, so receivers can switch without losing a delivery. */
export const SECRET_OVERLAP_MS = 24 * 3600 * 1000;

// Bound to the organization and the webhook: a sealed secret copied into another row does not open.
const context = (orgDid: string, webhookId: string) => `${orgDid}|webhook|${webhookId}`;

export const sealWebhookSecret = (orgDid: string, webhookId: string, secret: string) =>
  encryptSecret(secret, context(orgDid, webhookId));

/** Every secret a delivery is signed with now: the current one, then the previous while it overlaps. */
export async function deliverySecrets(s: Subscription, now = new Date()): Promise<string[]> {
  const sealed = [
    s.secretSealed,
    s.previousExpiresAt && s.previousExpiresAt > now ? s.previousSecretSealed : null,
  ].filter((v): v is string => !!v);
  return Promise.all(sealed.map((v) => decryptSecret(v, context(s.orgDid, s.id))));
}
