import type { z } from "zod";
import type { Organization } from "../db/generated/sqlite/client";
import type { CpOrg } from "./schemas";

/** An organization as /v1/cp/orgs shows it. */
export function orgView(o: Organization): z.input<typeof CpOrg> {
  return {
    org_did: o.orgDid,
    name: o.name,
    slug: o.slug,
    deployment_mode: o.deploymentMode as "cloud" | "self_hosted" | "hybrid",
    autonomy_profile: (o.autonomyProfile as "paranoid" | "balanced" | "aggressive" | null) ?? null,
    data_residency_tier: (o.dataResidencyTier as "local_only" | "regional" | "global" | null) ?? null,
    parent_org_did: o.parentOrgDid,
    created_at: o.createdAt.toISOString(),
    updated_at: o.updatedAt.toISOString(),
  };
}
