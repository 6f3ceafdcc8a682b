import type { Db } from "../db/client";
import type { Principal } from "../governance/principal";
import { missingCapabilities } from "./capabilities";

const MAX_CANDIDATES = 1000;

/**
 * Which passports of the caller's organization hold, through their active delegations, every one
 * of the required capabilities (`matches`), and which hold only some (`partial`).
 */
export async function matchCapabilities(db: Db, principal: Principal, required: string[], agentIds?: string[]) {
  const passports = await db.passport.findMany({
    where: { orgDid: principal.orgDid, ...(agentIds ? { did: { in: agentIds } } : {}) },
    orderBy: { createdAt: "asc" },
    take: MAX_CANDIDATES,
  });
  const delegations = await db.delegation.findMany({
    where: {
      orgDid: principal.orgDid,
      delegateDid: { in: passports.map((p) => p.did) },
      revokedAt: null,
      expiresAt: { gt: new Date() },
    },
    select: { delegateDid: true, capabilities: true },
  });
  const held = new Map<string, string[]>();
  for (const d of delegations)
    held.set(d.delegateDid, [...(held.get(d.delegateDid) ?? []), ...(d.capabilities as string[])]);
  const results = passports.map((p) => {
    const missing = missingCapabilities(held.get(p.did) ?? [], required);
    return {
      passport_id: p.did,
      type: p.type as "agent" | "organization" | "human",
      name: p.name,
      covered: missing.length === 0,
      missing_capabilities: missing,
    };
  });
  return {
    data: {
      required_capabilities: required,
      matches: results.filter((r) => r.covered),
      partial: results.filter((r) => !r.covered && r.missing_capabilities.length < required.length),
    },
  };
}
