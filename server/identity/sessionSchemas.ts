import { z } from "zod";
import { DelegationBudget } from "./budgetSchemas";
import { EXAMPLE } from "../openapi/examples";
import { Capability, Tier, Timestamp } from "./passportSchemas";

// Pure zod: exchanging a credential for a session token.

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
