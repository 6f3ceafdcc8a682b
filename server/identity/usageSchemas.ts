import { z } from "zod";
import { EXAMPLE } from "../openapi/examples";
import { Capability, Timestamp } from "./passportSchemas";

// Pure zod: least privilege from evidence (issue 31): what a delegation or an agent really used,
// and what a narrower grant would have refused.

export const UsageQuery = z.object({
  since: z
    .string()
    .datetime({ offset: true })
    .optional()
    .describe(
      "RFC 3339 date-time to count from (default: 30 days ago), taken back to the start of its UTC day: usage is counted in whole days",
    ),
});

export const CapabilityUsage = z
  .object({
    capability: z.string().describe("A capability held, one a held wildcard covers that was used, or one refused"),
    granted: z
      .boolean()
      .describe(
        "Whether the grant covers it (a wildcard's covered capabilities are granted); false: only ever refused",
      ),
    calls: z.number().int().min(0).describe("Calls the gate let through under it since `since`"),
    refused: z.number().int().min(0).describe("Calls under it that the gate refused since `since`"),
    last_used_at: Timestamp.nullable().describe("The latest call let through under it since `since`; null: none"),
  })
  .meta({
    id: "CapabilityUsage",
    example: {
      capability: "svc_api:agents:invoke",
      granted: true,
      calls: 412,
      refused: 3,
      last_used_at: EXAMPLE.createdAt,
    },
  });

export const USAGE_EXAMPLE_ROWS = [
  { capability: "svc_api:agents:invoke", granted: true, calls: 412, refused: 3, last_used_at: EXAMPLE.createdAt },
  { capability: "svc_api:passports:read", granted: true, calls: 0, refused: 0, last_used_at: null },
];

export const DelegationUsage = z
  .object({
    delegation_id: z.string(),
    since: Timestamp.describe("Counted from: the start of the UTC day of the `since` asked for"),
    capabilities: z
      .array(CapabilityUsage)
      .describe(
        "Every capability the delegation holds (a wildcard also expanded to the capabilities it covers that were used), then any refused that it does not hold; calls of its derived delegations included",
      ),
    unused: z.array(z.string()).describe("Capabilities held with no call let through since `since`"),
    derived_delegations: z.number().int().min(0).describe("Delegations derived from it (at any depth), counted in"),
  })
  .meta({
    id: "DelegationUsage",
    example: {
      delegation_id: EXAMPLE.delegationId,
      since: "2026-10-22T00:00:00.000Z",
      capabilities: USAGE_EXAMPLE_ROWS,
      unused: ["svc_api:passports:read"],
      derived_delegations: 2,
    },
  });

export const SimulateNarrowingRequest = z
  .object({
    capabilities: z
      .array(Capability)
      .max(100)
      .describe("The narrower grant to replay the delegation's calls against (an empty list refuses every call)"),
    since: z
      .string()
      .datetime({ offset: true })
      .optional()
      .describe("RFC 3339 date-time to replay from (default: 30 days ago), taken back to the start of its UTC day"),
  })
  .strict()
  .meta({
    id: "SimulateNarrowingRequest",
    example: { capabilities: ["svc_api:agents:invoke"], since: "2026-10-22T00:00:00.000Z" },
  });

export const SimulatedRefusal = z
  .object({
    provenance_id: z.string().describe("The provenance record of the call"),
    operation: z.string(),
    capability: z.string(),
    timestamp: Timestamp,
  })
  .meta({
    id: "SimulatedRefusal",
    example: {
      provenance_id: EXAMPLE.recordId,
      operation: "GET /v1/passports/{did}",
      capability: "svc_api:passports:read",
      timestamp: EXAMPLE.createdAt,
    },
  });

export const SimulateNarrowingResponse = z
  .object({
    since: Timestamp.describe("Replayed from: the start of the UTC day of the `since` asked for"),
    would_refuse: z.number().int().min(0).describe("Calls let through that the proposed grant would have refused"),
    would_allow: z.number().int().min(0).describe("Calls let through that the proposed grant would still allow"),
    examples: z.array(SimulatedRefusal).max(20).describe("Up to 20 of the calls it would refuse, newest first"),
  })
  .meta({
    id: "SimulateNarrowingResponse",
    example: {
      since: "2026-10-22T00:00:00.000Z",
      would_refuse: 1,
      would_allow: 412,
      examples: [
        {
          provenance_id: EXAMPLE.recordId,
          operation: "GET /v1/passports/{did}",
          capability: "svc_api:passports:read",
          timestamp: EXAMPLE.createdAt,
        },
      ],
    },
  });
