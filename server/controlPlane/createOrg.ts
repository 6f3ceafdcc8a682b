import type { z } from "zod";
import type { Db } from "../db/client";
import { Conflict, ValidationFailed } from "../errors";
import type { Principal } from "../governance/principal";
import type { CreateCpOrgRequest } from "./schemas";
import { orgView } from "./views";

/** A URL-safe slug from a name ("org" when nothing is left of it). */
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
