import type { z } from "zod";
import type { Db } from "../db/client";
import { Forbidden, NotFound } from "../errors";
import type { Principal } from "../governance/principal";
import type { UpdateCpOrgRequest } from "./schemas";
import { visibleTo } from "./orgVisibility";
import { orgView } from "./views";

/**
 * What an organization's creator decided for it: where its data may live, how much autonomy its
 * agents get, how it is deployed. A tenant that could rewrite these would undo its operator's
 * decisions, so only the organization that created it (its parent) changes them; an organization
 * with no parent (the root, the operator itself) changes its own. Its `name` is its own to change.
 */
const GOVERNED_FIELDS = ["deployment_mode", "autonomy_profile", "data_residency_tier"] as const;

/** Updates an organization the caller sees: the caller's own, or one it created (see GOVERNED_FIELDS for who may change what). */
export async function updateOrg(
  db: Db,
  principal: Principal,
  orgDid: string,
  input: z.output<typeof UpdateCpOrgRequest>,
) {
  const found = await db.organization.findFirst({ where: { orgDid, ...visibleTo(principal) } });
  if (!found) throw NotFound("organization", orgDid);
  const decidesFor = found.parentOrgDid === null ? found.orgDid : found.parentOrgDid;
  if (decidesFor !== principal.orgDid) {
    const current = orgView(found);
    const changed = GOVERNED_FIELDS.filter((f) => input[f] !== undefined && input[f] !== (current[f] ?? null));
    if (changed.length > 0) {
      throw Forbidden(
        `${changed.join(", ")} of an organization ${changed.length === 1 ? "is" : "are"} set by the organization that created it (${found.parentOrgDid}); an organization may change only its own name.`,
        {
          fields: changed,
          decided_by: found.parentOrgDid,
          remediation: [
            {
              step: 1,
              description: `Ask the parent organization (${found.parentOrgDid}) to make this change with PATCH /v1/cp/orgs/${orgDid} and its own key.`,
            },
          ],
        },
      );
    }
  }
  const row = await db.organization.update({
    where: { orgDid },
    data: {
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.deployment_mode !== undefined ? { deploymentMode: input.deployment_mode } : {}),
      ...(input.autonomy_profile !== undefined ? { autonomyProfile: input.autonomy_profile } : {}),
      ...(input.data_residency_tier !== undefined ? { dataResidencyTier: input.data_residency_tier } : {}),
    },
  });
  return orgView(row);
}
