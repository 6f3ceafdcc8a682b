import type { Db } from "../db/client";
import { newId } from "../ids";
import type { Principal } from "../governance/principal";
import { decryptSecret, encryptSecret, newWebhookSecret } from "../signing/webhookSecrets";

const PURPOSE = "callback";
/** How long a rotated-out secret keeps signing, so receivers can switch without losing a callback. */
const OVERLAP_MS = 24 * 3600 * 1000;
const context = (orgDid: string) => `${orgDid}|${PURPOSE}`;

async function current(tx: Db, orgDid: string) {
  return tx.signingSecret.findFirst({
    where: { orgDid, purpose: PURPOSE, expiresAt: null },
    orderBy: { createdAt: "desc" },
  });
}

async function create(tx: Db, orgDid: string): Promise<string> {
  const secret = newWebhookSecret();
  await tx.signingSecret.create({
    data: {
      id: newId("sec"),
      orgDid,
      purpose: PURPOSE,
      ciphertext: await encryptSecret(secret, context(orgDid)),
      createdAt: new Date(),
      expiresAt: null,
    },
  });
  return secret;
}

/** The organization's callback secret, created on first use. */
export async function callbackSecret(tx: Db, principal: Principal) {
  const row = await current(tx, principal.orgDid);
  return {
    secret: row ? await decryptSecret(row.ciphertext, context(principal.orgDid)) : await create(tx, principal.orgDid),
  };
}

/** A new secret becomes current; the previous one keeps signing for 24 hours beside it. */
export async function rotateCallbackSecret(tx: Db, principal: Principal) {
  const old = await current(tx, principal.orgDid);
  const previousExpiresAt = old ? new Date(Date.now() + OVERLAP_MS) : null;
  if (old) await tx.signingSecret.update({ where: { id: old.id }, data: { expiresAt: previousExpiresAt } });
  return { secret: await create(tx, principal.orgDid), previous_expires_at: previousExpiresAt?.toISOString() ?? null };
}

/** Every secret a callback is signed with now: the current one first, then those still overlapping. */
export async function signingSecrets(tx: Db, orgDid: string): Promise<string[]> {
  const rows = await tx.signingSecret.findMany({
    where: { orgDid, purpose: PURPOSE, OR: [{ expiresAt: null }, { expiresAt: { gt: new Date() } }] },
    orderBy: [{ createdAt: "desc" }],
  });
  const ordered = [...rows.filter((r) => r.expiresAt === null), ...rows.filter((r) => r.expiresAt !== null)];
  if (ordered.length === 0) return [await create(tx, orgDid)];
  return Promise.all(ordered.map((r) => decryptSecret(r.ciphertext, context(orgDid))));
}
