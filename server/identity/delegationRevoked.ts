import type { Db } from "../db/client";

/**
 * Whether a delegation can no longer act: it, or one of its ancestors, was revoked (a missing
 * one counts as revoked). For work svc does later on someone's behalf (a webhook's deliveries),
 * which must stop when the authority behind it ends.
 */
export async function delegationRevoked(db: Db, id: string): Promise<boolean> {
  const d = await db.delegation.findUnique({ where: { id }, select: { ancestry: true } });
  if (!d) return true;
  const chain = [...d.ancestry.split(" ").filter(Boolean), id];
  return (await db.delegation.count({ where: { id: { in: chain }, revokedAt: { not: null } } })) > 0;
}
