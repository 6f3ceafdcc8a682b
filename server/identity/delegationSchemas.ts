import { z } from "zod";
import { DelegationBudget } from "./budgetSchemas";
import { PaginationInfo } from "../http/listSchemas";
import { EXAMPLE } from "../openapi/examples";
import { Capability, Did, Timestamp } from "./passportSchemas";

// Pure zod: delegations and the token request that issues one.

export const IdParams = z.object({ id: z.string().min(1).max(100) });

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
