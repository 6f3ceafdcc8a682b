import type { z } from "zod";
import type { Db } from "../db/client";
import type { Organization } from "../db/generated/sqlite/client";
import { Conflict, Forbidden, NotFound, ValidationFailed } from "../errors";
import { keyset, olderThan, type ListQuery } from "../http/cursor";
import type { Principal } from "../governance/principal";
import type { CpOrg, CreateCpOrgRequest, UpdateCpOrgRequest } from "./schemas";

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

/** An organization record belongs to the organization that created it; each also sees itself. */
const visibleTo = (principal: Principal) => ({
  OR: [{ orgDid: principal.orgDid }, { parentOrgDid: principal.orgDid }],
});

export function slugify(name: string): string {
  return (
    name
      .toLowerCase()
      .normalize("NFKD")
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 48) || "org"
  );
}

/**
 * Creates an organization (a tenant) for an organization passport registered in the caller's
 * organization. The new organization's own credentials come from `npx svc keys create --org`.
 */
export async function createOrg(db: Db, principal: Principal, input: z.output<typeof CreateCpOrgRequest>) {
  const passport = await db.passport.findFirst({ where: { did: input.org_did, orgDid: principal.orgDid } });
  if (!passport || passport.type !== "organization") {
    throw ValidationFailed([
      {
        field: "org_did",
        code: "UNKNOWN_PASSPORT",
        message: "org_did must be an organization passport registered in your organization (POST /v1/passports).",
      },
    ]);
  }
  if (await db.organization.findUnique({ where: { orgDid: input.org_did }, select: { orgDid: true } })) {
    throw Conflict("An organization already exists for this passport.");
  }
  let slug = input.slug ?? slugify(input.name);
  if (await db.organization.findUnique({ where: { slug }, select: { slug: true } })) {
    if (input.slug) throw Conflict(`The slug ${JSON.stringify(slug)} is taken.`);
    slug = `${slug}-${input.org_did
      .slice(-6)
      .toLowerCase()
      .replace(/[^a-z0-9]/g, "x")}`;
  }
  const row = await db.organization.create({
    data: {
      orgDid: input.org_did,
      name: input.name,
      slug,
      deploymentMode: input.deployment_mode,
      autonomyProfile: input.autonomy_profile ?? null,
      dataResidencyTier: input.data_residency_tier ?? null,
      parentOrgDid: principal.orgDid,
    },
  });
  return orgView(row);
}

export async function getOrg(db: Db, principal: Principal, orgDid: string) {
  const row = await db.organization.findFirst({ where: { orgDid, ...visibleTo(principal) } });
  if (!row) throw NotFound("organization", orgDid);
  return orgView(row);
}

export async function listOrgs(db: Db, principal: Principal, query: z.output<typeof ListQuery>, secret: Buffer) {
  const { after, take, page } = keyset<Organization>(secret, "cp-orgs", query, (last) => [
    last.createdAt.toISOString(),
    last.orgDid,
  ]);
  const rows = await db.organization.findMany({
    where: {
      AND: [visibleTo(principal), olderThan(after, "createdAt", "orgDid")],
    },
    orderBy: [{ createdAt: "desc" }, { orgDid: "desc" }],
    take,
  });
  const { items, pagination } = page(rows);
  return { data: items.map(orgView), pagination };
}

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
