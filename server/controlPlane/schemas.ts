import { z } from "zod";
import { PaginationInfo } from "../http/listSchemas";
import { EXAMPLE } from "../openapi/examples";

export const DeploymentMode = z.enum(["cloud", "self_hosted", "hybrid"]);
export const AutonomyProfile = z.enum(["paranoid", "balanced", "aggressive"]);
export const DataResidencyTier = z.enum(["local_only", "regional", "global"]);

export const CpOrg = z
  .object({
    org_did: z.string().describe("Organization passport DID"),
    name: z.string(),
    slug: z.string(),
    deployment_mode: DeploymentMode,
    autonomy_profile: AutonomyProfile.nullable().optional(),
    data_residency_tier: DataResidencyTier.nullable().optional(),
    parent_org_did: z.string().nullable().describe("The organization that created it; null for the root organization"),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({
    id: "CpOrg",
    example: {
      org_did: EXAMPLE.orgDid,
      name: "Acme Logistics",
      slug: "acme-logistics",
      deployment_mode: "cloud",
      autonomy_profile: "balanced",
      data_residency_tier: "regional",
      parent_org_did: EXAMPLE.rootOrgDid,
      created_at: EXAMPLE.createdAt,
      updated_at: EXAMPLE.createdAt,
    },
  });

export const CreateCpOrgRequest = z
  .object({
    org_did: z
      .string()
      .min(8)
      .max(512)
      .describe("DID of an organization passport registered in the caller's organization"),
    name: z.string().trim().min(1).max(200),
    slug: z
      .string()
      .min(1)
      .max(63)
      .regex(/^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/, "lower-case letters, digits and inner hyphens")
      .optional(),
    deployment_mode: DeploymentMode.default("cloud"),
    autonomy_profile: AutonomyProfile.optional(),
    data_residency_tier: DataResidencyTier.optional(),
  })
  .strict()
  .meta({
    id: "CreateCpOrgRequest",
    example: {
      org_did: EXAMPLE.orgDid,
      name: "Acme Logistics",
      deployment_mode: "cloud",
      data_residency_tier: "regional",
    },
  });

export const UpdateCpOrgRequest = z
  .object({
    name: z.string().trim().min(1).max(200).optional(),
    deployment_mode: DeploymentMode.optional(),
    autonomy_profile: AutonomyProfile.nullable().optional(),
    data_residency_tier: DataResidencyTier.nullable().optional(),
  })
  .strict()
  .meta({ id: "UpdateCpOrgRequest", example: { autonomy_profile: "paranoid" } });

export const OrgDidParams = z.object({ org_did: z.string().min(8).max(512) });

export const CpOrgList = z.object({ data: z.array(CpOrg), pagination: PaginationInfo }).meta({
  id: "CpOrgList",
  example: {
    data: [
      {
        org_did: EXAMPLE.orgDid,
        name: "Acme Logistics",
        slug: "acme-logistics",
        deployment_mode: "cloud",
        autonomy_profile: "balanced",
        data_residency_tier: "regional",
        parent_org_did: EXAMPLE.rootOrgDid,
        created_at: EXAMPLE.createdAt,
        updated_at: EXAMPLE.createdAt,
      },
    ],
    pagination: { has_more: false, next_cursor: null },
  },
});
