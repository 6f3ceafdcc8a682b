import type { Db } from "../db/client";
import { NotFound } from "../errors";
import type { Principal } from "../governance/principal";
import { derivedCount, usageRows, usageSince } from "./capabilityUsage";
import { delegationCounts } from "./usageRollup";

/**
 * What a delegation really used since `since` (default 30 days back): per capability it holds,
 * the calls let through and refused under it and under every delegation derived from it, and the
 * capabilities nothing was let through under. Counted from the usage rollup, kept as provenance
 * records are written (usageRollup.ts), never by scanning the log. Another organization's
 * delegation is a 404, as on GET /v1/delegations/{id}.
 */
export async function getDelegationUsage(db: Db, principal: Principal, id: string, sinceParam?: string) {
  const since = usageSince(sinceParam);
  const delegation = await db.delegation.findFirst({
    where: { id, orgDid: principal.orgDid },
    select: { id: true, capabilities: true },
  });
  if (!delegation) throw NotFound("delegation", id);
  const counts = await delegationCounts(db, principal.orgDid, [id], since);
  return {
    delegation_id: id,
    since: since.toISOString(),
    ...usageRows(delegation.capabilities as string[], counts),
    derived_delegations: await derivedCount(db, id),
  };
}
