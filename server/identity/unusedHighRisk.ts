import type { Db } from "../db/client";
import type { Principal } from "../governance/principal";
import { covers } from "./capabilities";
import { capabilityCatalogue } from "./capabilityCatalogue";
import { DEFAULT_USAGE_DAYS, usageRows } from "./capabilityUsage";
import { delegationCounts } from "./usageRollup";

/**
 * High-risk capabilities: every `:admin`, and the identity writes (registering passports, issuing
 * and revoking delegations), which a leaked key would use to spread itself.
 */
export function highRiskCapabilities(): string[] {
  return capabilityCatalogue()
    .map((c) => c.capability)
    .filter((c) => c.endsWith(":admin") || c === "svc_api:passports:write" || c === "svc_api:delegations:write");
}

/** Read from the catalogue the root filled (server/areas.ts), so an area's own `:admin` counts too. */
const isHighRisk = (held: string) => highRiskCapabilities().some((c) => covers(held, c));

/** Keys looked at per overview, newest first, and keys listed. */
const MAX_KEYS = 20;
const MAX_LISTED = 5;

/**
 * The organization's live keys and delegation tokens that hold a high-risk capability (or a
 * wildcard covering one) nothing was let through under in the last 30 days, their derived
 * delegations' calls included: the overview's "Needs attention". Counted from the usage rollup.
 */
export async function unusedHighRisk(db: Db, principal: Principal, now = new Date()) {
  const keys = await db.delegation.findMany({
    where: {
      orgDid: principal.orgDid,
      kind: { in: ["api_key", "delegation_token"] },
      revokedAt: null,
      expiresAt: { gt: now },
    },
    orderBy: { createdAt: "desc" },
    select: { id: true, name: true, kind: true, capabilities: true },
    take: 200,
  });
  const since = new Date(now.getTime() - DEFAULT_USAGE_DAYS * 86_400_000);
  const listed = [];
  for (const k of keys.filter((k) => (k.capabilities as string[]).some(isHighRisk)).slice(0, MAX_KEYS)) {
    const counts = await delegationCounts(db, principal.orgDid, [k.id], since);
    const { unused } = usageRows(k.capabilities as string[], counts);
    const risky = unused.filter(isHighRisk);
    if (risky.length > 0) listed.push({ id: k.id, name: k.name, kind: k.kind, unused: risky });
    if (listed.length === MAX_LISTED) break;
  }
  return listed;
}
