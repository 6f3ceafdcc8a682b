import { z } from "zod";
import { PaginationInfo } from "../http/listSchemas";
import { CAPABILITY_PATTERN } from "./capabilities";
import { EXAMPLE } from "../openapi/examples";
import { isKnownCapability } from "./capabilityCatalogue";

// Pure zod: passports, and the DID, capability and tier every identity shape uses.

export const Did = z
  .string()
  .min(8)
  .max(512)
  .regex(/^did:[a-z0-9]+:[A-Za-z0-9._:%\-]+$/, "must be a DID (did:<method>:<id>)");

// A capability the catalogue does not list would be issued and silently grant nothing: refused, named.
export const Capability = z
  .string()
  .min(3)
  .max(200)
  .regex(CAPABILITY_PATTERN, "must be a capability such as svc_api:agents:read or svc_api:agents:*")
  .superRefine((value, ctx) => {
    if (CAPABILITY_PATTERN.test(value) && !isKnownCapability(value)) {
      ctx.addIssue({
        code: "custom",
        message: `Unknown capability ${JSON.stringify(value)}: not in the capability catalogue of this service.`,
        params: { code: "UNKNOWN_CAPABILITY" },
      });
    }
  });

export const Tier = z.number().int().min(0).max(3);

export const Timestamp = z.string().describe("ISO 8601 date-time");

export const PublicJwk = z
  .object({
    kty: z.string(),
    crv: z.string().optional(),
    x: z.string().optional(),
    y: z.string().optional(),
    d: z.string().optional(),
  })
  .passthrough()
  .describe("A public JWK: Ed25519 (kty OKP) or P-256 (kty EC). A JWK with a private part (d) is refused.");

export const PassportType = z
  .enum(["agent", "organization", "human"])
  .describe("human passports come only from the console's WebAuthn registration");

/** Passport types a caller may register (human passports come from the console's WebAuthn registration). */
export const RegisterablePassportType = z.enum(["agent", "organization"]);

export const Passport = z
  .object({
    did: z.string().describe("did:key of the passport's public key"),
    type: PassportType,
    name: z.string(),
    description: z.string().nullable(),
    org_did: z.string().describe("The organization the passport belongs to"),
    verification_tier: Tier.describe("0 for a new passport; set by an organization administrator"),
    identity_tier: Tier.describe("0 for a new passport; set by an organization administrator"),
    public_key_jwk: z.record(z.string(), z.unknown()),
    created_at: Timestamp,
  })
  .meta({
    id: "Passport",
    example: {
      did: EXAMPLE.agentDid,
      type: "agent",
      name: "invoice-triage",
      description: "Reads supplier invoices and routes them for approval",
      org_did: EXAMPLE.rootOrgDid,
      verification_tier: 1,
      identity_tier: 0,
      public_key_jwk: EXAMPLE.agentJwk,
      created_at: EXAMPLE.createdAt,
    },
  });

export const CreatePassportRequest = z
  .object({
    type: RegisterablePassportType.describe(
      "agent or organization; human passports are created by WebAuthn registration in the console",
    ),
    name: z.string().trim().min(1).max(200),
    public_key: z
      .union([PublicJwk, z.string().min(10).max(512)])
      .describe("A public JWK, or a did:key / its multibase key string"),
    description: z.string().max(2000).nullable().optional(),
  })
  .strict()
  .meta({
    id: "CreatePassportRequest",
    example: {
      type: "agent",
      name: "invoice-triage",
      public_key: { ...EXAMPLE.agentJwk },
      description: "Reads supplier invoices and routes them for approval",
    },
  });

export const UpdatePassportRequest = z
  .object({
    verification_tier: Tier.optional(),
    identity_tier: Tier.optional(),
    name: z.string().trim().min(1).max(200).optional(),
    description: z.string().max(2000).nullable().optional(),
  })
  .strict()
  .meta({
    id: "UpdatePassportRequest",
    example: { verification_tier: 1, description: "Reads supplier invoices and routes them for approval" },
  });

export const PassportListQuery = z.object({
  type: PassportType.optional().describe("Only passports of this type"),
});

export const PassportList = z.object({ data: z.array(Passport), pagination: PaginationInfo }).meta({
  id: "PassportList",
  example: {
    data: [
      {
        did: EXAMPLE.agentDid,
        type: "agent",
        name: "invoice-triage",
        description: "Reads supplier invoices and routes them for approval",
        org_did: EXAMPLE.rootOrgDid,
        verification_tier: 1,
        identity_tier: 0,
        public_key_jwk: EXAMPLE.agentJwk,
        created_at: EXAMPLE.createdAt,
      },
    ],
    pagination: { has_more: true, next_cursor: EXAMPLE.nextCursor },
  },
});

export const DidParams = z.object({ did: Did });
