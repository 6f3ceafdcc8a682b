import { config } from "../config";
import { sqlIn, type Db } from "../db/client";
import type { RawQueryable } from "../db/raw";

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
 * of the delegate followed by a revocation check of the chain cost three. Raw SQL (`q`: the
 * driver, or `sqlIn` of a transaction): it runs before every webhook delivery.
 */
export async function delegationStanding(q: RawQueryable, id: string): Promise<DelegationStanding> {
  const [d] = await q.query<{ delegate_did: string; ancestry: string; revoked_at: unknown }>(
    `SELECT "delegate_did", "ancestry", "revoked_at" FROM "delegation" WHERE "id" = $1`,
    [id],
  );
  if (!d) return { delegateDid: null, revoked: true };
  if (d.revoked_at !== null && d.revoked_at !== undefined) return { delegateDid: d.delegate_did, revoked: true };
  const ancestors = d.ancestry.split(" ").filter(Boolean);
  const revoked =
    ancestors.length > 0 &&
    (
      await q.query(
        `SELECT 1 AS "revoked" FROM "delegation" WHERE "id" IN (${ancestors.map((_, i) => `$${i + 1}`).join(",")}) AND "revoked_at" IS NOT NULL LIMIT 1`,
        ancestors,
      )
    ).length > 0;
  return { delegateDid: d.delegate_did, revoked };
}

/**
 * Whether a delegation can no longer act: it, or one of its ancestors, was revoked (a missing
 * one counts as revoked). For work svc does later on someone's behalf, which must stop when the
 * authority behind it ends.
 */
export async function delegationRevoked(db: Db, id: string): Promise<boolean> {
  return (await delegationStanding(sqlIn(db, config().engine), id)).revoked;
}
