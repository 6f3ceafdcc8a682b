import type { Db } from "../db/client";

/**
 * A delegation as work svc does later on someone's behalf sees it (a webhook's deliveries): who it
 * names as delegate, and whether it can still act. `revoked` is true when it, or one of its
 * ancestors, was revoked, or when it no longer exists (then `delegateDid` is null).
 */
export interface DelegationStanding {
  delegateDid: string | null;
  revoked: boolean;
}

/**
 * One read of the delegation (its delegate, its own revocation and its ancestry), and a second only
 * when it has ancestors that could be revoked: a root delegation costs one statement, where a read
 * of the delegate followed by a revocation check of the chain cost three.
 */
export async function delegationStanding(db: Db, id: string): Promise<DelegationStanding> {
  const d = await db.delegation.findUnique({
    where: { id },
    select: { delegateDid: true, ancestry: true, revokedAt: true },
  });
  if (!d) return { delegateDid: null, revoked: true };
  if (d.revokedAt) return { delegateDid: d.delegateDid, revoked: true };
  const ancestors = d.ancestry.split(" ").filter(Boolean);
  const revoked =
    ancestors.length > 0 &&
    (await db.delegation.count({ where: { id: { in: ancestors }, revokedAt: { not: null } } })) > 0;
  return { delegateDid: d.delegateDid, revoked };
}

/**
 * Whether a delegation can no longer act: it, or one of its ancestors, was revoked (a missing
 * one counts as revoked). For work svc does later on someone's behalf, which must stop when the
 * authority behind it ends.
 */
export async function delegationRevoked(db: Db, id: string): Promise<boolean> {
  return (await delegationStanding(db, id)).revoked;
}
