import { z } from "zod";
import { PaginationInfo } from "../http/listSchemas";
import { CAPABILITY_PATTERN } from "./capabilities";
import { EXAMPLE } from "../openapi/examples";
import { isKnownCapability } from "./capabilityCatalogue";

// ── budgets (inside delegations): issued here, enforced by reasoning (server/reasoning/budgets.ts) ──

export const BudgetPeriod = z.enum(["total", "day", "month"]);

export const DelegationBudget = z
  .object({
    limit_usd: z
      .number()
      .min(0.000001)
      .max(1_000_000)
      .describe("The most reasoning calls under this delegation may cost, USD: more than 0 (at least 0.000001)"),
    period: BudgetPeriod.describe("total: over the delegation's life; day / month: per UTC day / calendar month"),
  })
  .strict()
  .describe("A spending limit for reasoning calls; a derived delegation's budget can only narrow its grantor's")
  .meta({ id: "DelegationBudget", example: { limit_usd: 5, period: "day" } });

const Did = z
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
const Tier = z.number().int().min(0).max(3);
const Timestamp = z.string().describe("ISO 8601 date-time");

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
export const IdParams = z.object({ id: z.string().min(1).max(100) });

export const RiskLevel = z.enum(["low", "standard", "high"]);

export const SessionExchangeRequest = z
  .object({
    capabilities: z
      .array(Capability)
      .max(100)
      .optional()
      .describe(
        "Requested capabilities; when empty, svc_api:agents:read, svc_api:agents:invoke, and svc_api:reasoning:think once the service offers reasoning",
      ),
    scopes: z.array(Capability).max(100).optional().describe("Alias of capabilities"),
    duration_seconds: z
      .number()
      .int()
      .min(1)
      .max(2_592_000)
      .optional()
      .describe("Lifetime, 1 to 2592000 seconds; default 86400 (or what is left of the caller's delegation, if less)"),
    environment: z.string().min(1).max(100).optional(),
    risk_level: RiskLevel.optional().describe("default standard"),
    required_verification_tier: Tier.optional(),
    required_identity_tier: Tier.optional(),
    budget: DelegationBudget.optional().describe(
      "A spending limit for reasoning calls made with the session; it can only narrow the caller's",
    ),
  })
  .strict()
  .meta({
    id: "SessionExchangeRequest",
    example: { capabilities: [...EXAMPLE.capabilities], duration_seconds: 3600, risk_level: "standard" },
  });

export const SessionExchangeResponse = z
  .object({
    delegation_id: z.string().describe("Unique grant id"),
    token: z.string().describe("Bearer token (JWT)"),
    passport_id: z.string().describe("Passport DID that owns the delegation"),
    did: z.string(),
    capabilities: z.array(z.string()),
    created_at: Timestamp,
    expires_at: Timestamp,
    verification_tier: z.number().int().optional(),
    identity_tier: z.number().int().optional(),
    budget: DelegationBudget.optional().describe("The delegation's own reasoning budget, when it has one"),
  })
  .meta({
    id: "SessionExchangeResponse",
    example: {
      delegation_id: EXAMPLE.delegationId,
      token: EXAMPLE.token,
      passport_id: EXAMPLE.agentDid,
      did: EXAMPLE.agentDid,
      capabilities: [...EXAMPLE.capabilities],
      created_at: EXAMPLE.createdAt,
      expires_at: EXAMPLE.expiresAt,
      verification_tier: 1,
      identity_tier: 0,
    },
  });

export const DelegationTokenRequest = z
  .object({
    delegate_did: Did.describe("The passport that receives the delegation (in the caller's organization)"),
    capabilities: z.array(Capability).min(1).max(100),
    duration_seconds: z.number().int().min(1).max(2_592_000),
    environment: z.string().min(1).max(100).optional(),
    budget: DelegationBudget.optional().describe(
      "A spending limit for reasoning calls under the delegation (and those derived from it); it can only narrow the caller's",
    ),
    name: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .optional()
      .describe("A name for the key, shown in the console (API keys, Spend) and on GET /v1/delegations/{id}"),
  })
  .strict()
  .meta({
    id: "DelegationTokenRequest",
    example: {
      delegate_did: EXAMPLE.agentDid,
      capabilities: [...EXAMPLE.capabilities],
      duration_seconds: 86400,
      environment: "production",
      name: "invoice-bot key",
    },
  });

export const DelegationKind = z
  .enum(["api_key", "delegation_token", "session", "member", "execution", "trigger"])
  .describe(
    "member: a console member's standing grant, from which their sessions and the API keys they create derive; execution: the delegation an agent run acts under, derived from its invoker's (revoked with reason run_ended when the run ends); trigger: the authority an agent's event triggers carry, derived from whoever deployed or activated it, narrowed to its manifest",
  );
export const DelegationStatus = z.enum(["active", "expired", "revoked"]);

const DELEGATION_EXAMPLE = {
  id: EXAMPLE.delegationId,
  org_did: EXAMPLE.rootOrgDid,
  kind: "delegation_token" as const,
  name: null,
  grantor_did: EXAMPLE.rootOrgDid,
  delegate_did: EXAMPLE.agentDid,
  parent_id: EXAMPLE.parentDelegationId,
  capabilities: [...EXAMPLE.capabilities],
  environment: "production",
  risk_level: "standard",
  status: "active" as const,
  created_at: EXAMPLE.createdAt,
  expires_at: EXAMPLE.expiresAt,
  revoked_at: null,
};

export const Delegation = z
  .object({
    id: z.string(),
    org_did: z.string(),
    kind: DelegationKind,
    name: z.string().nullable(),
    grantor_did: z.string().describe("Who allowed it"),
    delegate_did: z.string().describe("Who holds it"),
    parent_id: z.string().nullable().describe("The delegation it was derived from"),
    capabilities: z.array(z.string()),
    environment: z.string().nullable(),
    risk_level: z.string(),
    status: DelegationStatus,
    created_at: Timestamp,
    expires_at: Timestamp,
    revoked_at: Timestamp.nullable(),
  })
  .meta({ id: "Delegation", example: DELEGATION_EXAMPLE });

export const DelegationDetail = Delegation.extend({
  ancestry: z.array(z.string()).describe("Ancestor delegation ids, root first"),
  derived: z.array(Delegation).describe("Delegations derived directly from this one (up to 100)"),
}).meta({
  id: "DelegationDetail",
  example: {
    ...DELEGATION_EXAMPLE,
    ancestry: [EXAMPLE.parentDelegationId],
    derived: [],
  },
});

export const DelegationListQuery = z.object({
  status: DelegationStatus.optional(),
  kind: DelegationKind.optional(),
  delegate_did: z.string().max(512).optional(),
  parent_id: z.string().max(100).optional(),
});

export const DelegationList = z.object({ data: z.array(Delegation), pagination: PaginationInfo }).meta({
  id: "DelegationList",
  example: {
    data: [
      {
        id: EXAMPLE.delegationId,
        org_did: EXAMPLE.rootOrgDid,
        kind: "delegation_token",
        name: null,
        grantor_did: EXAMPLE.rootOrgDid,
        delegate_did: EXAMPLE.agentDid,
        parent_id: EXAMPLE.parentDelegationId,
        capabilities: [...EXAMPLE.capabilities],
        environment: "production",
        risk_level: "standard",
        status: "active",
        created_at: EXAMPLE.createdAt,
        expires_at: EXAMPLE.expiresAt,
        revoked_at: null,
      },
    ],
    pagination: { has_more: true, next_cursor: EXAMPLE.nextCursor },
  },
});

export const RevokeRequest = z
  .object({
    reason: z.string().max(1000).optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
  })
  .strict()
  .meta({ id: "RevokeRequest", example: { reason: "Agent decommissioned", metadata: { ticket: "OPS-1432" } } });

export const RevocationRecord = z
  .object({
    id: z.string(),
    delegation_id: z.string(),
    revoked_by: z.string().describe("DID of the actor who revoked it"),
    revoked_at: Timestamp,
    reason: z.string().nullable(),
    metadata: z.record(z.string(), z.unknown()).nullable(),
  })
  .meta({
    id: "RevocationRecord",
    example: {
      id: EXAMPLE.revocationId,
      delegation_id: EXAMPLE.delegationId,
      revoked_by: EXAMPLE.rootOrgDid,
      revoked_at: EXAMPLE.createdAt,
      reason: "Agent decommissioned",
      metadata: { ticket: "OPS-1432" },
    },
  });

export const RevocationList = z.object({ data: z.array(RevocationRecord), pagination: PaginationInfo }).meta({
  id: "RevocationList",
  example: {
    data: [
      {
        id: EXAMPLE.revocationId,
        delegation_id: EXAMPLE.delegationId,
        revoked_by: EXAMPLE.rootOrgDid,
        revoked_at: EXAMPLE.createdAt,
        reason: "Agent decommissioned",
        metadata: { ticket: "OPS-1432" },
      },
    ],
    pagination: { has_more: false, next_cursor: null },
  },
});

const RequiredCapabilities = z.array(Capability).min(1).max(100);

/**
 * `requiredCapabilities` is the spec's name; the answer says `required_capabilities`, so callers
 * who copy the answer's spelling are accepted too (input only). Exactly one of the two is given.
 */
export const CapabilityMatchRequest = z
  .object({
    requiredCapabilities: RequiredCapabilities.optional().describe(
      "The capabilities to match (the spec's name). Exactly one of requiredCapabilities and required_capabilities is required.",
    ),
    required_capabilities: RequiredCapabilities.optional().describe(
      "Alias of requiredCapabilities, spelled as in the response; send one or the other, not both.",
    ),
    agent_ids: z.array(z.string().max(512)).max(100).optional().describe("Only consider these passports / agents"),
  })
  .strict()
  .superRefine((body, ctx) => {
    if (body.requiredCapabilities && body.required_capabilities)
      ctx.addIssue({
        code: "custom",
        path: ["required_capabilities"],
        message: "Send requiredCapabilities or its alias required_capabilities, not both.",
        params: { code: "CONFLICTING_FIELDS" },
      });
    else if (!body.requiredCapabilities && !body.required_capabilities)
      ctx.addIssue({
        code: "custom",
        path: ["requiredCapabilities"],
        message: "requiredCapabilities is required.",
        params: { code: "REQUIRED_FIELD_MISSING" },
      });
  })
  .transform(({ requiredCapabilities, required_capabilities, ...rest }) => ({
    ...rest,
    requiredCapabilities: (requiredCapabilities ?? required_capabilities)!,
  }))
  .meta({
    id: "CapabilityMatchRequest",
    example: { requiredCapabilities: [...EXAMPLE.capabilities], agent_ids: [EXAMPLE.agentDid] },
  });

export const CapabilityMatch = z.object({
  passport_id: z.string(),
  type: PassportType,
  name: z.string(),
  covered: z.boolean().describe("Whether the passport's active delegations cover every required capability"),
  missing_capabilities: z.array(z.string()),
});

export const CapabilityMatchResponse = z
  .object({
    data: z.object({
      required_capabilities: z.array(z.string()),
      matches: z.array(CapabilityMatch).describe("Passports covering every required capability"),
      partial: z.array(CapabilityMatch).describe("Passports covering some but not all"),
    }),
  })
  .meta({
    id: "CapabilityMatchResponse",
    example: {
      data: {
        required_capabilities: [...EXAMPLE.capabilities],
        matches: [
          {
            passport_id: EXAMPLE.agentDid,
            type: "agent",
            name: "invoice-triage",
            covered: true,
            missing_capabilities: [],
          },
        ],
        partial: [],
      },
    },
  });

// The console's API key form (no /v1 route, so no OpenAPI component).
export const CreateApiKeyRequest = z
  .object({
    name: z.string().trim().min(1).max(200),
    capabilities: z.array(Capability).min(1).max(100),
    days: z
      .number()
      .int()
      .min(1)
      .max(3650)
      .default(90)
      .describe("Lifetime in days; it cannot outlive the delegation it derives from"),
  })
  .strict();

export const ApiKeyCreated = SessionExchangeResponse.extend({ name: z.string() });
